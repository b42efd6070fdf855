package io.rmqgw.codec.frame;

import static io.rmqgw.codec.frame.RemotingFixtures.bytes;
import static io.rmqgw.codec.frame.RemotingFixtures.decodeWithRocketMq;
import static io.rmqgw.codec.frame.RemotingFixtures.pooled;
import static io.rmqgw.codec.frame.RemotingFixtures.readAll;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Property-style round trips with a fixed seed: random headers and bodies, encoded by
 * {@link Frames#encode}, split at random, decoded by {@link FrameDecoder} and
 * {@link HeaderCodec#decodeHeader} and by rocketmq-remoting, must come back as they went in.
 */
class FrameRoundTripTest {

    static final ByteBufAllocator ALLOC = PooledByteBufAllocator.DEFAULT;
    static final int CASES = 400;
    static final String SPECIAL = "\"\\/\b\f\n\r\t\u0001\u0002:,{}[]";

    @ParameterizedTest
    @EnumSource(SerializeType.class)
    void randomHeadersSurviveEncodeSplitDecode(SerializeType type) throws Exception {
        Random random = new Random(type.ordinal() * 7919L + 17);
        List<RemotingHeader> headers = new ArrayList<>();
        List<byte[]> bodies = new ArrayList<>();
        List<byte[]> stream = new ArrayList<>();
        for (int i = 0; i < CASES; i++) {
            RemotingHeader header = randomHeader(random, type);
            byte[] body = new byte[random.nextInt(4) == 0 ? 0 : random.nextInt(2000)];
            random.nextBytes(body);
            headers.add(header);
            bodies.add(body);
            ByteBuf frame = Frames.encode(ALLOC, header, type, body.length == 0 && random.nextBoolean() ? null : pooled(body));
            try {
                byte[] wire = bytes(frame);
                stream.add(wire);
                assertSameAsRocketMq(header, body, decodeWithRocketMq(wire), type);
            } finally {
                frame.release();
            }
        }

        byte[] all = RemotingFixtures.concat(stream.toArray(new byte[0][]));
        EmbeddedChannel channel = RemotingFixtures.decoderChannel();
        List<RemotingFrame> frames = new ArrayList<>();
        for (int at = 0; at < all.length; ) {
            int n = Math.min(all.length - at, 1 + random.nextInt(3000));
            ByteBuf chunk = ALLOC.directBuffer(n);
            chunk.writeBytes(all, at, n);
            at += n;
            channel.writeInbound(chunk);
            frames.addAll(readAll(channel));
        }
        try {
            assertEquals(CASES, frames.size());
            for (int i = 0; i < CASES; i++) {
                RemotingFrame frame = frames.get(i);
                RemotingHeader expected = headers.get(i);
                assertEquals(type, frame.encoding());
                assertEquals(expected.code(), frame.code(), "case " + i);
                assertEquals(expected.opaque(), frame.opaque(), "case " + i);
                assertEquals(expected.flag(), frame.flag(), "case " + i);
                assertEquals(expected.language(), frame.language(), "case " + i);
                assertEquals(expected.version(), frame.version(), "case " + i);
                assertEquals(expected, HeaderCodec.decodeHeader(frame), "case " + i);
                assertArrayEquals(bodies.get(i), bytes(frame.bodySlice()), "case " + i);
                // re-encoding a decoded header gives the same bytes
                ByteBuf again = Frames.withHeader(ALLOC, frame, HeaderCodec.decodeHeader(frame), type);
                try {
                    assertArrayEquals(stream.get(i), bytes(again), "case " + i);
                } finally {
                    again.release();
                }
            }
        } finally {
            frames.forEach(RemotingFrame::release);
            assertFalse(channel.finishAndReleaseAll());
        }
    }

    static void assertSameAsRocketMq(RemotingHeader header, byte[] body, RemotingCommand cmd, SerializeType type) {
        assertEquals(type, cmd.getSerializeTypeCurrentRPC());
        assertEquals(header.code(), cmd.getCode());
        assertEquals(header.language(), cmd.getLanguage());
        assertEquals(header.version(), cmd.getVersion());
        assertEquals(header.opaque(), cmd.getOpaque());
        assertEquals(header.flag(), cmd.getFlag());
        assertEquals(header.remark(), cmd.getRemark());
        Map<String, String> expected = header.extFields() == null ? null : new HashMap<>(header.extFields());
        assertEquals(expected, cmd.getExtFields());
        assertArrayEquals(body.length == 0 ? null : body, cmd.getBody());
    }

    /**
     * A header both encodings carry exactly: binary code and version are shorts; the binary encoding
     * cannot tell an empty remark or map from none, and rocketmq reads an empty binary string as null,
     * so remarks, keys and values are null or non-empty and maps are null or non-empty.
     */
    static RemotingHeader randomHeader(Random random, SerializeType type) {
        boolean binary = type == SerializeType.ROCKETMQ;
        int code = binary ? (short) random.nextInt() : random.nextInt(4) == 0 ? random.nextInt() : random.nextInt(400);
        int version = binary ? (short) random.nextInt() : random.nextInt(500);
        LanguageCode[] languages = LanguageCode.values();
        LanguageCode language = languages[random.nextInt(languages.length)];
        String remark = random.nextInt(3) == 0 ? null : randomString(random, 1, 200);
        Map<String, String> ext = null;
        if (random.nextInt(4) != 0) {
            ext = new LinkedHashMap<>();
            for (int n = 1 + random.nextInt(12); n > 0; n--) {
                ext.put(randomString(random, 1, 30), randomString(random, 1, 300));
            }
        }
        return new RemotingHeader(code, language, version, random.nextInt(), random.nextInt(), remark, ext);
    }

    static String randomString(Random random, int min, int max) {
        int length = min + random.nextInt(max - min + 1);
        StringBuilder s = new StringBuilder(length);
        while (s.length() < length) {
            switch (random.nextInt(6)) {
                case 0 -> s.append((char) ('a' + random.nextInt(26)));
                case 1 -> s.append(SPECIAL.charAt(random.nextInt(SPECIAL.length())));
                case 2 -> s.append((char) (0x20 + random.nextInt(0x5F)));
                case 3 -> s.append((char) (0xA0 + random.nextInt(0xD7FF - 0xA0)));   // BMP below the surrogates
                case 4 -> s.appendCodePoint(0x10000 + random.nextInt(0x10FFFF - 0x10000)); // a surrogate pair
                default -> s.append((char) random.nextInt(0x20));                        // control characters
            }
        }
        return s.toString();
    }
}
