package io.rmqgw.codec.name;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.regex.Pattern;
import org.apache.rocketmq.common.topic.TopicValidator;
import org.junit.jupiter.api.Test;

/** The bitmap name check against the regex it replaces and against RocketMQ 5.4's own TopicValidator. */
class NameValidatorTest {

    static final Pattern REGEX = Pattern.compile("^[%|a-zA-Z0-9_-]+$");
    /** The limits of a RocketMQ 5.4 broker, to compare with its TopicValidator. */
    static final NameValidator BROKER_54 = new NameValidator(127, 120, 255);
    static final String ALPHABET = "azAZ09%|-_.:/ \t\u00e9\u4e2d\u007f\u0000+#~!$";

    @Test
    void everyCharacterAgreesWithTheRegexAndTopicValidator() {
        for (int c = 0; c <= 0xFFFF; c++) {
            String s = String.valueOf((char) c);
            boolean legal = NameValidator.isLegal(c);
            assertEquals(REGEX.matcher(s).matches(), legal, "char " + c);
            assertEquals(TopicValidator.isTopicOrGroupIllegal(s), !legal, "char " + c);
        }
        assertFalse(NameValidator.isLegal(-1));
        assertFalse(NameValidator.isLegal(128 + '%'), "no wrap-around past 127");
    }

    /** Property: over random strings the bitmap, the regex, TopicValidator and the byte path all agree. */
    @Test
    void randomStringsAgreeWithTheRegex() {
        Random random = new Random(42);
        // unpooled heap: not tracked by the (PARANOID) leak detector, which would record every getByte
        ByteBuf buf = io.netty.buffer.Unpooled.buffer(1024);
        try {
            for (int i = 0; i < 20_000; i++) {
                String s = randomName(random);
                boolean regex = REGEX.matcher(s).matches();
                assertEquals(regex, !s.isEmpty() && NameValidator.firstIllegal(s) < 0, s);
                NameCheck topic = NameValidator.DEFAULT.checkTopic(s);
                NameCheck group = NameValidator.DEFAULT.checkGroup(s);
                int topicMax = s.startsWith("%RETRY%") || s.startsWith("%DLQ%") ? 255 : 127;
                assertEquals(regex && s.length() <= topicMax, topic.isValid(), s);
                assertEquals(regex && s.length() <= 255, group.isValid(), s);
                buf.clear();
                int n = buf.writeCharSequence(s, StandardCharsets.UTF_8);
                assertEquals(topic, NameValidator.DEFAULT.checkTopic(buf, 0, n), "bytes: " + s);
                assertEquals(group, NameValidator.DEFAULT.checkGroup(buf, 0, n), "bytes: " + s);
                assertEquals(NameValidator.DEFAULT.checkSendTopic(s), NameValidator.DEFAULT.checkSendTopic(buf, 0, n), s);
                // the 5.4 broker's own validator: same verdict and the same words
                TopicValidator.ValidateResult t = TopicValidator.validateTopic(s);
                NameCheck t54 = BROKER_54.checkTopic(s);
                assertEquals(t.isValid(), t54.isValid(), s);
                if (!t.isValid()) {
                    assertEquals(t.getRemark(), BROKER_54.topicRemark(t54, s), s);
                }
                TopicValidator.ValidateResult g = TopicValidator.validateGroup(s);
                NameCheck g54 = BROKER_54.checkGroup(s);
                assertEquals(g.isValid(), g54.isValid(), s);
                if (!g.isValid()) {
                    assertEquals(g.getRemark(), BROKER_54.groupRemark(g54, s), s);
                }
            }
        } finally {
            buf.release();
        }
    }

    @Test
    void reasonsInTheBrokersOrder() {
        NameValidator v = NameValidator.DEFAULT;
        assertEquals(NameCheck.EMPTY, v.checkTopic(null));
        assertEquals(NameCheck.EMPTY, v.checkTopic(""));
        assertEquals(NameCheck.EMPTY, v.checkTopic(" \t\u2003"), "blank, as StringUtils.isBlank sees it");
        assertEquals(NameCheck.ILLEGAL_CHARACTER, v.checkTopic("a b"));
        assertEquals(NameCheck.ILLEGAL_CHARACTER, v.checkTopic("topic.with.dots"));
        assertEquals(NameCheck.ILLEGAL_CHARACTER, v.checkTopic("x".repeat(300) + "!"), "characters before length");
        assertEquals(NameCheck.TOO_LONG, v.checkTopic("x".repeat(128)));
        assertEquals(NameCheck.VALID, v.checkTopic("x".repeat(127)));
        assertEquals(NameCheck.VALID, v.checkGroup("g".repeat(255)));
        assertEquals(NameCheck.TOO_LONG, v.checkGroup("g".repeat(256)));
        assertEquals(NameCheck.VALID, v.checkTopic("%|-_09AZaz"));
        assertEquals(NameCheck.EMPTY, v.checkTopic(io.netty.buffer.Unpooled.EMPTY_BUFFER, -1, -1), "absent field");
    }

    @Test
    void retryAndDlqNamesAreAcceptedAsBrokersAcceptThem() {
        NameValidator v = NameValidator.DEFAULT;
        String group = "g".repeat(120);
        assertEquals(NameCheck.VALID, v.checkTopic("%RETRY%" + group));
        assertEquals(NameCheck.VALID, v.checkTopic("%DLQ%" + group));
        assertEquals(NameCheck.VALID, v.checkSendTopic("%RETRY%please_rename_unique_group_name"));
        assertEquals(NameCheck.VALID, v.checkTopic("%RETRY%" + "g".repeat(248)), "255 for retry and DLQ topics");
        assertEquals(NameCheck.TOO_LONG, v.checkTopic("%RETRY%" + "g".repeat(249)));
        assertEquals(NameCheck.TOO_LONG, v.checkTopic("%RETRY" + "g".repeat(249)), "no prefix, no exception");
        assertEquals(NameCheck.VALID, v.checkGroup("%SYS%group"));
        assertTrue(TopicValidator.validateTopic("%RETRY%" + "g".repeat(248)).isValid());
    }

    @Test
    void sendsToSystemTopicsAreForbiddenLikeTheBrokerForbidsThem() {
        assertEquals(TopicValidator.getNotAllowedSendTopicSet(), new java.util.HashSet<>(NameValidator.sendForbiddenTopics()));
        for (String topic : TopicValidator.getNotAllowedSendTopicSet()) {
            assertEquals(NameCheck.SEND_FORBIDDEN, NameValidator.DEFAULT.checkSendTopic(topic), topic);
            assertEquals(NameCheck.VALID, NameValidator.DEFAULT.checkTopic(topic), "pulls may still name it: " + topic);
            assertEquals(NameValidator.NO_PERMISSION, NameValidator.responseCode(NameCheck.SEND_FORBIDDEN, false));
            assertEquals("Sending message to topic[" + topic + "] is forbidden.",
                NameValidator.DEFAULT.topicRemark(NameCheck.SEND_FORBIDDEN, topic));
        }
        assertEquals(NameCheck.VALID, NameValidator.DEFAULT.checkSendTopic("TBW102"), "system, but sends are the broker's call");
        assertEquals(NameCheck.VALID, NameValidator.DEFAULT.checkSendTopic("SCHEDULE_TOPIC_XXXY"));
    }

    /** The raw-byte checks (an array at an offset, a heap slice, direct memory) answer as the String checks do. */
    @Test
    void rawBytesAnswerAsStrings() {
        String[] names = {"TopicTest", "", " ", "a b", "caf\u00e9", "%RETRY%" + "g".repeat(200), "t".repeat(128), "t".repeat(127),
            "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "%DLQ%x", "please_rename_unique_group_name", "x".repeat(256)};
        NameValidator v = BROKER_54;
        for (String name : names) {
            byte[] utf8 = name.getBytes(StandardCharsets.UTF_8);
            byte[] a = new byte[utf8.length + 7];
            System.arraycopy(utf8, 0, a, 3, utf8.length);
            ByteBuf heap = io.netty.buffer.Unpooled.wrappedBuffer(a).slice(1, a.length - 1);
            ByteBuf direct = io.netty.buffer.Unpooled.directBuffer(a.length).writeBytes(a);
            try {
                assertEquals(v.checkTopic(name), v.checkTopic(a, 3, utf8.length), name);
                assertEquals(v.checkSendTopic(name), v.checkSendTopic(a, 3, utf8.length), name);
                assertEquals(v.checkGroup(name), v.checkGroup(a, 3, utf8.length), name);
                assertEquals(v.checkSendTopic(name), v.checkSendTopic(heap, 2, utf8.length), name);
                assertEquals(v.checkGroup(name), v.checkGroup(heap, 2, utf8.length), name);
                assertEquals(v.checkSendTopic(name), v.checkSendTopic(direct, 3, utf8.length), name);
                assertEquals(v.checkGroup(name), v.checkGroup(direct, 3, utf8.length), name);
            } finally {
                direct.release();
            }
        }
        assertThrows(IndexOutOfBoundsException.class, () -> v.checkTopic(new byte[4], 2, 3));
        assertThrows(IndexOutOfBoundsException.class, () -> v.checkGroup(io.netty.buffer.Unpooled.wrappedBuffer(new byte[8]).slice(0, 4), 2, 3));
    }

    @Test
    void responseCodesAndRemarks() {
        assertEquals(29, NameValidator.responseCode(NameCheck.ILLEGAL_CHARACTER, false));
        assertEquals(1, NameValidator.responseCode(NameCheck.TOO_LONG, true), "SYSTEM_ERROR before 5.3.2");
        assertEquals(0, NameValidator.responseCode(NameCheck.VALID, false));
        assertNull(NameValidator.DEFAULT.topicRemark(NameCheck.VALID, "t"));
        assertEquals("The specified topic: " + "x".repeat(128) + ", is longer than topic max length: 127",
            NameValidator.DEFAULT.topicRemark(NameCheck.TOO_LONG, "x".repeat(128)));
        assertEquals("The specified group: a b, contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$",
            NameValidator.DEFAULT.groupRemark(NameCheck.ILLEGAL_CHARACTER, "a b"));
        assertEquals("The specified group: " + "g".repeat(256) + ", is longer than group max length: 255",
            NameValidator.DEFAULT.groupRemark(NameCheck.TOO_LONG, "g".repeat(256)));
        assertThrows(IllegalArgumentException.class, () -> NameValidator.DEFAULT.groupRemark(NameCheck.SEND_FORBIDDEN, "g"));
        assertEquals("illegal_character", NameCheck.ILLEGAL_CHARACTER.label());
    }

    @Test
    void limitsAreConfigurable() {
        NameValidator v = new NameValidator(10, 5, 12);
        assertEquals(NameCheck.TOO_LONG, v.checkTopic("t".repeat(11)));
        assertEquals(NameCheck.VALID, v.checkTopic("%DLQ%1234567"));
        assertEquals(NameCheck.TOO_LONG, v.checkGroup("gggggg"));
        assertEquals(10, v.topicMaxLength());
        assertEquals(5, v.groupMaxLength());
        assertEquals(12, v.retryDlqTopicMaxLength());
        assertThrows(IllegalArgumentException.class, () -> new NameValidator(0, 1, 1));
    }

    static String randomName(Random random) {
        int length = random.nextInt(8) == 0 ? random.nextInt(300) : random.nextInt(20);
        StringBuilder sb = new StringBuilder(length + 8);
        if (random.nextInt(10) == 0) {
            sb.append(random.nextBoolean() ? "%RETRY%" : "%DLQ%");
        }
        boolean legalOnly = random.nextInt(3) > 0;
        for (int i = 0; i < length; i++) {
            if (legalOnly) {
                sb.append("abcXYZ0189%|-_".charAt(random.nextInt(14)));
            } else {
                sb.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
            }
        }
        return sb.toString();
    }
}
