package io.rmqgw.codec.header;

import static io.rmqgw.codec.header.HeaderFixtures.ALLOC;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.Legacy497.Fields;
import io.rmqgw.codec.name.NameValidator;
import java.util.HashMap;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * {@link SendRequestHeader#namesValidInFrame}, the send's name check without a typed header, says "valid"
 * exactly when the typed header's checks pass (as {@code NameGuard.checkSend} applies them: the topic with the
 * send rules, the group when there is one), for send headers written by rocketmq-remoting 5.4.0 and 4.9.7:
 * names good and bad (illegal, escaped and non-ASCII characters, too long, empty, retry and DLQ topics, system
 * topics sends may not name) or absent.
 */
class SendNamesInFrameProperties {

    private static final NameValidator NAMES = NameValidator.DEFAULT;
    private static final NameValidator TIGHT = new NameValidator(16, 12, 20);

    @Property(tries = 600)
    void sameVerdictAsTheTypedHeaderFrom540(@ForAll("sends") Fields send) throws Exception {
        check(HeaderRoundTripProperties.encode540(send, SerializeType.JSON), send.code());
    }

    @Property(tries = 600)
    void sameVerdictAsTheTypedHeaderFrom497(@ForAll("sends") Fields send) throws Exception {
        check(Legacy497.encode(send, "JSON"), send.code());
    }

    /** Binary frames and the long-named SEND_MESSAGE are always left to the typed header. */
    @Property(tries = 200)
    void binaryAndLongNamedSendsAreLeftToTheTypedHeader(@ForAll("sends") Fields send) {
        byte[] binary = HeaderRoundTripProperties.encode540(send, SerializeType.ROCKETMQ);
        RemotingFrame frame = FrameDecoder.parse(ALLOC.buffer().writeBytes(binary));
        try {
            assertFalse(SendRequestHeader.namesValidInFrame(frame, NAMES));
        } finally {
            frame.release();
        }
        Fields v1 = new Fields(RequestCode.SEND_MESSAGE, send.language(), send.version(), send.opaque(), send.flag(),
            send.remark(), send.ext());
        frame = FrameDecoder.parse(ALLOC.buffer().writeBytes(HeaderRoundTripProperties.encode540(v1, SerializeType.JSON)));
        try {
            assertFalse(SendRequestHeader.namesValidInFrame(frame, NAMES));
        } finally {
            frame.release();
        }
    }

    private static void check(byte[] jsonHead, int code) {
        for (NameValidator names : new NameValidator[] {NAMES, TIGHT}) {
            RemotingFrame frame = FrameDecoder.parse(ALLOC.buffer().writeBytes(jsonHead));
            try {
                boolean inFrame = SendRequestHeader.namesValidInFrame(frame, names);
                CommandHeader typed = HeaderTranscoder.decodeRequest(frame);
                try {
                    SendRequestHeader h = (SendRequestHeader) typed;
                    boolean valid = h.checkTopic(names).isValid()
                        && (h.producerGroup() == null || h.checkGroup(names).isValid());
                    assertEquals(valid, inFrame, () -> "topic " + h.topic() + ", group " + h.producerGroup());
                } finally {
                    typed.release();
                }
            } finally {
                frame.release();
            }
        }
    }

    @Provide
    Arbitrary<Fields> sends() {
        Arbitrary<String> name = Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.strings().withChars("abcXYZ019_-%|").ofMinLength(1).ofMaxLength(30)),
            Tuple.of(2, HeaderRoundTripProperties.text(true)),
            Tuple.of(1, Arbitraries.of("", "%RETRY%group_a", "%DLQ%group_a", "SCHEDULE_TOPIC_XXXX", "SELF_TEST_TOPIC",
                "RMQ_SYS_TRANS_HALF_TOPIC", "TopicTest", "please_rename_unique_group_name")),
            Tuple.of(1, Arbitraries.strings().withChars("ab_").ofLength(128)),
            Tuple.of(1, Arbitraries.strings().withChars("ab_").ofLength(256)));
        Arbitrary<String> other = HeaderRoundTripProperties.text(true);
        Arbitrary<Map<String, String>> ext = Combinators.combine(name.injectNull(0.1), name.injectNull(0.1),
            Arbitraries.maps(Arbitraries.of("c", "d", "e", "i", "n", "bname", "topic", "producerGroup"), other).ofMaxSize(6))
            .as((group, topic, rest) -> {
                Map<String, String> m = new HashMap<>(rest);
                if (group != null) {
                    m.put("a", group);
                }
                if (topic != null) {
                    m.put("b", topic);
                }
                return m;
            });
        return Combinators.combine(Arbitraries.of(RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE),
            Arbitraries.integers(), ext)
            .as((code, opaque, e) -> new Fields(code, "JAVA", 399, opaque, 0, null, e));
    }
}
