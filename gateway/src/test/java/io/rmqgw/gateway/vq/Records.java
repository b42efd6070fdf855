package io.rmqgw.gateway.vq;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;

/** Stored records as a broker's pull answer carries them, written by rocketmq-common's own encoder. */
final class Records {

    static final String TOPIC = "orders";

    private Records() {
    }

    /** The commit-log offset the fake broker gives the message at {@code offset} of {@code queue}. */
    static long commitLogOffset(RealQueue queue, long offset) {
        return queue.queueId() * 1_000_000_000L + offset * 1000;
    }

    /** The stored record of the message at {@code offset} of {@code queue}, with a body of {@code bodyLength} bytes. */
    static byte[] record(RealQueue queue, long offset, int bodyLength, int reconsumeTimes) {
        MessageExt m = new MessageExt();
        m.setTopic(TOPIC);
        byte[] body = new byte[bodyLength];
        byte[] text = (queue + "@" + offset).getBytes(StandardCharsets.UTF_8);
        System.arraycopy(text, 0, body, 0, Math.min(text.length, body.length));
        Arrays.fill(body, Math.min(text.length, body.length), body.length, (byte) 'x');
        m.setBody(body);
        m.setBodyCRC(0x1234);
        m.setQueueId(queue.queueId());
        m.setQueueOffset(offset);
        m.setCommitLogOffset(commitLogOffset(queue, offset));
        m.setBornTimestamp(1_700_000_000_000L);
        m.setStoreTimestamp(1_700_000_000_001L);
        m.setReconsumeTimes(reconsumeTimes);
        m.setBornHost(new InetSocketAddress("127.0.0.1", 50000));
        m.setStoreHost(new InetSocketAddress("127.0.0.1", 10911));
        m.putUserProperty("origin", queue + "@" + offset);
        try {
            return MessageDecoder.encode(m, false);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static byte[] record(RealQueue queue, long offset) {
        return record(queue, offset, 16, 0);
    }

    /** A pull answer's body: the records of {@code offsets} of {@code queue}, concatenated. */
    static ByteBuf body(ByteBufAllocator alloc, RealQueue queue, long... offsets) {
        ByteBuf out = alloc.buffer();
        for (long offset : offsets) {
            out.writeBytes(record(queue, offset));
        }
        return out;
    }
}
