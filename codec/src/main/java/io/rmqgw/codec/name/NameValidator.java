package io.rmqgw.codec.name;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * Topic and group name checks as brokers make them, with a 128-entry bitmap instead of the regex
 * {@value #LEGAL_CHARACTERS}. A name is checked in the broker's order: blank, then characters, then
 * length; a send topic then against the system topics brokers refuse sends to.
 *
 * <p>Names can be checked as CharSequences or straight on a header's raw UTF-8 bytes (no String is
 * made for a valid name: every legal character is ASCII, so bytes and chars agree). Retry and DLQ
 * names ({@code %RETRY%...}, {@code %DLQ%...}) pass the character check like any other name ({@code %}
 * is legal) and get their own length limit, as RocketMQ 5.4 brokers give them (255).
 *
 * <p>Immutable and thread-safe; nothing on the valid path allocates.
 */
public final class NameValidator {

    public static final int DEFAULT_TOPIC_MAX_LENGTH = 127;
    public static final int DEFAULT_GROUP_MAX_LENGTH = 255;
    public static final int DEFAULT_RETRY_DLQ_TOPIC_MAX_LENGTH = 255;

    public static final String RETRY_PREFIX = "%RETRY%";
    public static final String DLQ_PREFIX = "%DLQ%";
    /** The rule as the broker states it in its remarks. */
    public static final String LEGAL_CHARACTERS = "^[%|a-zA-Z0-9_-]+$";

    /** Broker response codes for a refused name. */
    public static final int SYSTEM_ERROR = 1;
    public static final int NO_PERMISSION = 16;
    public static final int INVALID_PARAMETER = 29;

    public static final NameValidator DEFAULT = new NameValidator(DEFAULT_TOPIC_MAX_LENGTH, DEFAULT_GROUP_MAX_LENGTH,
        DEFAULT_RETRY_DLQ_TOPIC_MAX_LENGTH);

    /**
     * System topics a broker refuses client sends to: TopicValidator's not-allowed-send set as of
     * RocketMQ 5.4 (the two RocksDB transaction topics are new in 5.4; older brokers never host them).
     */
    private static final String[] SEND_FORBIDDEN_TOPICS = {
        "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
        "TRANS_CHECK_MAX_TIME_TOPIC", "SELF_TEST_TOPIC", "OFFSET_MOVED_EVENT",
        "RMQ_SYS_ROCKSDB_TRANS_HALF_TOPIC", "RMQ_SYS_ROCKSDB_TRANS_OP_HALF_TOPIC"};

    /** Bit c of the 128-bit map, split in two words: characters 0-63 and 64-127. */
    private static final long LOW;
    private static final long HIGH;

    static {
        long low = 0;
        long high = 0;
        String legal = "%|-_";
        for (int c = 0; c < 128; c++) {
            boolean ok = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || legal.indexOf(c) >= 0;
            if (ok) {
                if (c < 64) {
                    low |= 1L << c;
                } else {
                    high |= 1L << (c - 64);
                }
            }
        }
        LOW = low;
        HIGH = high;
    }

    /** Per byte: whether it may appear in a name (the bitmap as a table, for loops over raw bytes). */
    private static final boolean[] LEGAL_BYTE = new boolean[256];
    private static final byte[] RETRY_PREFIX_BYTES = RETRY_PREFIX.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] DLQ_PREFIX_BYTES = DLQ_PREFIX.getBytes(StandardCharsets.US_ASCII);
    private static final byte[][] SEND_FORBIDDEN_BYTES = new byte[SEND_FORBIDDEN_TOPICS.length][];

    static {
        for (int c = 0; c < 128; c++) {
            LEGAL_BYTE[c] = isLegal(c);
        }
        for (int i = 0; i < SEND_FORBIDDEN_TOPICS.length; i++) {
            SEND_FORBIDDEN_BYTES[i] = SEND_FORBIDDEN_TOPICS[i].getBytes(StandardCharsets.US_ASCII);
        }
    }

    private final int topicMaxLength;
    private final int groupMaxLength;
    private final int retryDlqTopicMaxLength;

    /**
     * @param topicMaxLength         longest ordinary topic (brokers: 127)
     * @param groupMaxLength         longest group (clients and brokers before 5.3.3: 255; 5.4 brokers: 120)
     * @param retryDlqTopicMaxLength longest {@code %RETRY%}/{@code %DLQ%} topic (5.4 brokers: 255)
     */
    public NameValidator(int topicMaxLength, int groupMaxLength, int retryDlqTopicMaxLength) {
        if (topicMaxLength < 1 || groupMaxLength < 1 || retryDlqTopicMaxLength < 1) {
            throw new IllegalArgumentException("name length limits must be positive");
        }
        this.topicMaxLength = topicMaxLength;
        this.groupMaxLength = groupMaxLength;
        this.retryDlqTopicMaxLength = retryDlqTopicMaxLength;
    }

    public int topicMaxLength() {
        return topicMaxLength;
    }

    public int groupMaxLength() {
        return groupMaxLength;
    }

    public int retryDlqTopicMaxLength() {
        return retryDlqTopicMaxLength;
    }

    /** Whether {@code c} may appear in a topic or group name: one bitmap lookup. */
    public static boolean isLegal(int c) {
        // a long shift uses the low 6 bits of c: the word picks the half, the shift the bit
        return c >= 0 && c < 128 && (((c < 64 ? LOW : HIGH) >>> c) & 1L) != 0;
    }

    /** Index of the first character not allowed in a name, or -1 when all are (an empty name has none). */
    public static int firstIllegal(CharSequence name) {
        for (int i = 0, n = name.length(); i < n; i++) {
            if (!isLegal(name.charAt(i))) {
                return i;
            }
        }
        return -1;
    }

    // ---- CharSequence ----

    public NameCheck checkTopic(CharSequence topic) {
        if (topic == null || topic.length() == 0) {
            return NameCheck.EMPTY;
        }
        if (firstIllegal(topic) >= 0) {
            return isBlank(topic) ? NameCheck.EMPTY : NameCheck.ILLEGAL_CHARACTER;
        }
        return topic.length() > topicLimit(topic) ? NameCheck.TOO_LONG : NameCheck.VALID;
    }

    /** {@link #checkTopic(CharSequence)}, then the system topics brokers refuse sends to. */
    public NameCheck checkSendTopic(CharSequence topic) {
        NameCheck check = checkTopic(topic);
        if (check == NameCheck.VALID && isSendForbidden(topic)) {
            return NameCheck.SEND_FORBIDDEN;
        }
        return check;
    }

    public NameCheck checkGroup(CharSequence group) {
        if (group == null || group.length() == 0) {
            return NameCheck.EMPTY;
        }
        if (firstIllegal(group) >= 0) {
            return isBlank(group) ? NameCheck.EMPTY : NameCheck.ILLEGAL_CHARACTER;
        }
        return group.length() > groupMaxLength ? NameCheck.TOO_LONG : NameCheck.VALID;
    }

    // ---- raw UTF-8 bytes (a negative length means the field is absent) ----

    public NameCheck checkTopic(ByteBuf buf, int index, int length) {
        if (length <= 0) {
            return NameCheck.EMPTY;
        }
        if (buf.hasArray()) {
            return checkTopic(buf.array(), arrayIndex(buf, index, length), length);
        }
        if (firstIllegal(buf, index, length) >= 0) {
            return checkTopic(buf.toString(index, length, StandardCharsets.UTF_8)); // refused anyway: exact reason
        }
        return length > topicLimit(buf, index, length) ? NameCheck.TOO_LONG : NameCheck.VALID;
    }

    public NameCheck checkSendTopic(ByteBuf buf, int index, int length) {
        if (length > 0 && buf.hasArray()) {
            return checkSendTopic(buf.array(), arrayIndex(buf, index, length), length);
        }
        NameCheck check = checkTopic(buf, index, length);
        if (check == NameCheck.VALID && isSendForbidden(buf, index, length)) {
            return NameCheck.SEND_FORBIDDEN;
        }
        return check;
    }

    public NameCheck checkGroup(ByteBuf buf, int index, int length) {
        if (length <= 0) {
            return NameCheck.EMPTY;
        }
        if (buf.hasArray()) {
            return checkGroup(buf.array(), arrayIndex(buf, index, length), length);
        }
        if (firstIllegal(buf, index, length) >= 0) {
            return checkGroup(buf.toString(index, length, StandardCharsets.UTF_8));
        }
        return length > groupMaxLength ? NameCheck.TOO_LONG : NameCheck.VALID;
    }

    // ---- raw UTF-8 bytes in an array (a header image): no per-byte buffer checks ----

    public NameCheck checkTopic(byte[] a, int off, int length) {
        if (length <= 0) {
            return NameCheck.EMPTY;
        }
        if (firstIllegal(a, off, length) >= 0) {
            return checkTopic(new String(a, off, length, StandardCharsets.UTF_8)); // refused anyway: exact reason
        }
        return length > topicLimit(a, off, length) ? NameCheck.TOO_LONG : NameCheck.VALID;
    }

    public NameCheck checkSendTopic(byte[] a, int off, int length) {
        NameCheck check = checkTopic(a, off, length);
        if (check == NameCheck.VALID && isSendForbidden(a, off, length)) {
            return NameCheck.SEND_FORBIDDEN;
        }
        return check;
    }

    public NameCheck checkGroup(byte[] a, int off, int length) {
        if (length <= 0) {
            return NameCheck.EMPTY;
        }
        if (firstIllegal(a, off, length) >= 0) {
            return checkGroup(new String(a, off, length, StandardCharsets.UTF_8));
        }
        return length > groupMaxLength ? NameCheck.TOO_LONG : NameCheck.VALID;
    }

    /** Offset of the first byte of {@code a[off, off + length)} not allowed in a name, or -1. */
    public static int firstIllegal(byte[] a, int off, int length) {
        java.util.Objects.checkFromIndexSize(off, length, a.length);
        for (int i = 0; i < length; i++) {
            if (!LEGAL_BYTE[a[off + i] & 0xFF]) {
                return i;
            }
        }
        return -1;
    }

    /** The array index of {@code buf[index]}, after checking {@code [index, index + length)} lies within {@code buf}. */
    private static int arrayIndex(ByteBuf buf, int index, int length) {
        if (index < 0 || length > buf.capacity() - index) {
            throw new IndexOutOfBoundsException("index " + index + ", length " + length + ", capacity " + buf.capacity());
        }
        return buf.arrayOffset() + index;
    }

    /** Offset of the first byte not allowed in a name, or -1 (bytes of multi-byte UTF-8 are all illegal). */
    public static int firstIllegal(ByteBuf buf, int index, int length) {
        if (buf.hasArray()) {
            return firstIllegal(buf.array(), arrayIndex(buf, index, length), length);
        }
        for (int i = 0; i < length; i++) {
            if (!isLegal(buf.getByte(index + i))) {
                return i;
            }
        }
        return -1;
    }

    /** The system topics {@link #checkSendTopic} refuses. */
    public static java.util.List<String> sendForbiddenTopics() {
        return java.util.List.of(SEND_FORBIDDEN_TOPICS);
    }

    // ---- answers ----

    /**
     * The response code a broker answers a refused name with: NO_PERMISSION for a forbidden send
     * topic; otherwise INVALID_PARAMETER, or SYSTEM_ERROR for brokers older than 5.3.2.
     */
    public static int responseCode(NameCheck check, boolean brokerBefore532) {
        return switch (check) {
            case VALID -> 0;
            case SEND_FORBIDDEN -> NO_PERMISSION;
            default -> brokerBefore532 ? SYSTEM_ERROR : INVALID_PARAMETER;
        };
    }

    /** The remark a RocketMQ 5.4 broker gives for a refused topic (TopicValidator's wording); null for VALID. */
    public String topicRemark(NameCheck check, CharSequence topic) {
        return switch (check) {
            case VALID -> null;
            case EMPTY -> "The specified topic is blank.";
            case ILLEGAL_CHARACTER -> "The specified topic: " + topic + ", contains illegal characters, allowing only "
                + LEGAL_CHARACTERS;
            case TOO_LONG -> isRetryOrDlq(topic)
                ? "The specified topic is DLQ or Retry topic: " + topic + ", and it's longer than topic max length: "
                    + retryDlqTopicMaxLength
                : "The specified topic: " + topic + ", is longer than topic max length: " + topicMaxLength;
            case SEND_FORBIDDEN -> "Sending message to topic[" + topic + "] is forbidden.";
        };
    }

    /** The remark a RocketMQ 5.4 broker gives for a refused group; null for VALID. */
    public String groupRemark(NameCheck check, CharSequence group) {
        return switch (check) {
            case VALID -> null;
            case EMPTY -> "The specified group is blank.";
            case ILLEGAL_CHARACTER -> "The specified group: " + group + ", contains illegal characters, allowing only "
                + LEGAL_CHARACTERS;
            case TOO_LONG -> "The specified group: " + group + ", is longer than group max length: " + groupMaxLength;
            case SEND_FORBIDDEN -> throw new IllegalArgumentException("not a group check: " + check);
        };
    }

    // ---- internals ----

    private int topicLimit(CharSequence topic) {
        return isRetryOrDlq(topic) ? retryDlqTopicMaxLength : topicMaxLength;
    }

    private int topicLimit(ByteBuf buf, int index, int length) {
        return startsWith(buf, index, length, RETRY_PREFIX) || startsWith(buf, index, length, DLQ_PREFIX)
            ? retryDlqTopicMaxLength : topicMaxLength;
    }

    private int topicLimit(byte[] a, int off, int length) {
        // both prefixes start with '%', which few topics do: one compare for most
        return a[off] == '%' && (startsWith(a, off, length, RETRY_PREFIX_BYTES) || startsWith(a, off, length, DLQ_PREFIX_BYTES))
            ? retryDlqTopicMaxLength : topicMaxLength;
    }

    private static boolean startsWith(byte[] a, int off, int length, byte[] prefix) {
        return length >= prefix.length && java.util.Arrays.equals(a, off, off + prefix.length, prefix, 0, prefix.length);
    }

    private static boolean isSendForbidden(byte[] a, int off, int length) {
        for (byte[] forbidden : SEND_FORBIDDEN_BYTES) {
            if (forbidden.length == length && startsWith(a, off, length, forbidden)) {
                return true;
            }
        }
        return false;
    }

    static boolean isRetryOrDlq(CharSequence topic) {
        return startsWith(topic, RETRY_PREFIX) || startsWith(topic, DLQ_PREFIX);
    }

    private static boolean startsWith(CharSequence s, String prefix) {
        if (s.length() < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (s.charAt(i) != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean startsWith(ByteBuf buf, int index, int length, String prefix) {
        if (length < prefix.length()) {
            return false;
        }
        for (int i = 0; i < prefix.length(); i++) {
            if (buf.getByte(index + i) != prefix.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static boolean isSendForbidden(CharSequence topic) {
        for (String forbidden : SEND_FORBIDDEN_TOPICS) {
            if (forbidden.length() == topic.length() && startsWith(topic, forbidden)) {
                return true;
            }
        }
        return false;
    }

    private static boolean isSendForbidden(ByteBuf buf, int index, int length) {
        for (String forbidden : SEND_FORBIDDEN_TOPICS) {
            if (forbidden.length() == length && startsWith(buf, index, length, forbidden)) {
                return true;
            }
        }
        return false;
    }

    /** The broker's blank: every character is whitespace (Character.isWhitespace). */
    private static boolean isBlank(CharSequence s) {
        for (int i = 0, n = s.length(); i < n; i++) {
            if (!Character.isWhitespace(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
