package io.rmqgw.gateway.edge;

import io.rmqgw.testing.Wire;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * The requests a real client sends on the hot path, with realistic headers: every field a 4.9.7 client
 * writes, an ACL hook's {@code AccessKey}/{@code Signature}, fields the gateway does not know, and
 * values with message-property separators, quotes, backslashes, control characters and non-ASCII text.
 * Each can be written as a 4.9.7 client's JSON ({@link LegacyJson}) or as ROCKETMQ binary
 * (rocketmq-remoting's own encoder).
 */
public final class ClientFrames {

    public static final int SEND_MESSAGE = 10;
    public static final int PULL_MESSAGE = 11;
    public static final int QUERY_CONSUMER_OFFSET = 14;
    public static final int UPDATE_CONSUMER_OFFSET = 15;
    public static final int GET_MAX_OFFSET = 30;
    public static final int HEART_BEAT = 34;
    public static final int CHECK_TRANSACTION_STATE = 39;
    public static final int NOTIFY_CONSUMER_IDS_CHANGED = 40;
    public static final int GET_CONSUMER_RUNNING_INFO = 307;
    public static final int SEND_MESSAGE_V2 = 310;
    public static final int SEND_BATCH_MESSAGE = 320;
    public static final int LITE_PULL_MESSAGE = 361;
    public static final int POP_MESSAGE = 200050;
    /** A code no RocketMQ version defines. */
    public static final int UNKNOWN = 4321;

    /** Message properties as MessageDecoder writes them (NAME_VALUE_SEPARATOR char 1, PROPERTY_SEPARATOR char 2). */
    public static final String PROPERTIES = "KEYS\u0001\u8ba2\u5355-42 order\u0002UNIQ_KEY\u00017F000001B2C018B4AAC26F3A2B0C0000"
        + "\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002x-note\u0001caf\u00e9 \u2713 \uD83D\uDE80\u0002";
    /** What AclClientRPCHook adds to every request. */
    public static final String ACCESS_KEY = "rocketmq2";
    public static final String SIGNATURE = "kH0nO0Vm+Qy5T1bX9g/8aPz3mQ4=";
    public static final String ODD = "\"quoted\" back\\slash\ttab\nline \u0003 \u00fc\u00df \u4e2d\u6587 \uD83D\uDE00";

    /** A request independent of its encoding. */
    public record Spec(String name, int code, int opaque, boolean oneway, int version, LanguageCode language,
                       String remark, Map<String, String> ext, byte[] body) {

        /** As a 4.9.7 client writes it with the JSON header encoding. */
        public byte[] json() {
            LegacyJson j = LegacyJson.request(code).opaque(opaque).version(version).language(language.name()).body(body);
            if (oneway) {
                j.oneway();
            }
            if (remark != null) {
                j.remark(remark);
            }
            ext.forEach(j::ext);
            return j.bytes();
        }

        /** As rocketmq-remoting writes it with {@code type}. */
        public byte[] encoded(SerializeType type) {
            Wire.Builder b = Wire.request(code).opaque(opaque).type(type).version(version).language(language).body(body);
            if (oneway) {
                b.oneway();
            }
            if (remark != null) {
                b.remark(remark);
            }
            ext.forEach(b::ext);
            return b.bytes();
        }

        @Override
        public String toString() {
            return name;
        }
    }

    private ClientFrames() {
    }

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (i * seed + 7);
        }
        return b;
    }

    private static Map<String, String> map(String... kv) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    public static Spec sendV2() {
        return new Spec("SEND_MESSAGE_V2", SEND_MESSAGE_V2, 101, false, LegacyJson.V4_9_7, LanguageCode.JAVA, null,
            map("a", "please_rename_unique_group_name", "b", "TopicTest", "c", "TBW102", "d", "4", "e", "3", "f", "0",
                "g", "1700000000123", "h", "0", "i", PROPERTIES, "j", "0", "k", "false", "l", "16", "m", "false",
                "AccessKey", ACCESS_KEY, "Signature", SIGNATURE, "x-trace-\u00e9", ODD),
            bytes(300, 31));
    }

    public static Spec sendV1() {
        return new Spec("SEND_MESSAGE (long names)", SEND_MESSAGE, 102, false, LegacyJson.V4_9_7, LanguageCode.JAVA, null,
            map("producerGroup", "pg_1", "topic", "%RETRY%cg_1", "defaultTopic", "TBW102", "defaultTopicQueueNums", "4",
                "queueId", "0", "sysFlag", "0", "bornTimestamp", "1700000000456", "flag", "0", "properties", PROPERTIES,
                "reconsumeTimes", "2", "unitMode", "false", "maxReconsumeTimes", "16", "batch", "false",
                "Signature", SIGNATURE, "AccessKey", ACCESS_KEY),
            bytes(64, 5));
    }

    public static Spec sendBatch() {
        return new Spec("SEND_BATCH_MESSAGE", SEND_BATCH_MESSAGE, 103, false, LegacyJson.V4_9_7, LanguageCode.JAVA, null,
            map("a", "pg_batch", "b", "TopicBatch", "c", "TBW102", "d", "4", "e", "1", "f", "0", "g", "1700000000789",
                "h", "0", "i", "WAIT\u0001true\u0002", "j", "0", "k", "false", "m", "true", "unknown", "\u00fc"),
            bytes(1000, 13));
    }

    public static Spec pull() {
        return new Spec("PULL_MESSAGE", PULL_MESSAGE, 104, false, LegacyJson.V4_9_7, LanguageCode.JAVA, null,
            map("consumerGroup", "cg_1", "topic", "TopicTest", "queueId", "2", "queueOffset", "12345", "maxMsgNums", "32",
                "sysFlag", "3", "commitOffset", "12000", "suspendTimeoutMillis", "15000", "subscription", "TagA || TagB",
                "subVersion", "1700000000000", "expressionType", "TAG", "AccessKey", ACCESS_KEY, "Signature", SIGNATURE),
            new byte[0]);
    }

    public static Spec litePull() {
        return new Spec("LITE_PULL_MESSAGE", LITE_PULL_MESSAGE, 105, false, LegacyJson.V4_9_7, LanguageCode.JAVA, null,
            map("consumerGroup", "lite_cg", "topic", "%RETRY%lite_cg", "queueId", "0", "queueOffset", "0",
                "maxMsgNums", "16", "sysFlag", "2", "commitOffset", "0", "suspendTimeoutMillis", "20000",
                "subscription", "*", "subVersion", "0", "expressionType", "TAG", "x-odd", ODD),
            new byte[0]);
    }

    public static Spec unknownOneway() {
        return new Spec("unknown code, oneway, remark, GO client", UNKNOWN, 106, true, 317, LanguageCode.GO,
            "r\u00e9mark \u2713 " + ODD, map("topic", "T", "x-\u00fcnknown", ODD, "n", "42"), bytes(77, 3));
    }

    /** The hot-path codes, one unknown code (oneway, with a remark) among them. */
    public static List<Spec> hotPath() {
        return List.of(sendV2(), sendV1(), sendBatch(), pull(), litePull(), unknownOneway());
    }

    /** POP_MESSAGE (200050): a code that does not fit the binary header's 16 bits. */
    public static Spec pop() {
        return new Spec("POP_MESSAGE", POP_MESSAGE, 107, false, LegacyJson.V4_9_7, LanguageCode.JAVA, null,
            map("consumerGroup", "cg_pop", "topic", "TopicPop", "queueId", "-1", "maxMsgNums", "32",
                "invisibleTime", "60000", "pollTime", "15000", "bornTime", "1700000000000", "initMode", "0",
                "expType", "TAG", "exp", "*", "order", "false", "AccessKey", ACCESS_KEY),
            new byte[0]);
    }
}
