package io.rmqgw.codec.header;

import io.netty.util.internal.ObjectPool;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.json.JsonToBinary;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * SEND_MESSAGE (long field names), SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE (short names a..n) request
 * headers: one view, the field names chosen by {@link #kind()}.
 */
public final class SendRequestHeader extends CommandHeader {

    static final int PRODUCER_GROUP = 0;
    static final int TOPIC = 1;
    static final int DEFAULT_TOPIC = 2;
    static final int DEFAULT_TOPIC_QUEUE_NUMS = 3;
    static final int QUEUE_ID = 4;
    static final int SYS_FLAG = 5;
    static final int BORN_TIMESTAMP = 6;
    static final int FLAG = 7;
    static final int PROPERTIES = 8;
    static final int RECONSUME_TIMES = 9;
    static final int UNIT_MODE = 10;
    static final int MAX_RECONSUME_TIMES = 11;
    static final int BATCH = 12;
    /** V2 field {@code n}: the target broker name (5.x clients and 4.9.5+ via createSendMessageRequestHeaderV2). */
    static final int BROKER_NAME_V2 = 13;
    static final int BNAME = 14;
    static final int NAMESPACE = 15;
    static final int NAMESPACED = 16;
    static final int ONEWAY = 17;
    static final int LOGICAL = 18;

    private static final VarHandle INT = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.BIG_ENDIAN);
    /** A binary entry: key length (2 bytes), the key, value length (4 bytes), the value. */
    private static final int ONE_BYTE_KEY_VALUE_LENGTH_AT = 2 + 1;

    SendRequestHeader(HeaderKind kind, ObjectPool.Handle<CommandHeader> handle) {
        super(kind, handle);
    }

    /** True for the short-name layout (SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE). */
    public boolean isV2() {
        return kind == HeaderKind.SEND_V2;
    }

    public String producerGroup() {
        return string(PRODUCER_GROUP);
    }

    public String topic() {
        return string(TOPIC);
    }

    public String defaultTopic() {
        return string(DEFAULT_TOPIC);
    }

    public int defaultTopicQueueNums() {
        return intValue(DEFAULT_TOPIC_QUEUE_NUMS);
    }

    public int queueId() {
        return intValue(QUEUE_ID);
    }

    public int sysFlag() {
        return intValue(SYS_FLAG);
    }

    public long bornTimestamp() {
        return longValue(BORN_TIMESTAMP);
    }

    /** The message flag (field {@code flag} / {@code h}), not the frame flag. */
    public int messageFlag() {
        return intValue(FLAG);
    }

    /** The message properties string ({@code key\u0001value\u0002...}). */
    public String properties() {
        return string(PROPERTIES);
    }

    public int reconsumeTimes() {
        return intValue(RECONSUME_TIMES);
    }

    public boolean unitMode() {
        return booleanValue(UNIT_MODE);
    }

    public int maxReconsumeTimes() {
        return intValue(MAX_RECONSUME_TIMES);
    }

    public boolean batch() {
        return booleanValue(BATCH);
    }

    /** The broker the client meant: V2 field {@code n}, else the RPC header's {@code bname}; null when neither. */
    public String brokerName() {
        return has(BROKER_NAME_V2) ? string(BROKER_NAME_V2) : string(BNAME);
    }

    /** The RPC header's {@code ns} (namespace), or null. */
    public String namespace() {
        return string(NAMESPACE);
    }

    /** The RPC header's {@code oway} (oneway) flag. */
    public boolean onewayField() {
        return booleanValue(ONEWAY);
    }

    /** Checks the topic as a broker checks it on a send (forbidden system topics included), on the raw bytes. */
    public NameCheck checkTopic(NameValidator validator) {
        return checkTopic(TOPIC, validator, true);
    }

    public NameCheck checkGroup(NameValidator validator) {
        return checkGroup(PRODUCER_GROUP, validator);
    }

    /**
     * True when the frame is a JSON SEND_MESSAGE_V2 / SEND_BATCH_MESSAGE whose topic ({@code b}, send rules)
     * and producer group ({@code a}, when present) pass {@code validator}, checked on the single pass's binary
     * form of the header (the frame decoder's, see {@link HeaderCodec#transcoded}) without a typed header.
     * False says only "decode the typed header and check that": a bad or missing name, a binary frame, the
     * long-named SEND_MESSAGE, a header the single pass left to the general reader. The frame is not released.
     */
    public static boolean namesValidInFrame(RemotingFrame frame, NameValidator validator) {
        if (frame.encoding() != SerializeType.JSON || HeaderKind.forRequest(frame.code()) != HeaderKind.SEND_V2) {
            return false;
        }
        JsonToBinary t = HeaderCodec.transcoded(frame);
        if (t == null || !t.hasOneByteKey('b')) {
            return false;
        }
        byte[] a = t.bytes();
        int topic = valueLengthAt(t, 'b');
        if (!validator.checkSendTopic(a, topic + 4, (int) INT.get(a, topic)).isValid()) {
            return false;
        }
        if (!t.hasOneByteKey('a')) {
            return true;
        }
        int group = valueLengthAt(t, 'a');
        return validator.checkGroup(a, group + 4, (int) INT.get(a, group)).isValid();
    }

    /** Where, in {@code t}'s bytes, the value length of the entry with the one-byte key {@code key} lies (its value follows). */
    private static int valueLengthAt(JsonToBinary t, char key) {
        return t.entriesStart() + t.oneByteKeyOffset(key) + ONE_BYTE_KEY_VALUE_LENGTH_AT;
    }

    public SendRequestHeader setQueueId(int queueId) {
        putSlot(QUEUE_ID, queueId);
        return this;
    }

    public SendRequestHeader setTopic(String topic) {
        putSlot(TOPIC, topic);
        return this;
    }
}
