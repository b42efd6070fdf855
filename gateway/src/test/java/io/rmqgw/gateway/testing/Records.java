package io.rmqgw.gateway.testing;

import io.rmqgw.testing.Wire;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;

/** Stored message records (pull, query, view and check-back bodies) written and read by rocketmq-common. */
public final class Records {

    private Records() {
    }

    /** One stored record of a message stored by {@code storeHost} at {@code commitLogOffset}. */
    public static byte[] record(String topic, String body, InetSocketAddress storeHost, long commitLogOffset, long queueOffset)
        throws Exception {
        MessageExt m = new MessageExt();
        m.setTopic(topic);
        m.setBody(Wire.utf8(body));
        m.setQueueId(1);
        m.setFlag(0);
        m.setQueueOffset(queueOffset);
        m.setCommitLogOffset(commitLogOffset);
        m.setSysFlag(0);
        m.setBornTimestamp(1_700_000_000_000L);
        m.setBornHost(new InetSocketAddress("127.0.0.1", 54321));
        m.setStoreTimestamp(1_700_000_000_100L);
        m.setStoreHost(storeHost);
        m.setReconsumeTimes(0);
        m.setPreparedTransactionOffset(0);
        m.setKeys("key-" + queueOffset);
        return MessageDecoder.encode(m, false);
    }

    public static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] p : parts) {
            length += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(length);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    /** Every record of a body, as a client decodes them. */
    public static List<MessageExt> decode(byte[] body) {
        List<MessageExt> out = new ArrayList<>(MessageDecoder.decodes(ByteBuffer.wrap(body)));
        return out;
    }
}
