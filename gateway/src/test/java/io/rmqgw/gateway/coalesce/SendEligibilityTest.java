package io.rmqgw.gateway.coalesce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendRequestHeader;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Which single sends travel in a coalesced batch, and why the others go on their own. */
class SendEligibilityTest {

    private static final String PLAIN = "KEYS\u0001k1\u0002UNIQ_KEY\u0001AC1100010000\u0002WAIT\u0001true\u0002TAGS\u0001t\u0002";

    /** The pass reason of a SEND_MESSAGE_V2 built from the defaults, changed by {@code change}. */
    private static String reason(Consumer<Map<String, String>> change, int bodyLength, int maxBytes) {
        Map<String, String> ext = new LinkedHashMap<>();
        ext.put("a", "pg");
        ext.put("b", "Orders");
        ext.put("c", "TBW102");
        ext.put("d", "4");
        ext.put("e", "2");
        ext.put("f", "0");
        ext.put("g", "1700000000000");
        ext.put("h", "0");
        ext.put("i", PLAIN);
        ext.put("j", "0");
        ext.put("k", "false");
        change.accept(ext);
        RemotingHeader h = new RemotingHeader(RequestCode.SEND_MESSAGE_V2, LanguageCode.JAVA, 0, 7, 0, null, ext);
        ByteBuf wire = Frames.encode(ByteBufAllocator.DEFAULT, h, SerializeType.ROCKETMQ, Unpooled.wrappedBuffer(new byte[bodyLength]));
        RemotingFrame frame = FrameDecoder.parse(wire);
        try {
            CommandHeader decoded = HeaderTranscoder.decodeRequest(frame);
            try {
                SendRequestHeader send = (SendRequestHeader) decoded;
                ByteBuf props = SendEligibility.propertiesBytes(send.properties());
                return SendEligibility.passReason(false, send.batch(), send, props, frame.bodyLength(), maxBytes);
            } finally {
                decoded.release();
            }
        } finally {
            frame.release();
        }
    }

    @Test
    void aPlainSmallSendIsCoalesced() {
        assertNull(reason(e -> { }, 128, 1024));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "i|KEYS\u0001k\u0002UNIQ_KEY\u0001X\u0002DELAY\u00013\u0002|delayed",
        "i|UNIQ_KEY\u0001X\u0002TIMER_DELIVER_MS\u00011700000000000\u0002|delayed",
        "i|UNIQ_KEY\u0001X\u0002TRAN_MSG\u0001true\u0002|transactional",
        "f|4|transactional",
        "f|1|sys_flag",
        "b|%RETRY%cg|retry_topic",
        "b|%DLQ%cg|retry_topic",
        "j|2|reconsume",
        "k|true|reconsume",
        "i|UNIQ_KEY\u0001X\u0002WAIT\u0001false\u0002|no_wait_store",
        "i|KEYS\u0001k\u0002WAIT\u0001true\u0002|no_unique_key",
        "e|-1|no_queue",
        "m|true|batch",
        "AccessKey|rocketmq2|signed",
    })
    void sendsTheBrokerWouldTreatDifferentlyInABatchGoOnTheirOwn(String key, String value, String reason) {
        assertEquals(reason, reason(e -> e.put(key, value), 16, 1024));
    }

    @Test
    void aDelayLevelOfZeroIsNoDelay() {
        assertNull(reason(e -> e.put("i", PLAIN + "DELAY\u00010\u0002"), 16, 1024));
    }

    @Test
    void aSendLargerThanMaxBytesAsABatchEntryGoesOnItsOwn() {
        int props = PLAIN.length();
        assertNull(reason(e -> { }, 1024 - SendEligibility.ENTRY_OVERHEAD - props, 1024));
        assertEquals("too_large", reason(e -> { }, 1025 - SendEligibility.ENTRY_OVERHEAD - props, 1024));
    }

    @Test
    void onewayGoesOnItsOwn() {
        assertEquals("oneway", SendEligibility.passReason(true, false, null, Unpooled.EMPTY_BUFFER, 1, 1024));
    }
}
