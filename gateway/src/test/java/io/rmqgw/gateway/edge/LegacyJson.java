package io.rmqgw.gateway.edge;

import io.rmqgw.testing.Wire;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.common.MQVersion;

/**
 * Request frames as a RocketMQ 4.9.7 Java client writes them with the JSON header encoding: fastjson
 * 1's output of RemotingCommand (fields in alphabetical order, extFields in the client's map order,
 * control characters as six-character unicode escapes, everything else raw UTF-8), written by hand so that the bytes
 * are those of the old client rather than of the 5.x library the tests link.
 */
public final class LegacyJson {

    /** {@code MQVersion.Version.V4_9_7.ordinal()}: the version a 4.9.7 client puts in every header. */
    public static final int V4_9_7 = MQVersion.Version.V4_9_7.ordinal();

    private final int code;
    private int opaque = 1;
    private int flag;
    private int version = V4_9_7;
    private String language = "JAVA";
    private String remark;
    private final Map<String, String> ext = new LinkedHashMap<>();
    private byte[] body = new byte[0];

    private LegacyJson(int code) {
        this.code = code;
    }

    public static LegacyJson request(int code) {
        return new LegacyJson(code);
    }

    public LegacyJson opaque(int opaque) {
        this.opaque = opaque;
        return this;
    }

    public LegacyJson oneway() {
        this.flag |= 2;
        return this;
    }

    public LegacyJson version(int version) {
        this.version = version;
        return this;
    }

    public LegacyJson language(String language) {
        this.language = language;
        return this;
    }

    public LegacyJson remark(String remark) {
        this.remark = remark;
        return this;
    }

    public LegacyJson ext(String key, String value) {
        ext.put(key, value);
        return this;
    }

    public LegacyJson body(byte[] body) {
        this.body = body;
        return this;
    }

    public LegacyJson body(String body) {
        return body(Wire.utf8(body));
    }

    public String headerJson() {
        StringBuilder sb = new StringBuilder(256);
        sb.append("{\"code\":").append(code);
        if (!ext.isEmpty()) {
            sb.append(",\"extFields\":{");
            boolean first = true;
            for (Map.Entry<String, String> e : ext.entrySet()) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                quote(sb, e.getKey()).append(':');
                quote(sb, e.getValue());
            }
            sb.append('}');
        }
        sb.append(",\"flag\":").append(flag);
        sb.append(",\"language\":");
        quote(sb, language);
        sb.append(",\"opaque\":").append(opaque);
        if (remark != null) {
            sb.append(",\"remark\":");
            quote(sb, remark);
        }
        sb.append(",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":").append(version).append('}');
        return sb.toString();
    }

    /** The whole frame, length prefix included. */
    public byte[] bytes() {
        return Wire.rawFrame(0, Wire.utf8(headerJson()), body);
    }

    /** fastjson 1's string escaping: quote, backslash and control characters; the rest raw. */
    private static StringBuilder quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default -> {
                    if (c < 0x20) {
                        sb.append(String.format("\\u%04X", (int) c));
                    } else {
                        sb.append(c);
                    }
                }
            }
        }
        return sb.append('"');
    }
}
