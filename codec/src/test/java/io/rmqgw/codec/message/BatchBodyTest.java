package io.rmqgw.codec.message;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.junit.jupiter.api.Test;

/** The batch body layout, read and written, against rocketmq-common's own encoder and decoder. */
class BatchBodyTest {

    private static final String DEST = "RMQGW_DESTINATIONS";

    private static Message message(String topic, String body, int flag, String... props) {
        Message m = new Message(topic, body.getBytes(StandardCharsets.UTF_8));
        m.setFlag(flag);
        for (int i = 0; i < props.length; i += 2) {
            m.putUserProperty(props[i], props[i + 1]);
        }
        return m;
    }

    @Test
    void readsWhatRocketmqEncodes() {
        List<Message> batch = List.of(message("T", "first", 0, DEST, "A,B", "k", "v"),
            message("T", "", 7, "émoji", "✓"), message("T", "third", 1));
        ByteBuf body = Unpooled.wrappedBuffer(MessageDecoder.encodeMessages(batch));
        List<BatchBody.Entry> entries = BatchBody.read(body);
        assertEquals(3, entries.size());
        for (int i = 0; i < 3; i++) {
            BatchBody.Entry e = entries.get(i);
            assertEquals(batch.get(i).getFlag(), e.flag());
            assertArrayEquals(batch.get(i).getBody(), ByteBufUtil.getBytes(body, e.bodyIndex(), e.bodyLength()));
            assertEquals(MessageDecoder.messageProperties2String(batch.get(i).getProperties()),
                body.toString(e.propertiesIndex(), e.propertiesLength(), StandardCharsets.UTF_8));
        }
        assertEquals("A,B", MessageProperties.value(body, entries.get(0).propertiesIndex(),
            entries.get(0).propertiesLength(), DEST));
        assertEquals("✓", MessageProperties.value(body, entries.get(1).propertiesIndex(),
            entries.get(1).propertiesLength(), "émoji"));
        assertNull(MessageProperties.value(body, entries.get(2).propertiesIndex(), entries.get(2).propertiesLength(), DEST));
    }

    @Test
    void writingWithoutAPropertyKeepsEveryOtherByte() throws Exception {
        String props = "KEYS\u0001k1\u0002" + DEST + "\u0001TopicA,TopicB\u0002TAGS\u0001t\u0002UNIQ_KEY\u0001AB\u0002";
        ByteBuf body = entry(3, "payload", props);
        ByteBuf out = Unpooled.buffer();
        BatchBody.writeWithout(body, BatchBody.read(body).get(0), DEST, out);
        ByteBuf expected = entry(3, "payload", "KEYS\u0001k1\u0002TAGS\u0001t\u0002UNIQ_KEY\u0001AB\u0002");
        assertArrayEquals(ByteBufUtil.getBytes(expected), ByteBufUtil.getBytes(out));
        // and rocketmq reads it back with the property gone and the rest as it was
        Message decoded = MessageDecoder.decodeMessages(ByteBuffer.wrap(ByteBufUtil.getBytes(out))).get(0);
        assertNull(decoded.getProperty(DEST));
        assertEquals("k1", decoded.getKeys());
        assertEquals("t", decoded.getTags());
        assertEquals(3, decoded.getFlag());
        assertEquals("payload", new String(decoded.getBody(), StandardCharsets.UTF_8));
    }

    @Test
    void removesTheLastPairWithoutSeparatorAndEveryRepeat() {
        ByteBuf last = Unpooled.copiedBuffer("A\u0001x\u0002" + DEST + "\u0001T", StandardCharsets.UTF_8);
        ByteBuf out = Unpooled.buffer();
        MessageProperties.writeWithout(last, 0, last.readableBytes(), DEST, out);
        assertEquals("A\u0001x\u0002", out.toString(StandardCharsets.UTF_8));
        ByteBuf twice = Unpooled.copiedBuffer(DEST + "\u0001T1\u0002B\u0001y\u0002" + DEST + "\u0001T2\u0002",
            StandardCharsets.UTF_8);
        assertEquals("T2", MessageProperties.value(twice, 0, twice.readableBytes(), DEST), "the last value counts");
        out.clear();
        MessageProperties.writeWithout(twice, 0, twice.readableBytes(), DEST, out);
        assertEquals("B\u0001y\u0002", out.toString(StandardCharsets.UTF_8));
        // a key that merely starts like another is kept
        ByteBuf prefix = Unpooled.copiedBuffer(DEST + "X\u0001v\u0002", StandardCharsets.UTF_8);
        out.clear();
        MessageProperties.writeWithout(prefix, 0, prefix.readableBytes(), DEST, out);
        assertEquals(DEST + "X\u0001v\u0002", out.toString(StandardCharsets.UTF_8));
    }

    @Test
    void writeBuildsTheEntryRocketmqEncodes() {
        Message m = message("T", "single", 5, "a", "1");
        String props = MessageDecoder.messageProperties2String(m.getProperties());
        ByteBuf out = Unpooled.buffer();
        BatchBody.write(5, Unpooled.copiedBuffer("single", StandardCharsets.UTF_8),
            Unpooled.copiedBuffer(props, StandardCharsets.UTF_8), out);
        assertArrayEquals(MessageDecoder.encodeMessage(m), ByteBufUtil.getBytes(out));
    }

    @Test
    void malformedBodiesNameTheEntry() {
        ByteBuf good = entry(0, "x", "a\u0001b\u0002");
        ByteBuf truncated = Unpooled.wrappedBuffer(good.copy(0, good.readableBytes() - 1));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BatchBody.read(truncated));
        assertTrue(e.getMessage().contains("batch message 0"), e.getMessage());
        ByteBuf wrongBody = good.copy();
        wrongBody.setInt(16, 1000);
        e = assertThrows(IllegalArgumentException.class, () -> BatchBody.read(wrongBody));
        assertTrue(e.getMessage().contains("body length 1000"), e.getMessage());
        ByteBuf second = Unpooled.wrappedBuffer(good.copy(), Unpooled.wrappedBuffer(new byte[5]));
        e = assertThrows(IllegalArgumentException.class, () -> BatchBody.read(second));
        assertTrue(e.getMessage().contains("batch message 1 is truncated"), e.getMessage());
    }

    /** One entry as MessageDecoder.encodeMessage lays it out. */
    static ByteBuf entry(int flag, String body, String properties) {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        byte[] p = properties.getBytes(StandardCharsets.UTF_8);
        ByteBuf out = Unpooled.buffer();
        out.writeInt(20 + b.length + 2 + p.length).writeInt(0).writeInt(0).writeInt(flag).writeInt(b.length)
            .writeBytes(b).writeShort(p.length).writeBytes(p);
        return out;
    }
}
