package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.ALLOC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.Legacy497.Fields;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Assume;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * {@link ExtFieldInPlace#find} on send answers written by rocketmq-remoting 5.4.0 and 4.9.7, in both encodings:
 * whatever it locates is the value rocketmq-remoting decodes for the key, and new bytes of the same length put
 * there are what it decodes next (so a rewrite in place is a rewrite of that entry and of nothing else); a plain
 * value is always found, except in JSON when a key ending in {@code \"msgId} (escaped) makes it unsure.
 */
class ExtFieldInPlaceProperties {

    private static final byte[] MSG_ID = "msgId".getBytes(StandardCharsets.US_ASCII);

    @Property(tries = 500)
    void locatesExactlyTheDecodedValueFrom540(@ForAll("answers") Fields answer, @ForAll boolean binary) throws Exception {
        SerializeType type = binary ? SerializeType.ROCKETMQ : SerializeType.JSON;
        check(HeaderRoundTripProperties.encode540(answer, type), answer, binary);
    }

    @Property(tries = 300)
    void locatesExactlyTheDecodedValueFrom497(@ForAll("answers") Fields answer) throws Exception {
        check(Legacy497.encode(answer, "JSON"), answer, false);
    }

    @Example
    void aRepeatedKeyIsNotCertain() {
        assertNotCertain("\"msgId\":\"AA\",\"msgId\":\"BB\"");
    }

    @Example
    void anEscapedKeyIsNotCertain() {
        assertNotCertain("\"msg\\u0049d\":\"AA\"");
    }

    private static void assertNotCertain(String extFields) {
        String header = "{\"code\":0,\"extFields\":{" + extFields + "},\"flag\":1,\"language\":\"JAVA\","
            + "\"opaque\":1,\"serializeTypeCurrentRPC\":\"JSON\",\"version\":0}";
        assertEquals(ExtFieldInPlace.NOT_FOUND, findIn(HeaderFixtures.rawFrame(SerializeType.JSON,
            header.getBytes(StandardCharsets.UTF_8), new byte[0])));
    }

    private static long findIn(byte[] frameBytes) {
        RemotingFrame frame = FrameDecoder.parse(ALLOC.buffer().writeBytes(frameBytes));
        try {
            return ExtFieldInPlace.find(frame, MSG_ID);
        } finally {
            frame.release();
        }
    }

    private static void check(byte[] head, Fields answer, boolean binary) throws Exception {
        RemotingFrame frame = FrameDecoder.parse(ALLOC.buffer().writeBytes(head));
        try {
            long found = ExtFieldInPlace.find(frame, MSG_ID);
            String msgId = answer.ext() == null ? null : answer.ext().get("msgId");
            boolean plain = msgId != null && msgId.chars().allMatch(c -> c > 0x20 && c < 0x7F && c != '"' && c != '\\');
            boolean unsure = !binary && answer.ext().keySet().stream().anyMatch(k -> k.endsWith("\"msgId"));
            if (plain && !unsure) {
                assertNotEquals(ExtFieldInPlace.NOT_FOUND, found, "a plain msgId is found");
            }
            if (found == ExtFieldInPlace.NOT_FOUND) {
                return;
            }
            ByteBuf content = frame.content();
            Fields before = decodedOrNull(content);
            // a key with a quote in it is written by fastjson so that it cannot read it back: no broker sends that
            Assume.that(before != null);
            int at = ExtFieldInPlace.index(found);
            int length = ExtFieldInPlace.length(found);
            if (length == 0) {
                // an empty value: rocketmq-remoting reads an empty binary value as absent
                assertEquals("", Objects.requireNonNullElse(before.ext().get("msgId"), ""));
                return;
            }
            assertEquals(before.ext().get("msgId"), content.toString(at, length, StandardCharsets.UTF_8),
                "the located bytes are the value");
            byte[] replacement = new byte[length];
            Arrays.fill(replacement, (byte) 'F');
            content.setBytes(at, replacement);
            Fields after = HeaderRoundTripProperties.decode540(HeaderFixtures.bytes(content));
            Map<String, String> expected = new HashMap<>(before.ext());
            expected.put("msgId", "F".repeat(length));
            assertEquals(expected, after.ext(), "only the msgId changed");
            assertEquals(before.remark(), after.remark());
        } finally {
            frame.release();
        }
    }

    private static Fields decodedOrNull(ByteBuf frame) {
        try {
            return HeaderRoundTripProperties.decode540(HeaderFixtures.bytes(frame));
        } catch (Exception e) {
            return null;
        }
    }

    @Provide
    Arbitrary<Fields> answers() {
        Arbitrary<String> id = Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.strings().withChars("0123456789ABCDEF").ofLength(32)),
            Tuple.of(2, Arbitraries.strings().withChars("0123456789ABCDEF,").ofMinLength(1).ofMaxLength(100)),
            Tuple.of(2, HeaderRoundTripProperties.text(true)),
            Tuple.of(1, Arbitraries.of("", "a\"b", "a\\b", "\"msgId\":\"", "\\\"msgId\\\":\\\"")));
        Arbitrary<String> key = Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.of("queueId", "queueOffset", "transactionId", "MSG_REGION", "TRACE_ON", "batchUniqId")),
            Tuple.of(1, Arbitraries.of("msgIdx", "xmsgId", "a\"msgId", "msgId\"", "\"msgId\":\"")),
            Tuple.of(1, HeaderRoundTripProperties.text(true)));
        Arbitrary<Map<String, String>> ext = Combinators.combine(id.injectNull(0.15),
                Arbitraries.maps(key, Arbitraries.frequencyOf(Tuple.of(3, Arbitraries.strings().alpha().ofMaxLength(12)),
                    Tuple.of(1, Arbitraries.of("\"msgId\":\"", "x\\\"msgId\":\"", "msgId")),
                    Tuple.of(1, HeaderRoundTripProperties.text(true)))).ofMaxSize(5))
            .as((msgId, rest) -> {
                Map<String, String> m = new HashMap<>(rest);
                m.remove("msgId");
                if (msgId != null) {
                    m.put("msgId", msgId);
                }
                return m;
            });
        Arbitrary<String> remark = Arbitraries.frequencyOf(Tuple.of(1, Arbitraries.of("\"msgId\":\"AAAA\"", "x")),
            Tuple.of(1, HeaderRoundTripProperties.text(true))).injectNull(0.6);
        return Combinators.combine(Arbitraries.integers(), ext, remark)
            .as((opaque, e, r) -> new Fields(ResponseCode.SUCCESS, "JAVA", 399, opaque, 1, r, e));
    }
}
