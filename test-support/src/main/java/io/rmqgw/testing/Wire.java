package io.rmqgw.testing;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.remoting.exception.RemotingCommandException;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Remoting frames as a real client or server writes and reads them: built and parsed with
 * rocketmq-remoting's own {@link RemotingCommand}, as whole byte arrays (length prefix included).
 * No Netty buffers, so nothing here can leak.
 */
public final class Wire {

    public static final int SUCCESS = 0;
    public static final int SYSTEM_ERROR = 1;
    public static final int SYSTEM_BUSY = 2;

    private Wire() {
    }

    /** A request frame builder. */
    public static Builder request(int code) {
        return new Builder(code, false);
    }

    /** A response frame builder answering {@code opaque}. */
    public static Builder response(int code, int opaque) {
        return new Builder(code, true).opaque(opaque);
    }

    /** Parses one whole frame (length prefix included) the way rocketmq-remoting does. */
    public static Frame parse(byte[] whole) {
        int length = ByteBuffer.wrap(whole).getInt();
        if (length != whole.length - 4) {
            throw new AssertionError("length prefix " + length + " for a frame of " + whole.length + " bytes");
        }
        byte[] rest = new byte[whole.length - 4];
        System.arraycopy(whole, 4, rest, 0, rest.length);
        try {
            return new Frame(whole, RemotingCommand.decode(rest));
        } catch (RemotingCommandException e) {
            throw new AssertionError("rocketmq-remoting cannot decode the frame", e);
        }
    }

    /** length prefix + (type << 24 | header length) + header + body, from raw parts. */
    public static byte[] rawFrame(int serializeType, byte[] header, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(8 + header.length + body.length);
        b.putInt(4 + header.length + body.length);
        b.putInt(serializeType << 24 | header.length);
        b.put(header).put(body);
        return b.array();
    }

    public static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** One received frame: its exact bytes and what rocketmq-remoting reads from them. */
    public record Frame(byte[] bytes, RemotingCommand command) {

        /** The serialize type byte of the frame (0 JSON, 1 ROCKETMQ). */
        public int serializeTypeByte() {
            return bytes[4] & 0xFF;
        }

        public SerializeType serializeType() {
            return SerializeType.valueOf(bytes[4]);
        }

        public int code() {
            return command.getCode();
        }

        public int opaque() {
            return command.getOpaque();
        }

        public boolean isResponse() {
            return command.isResponseType();
        }

        public boolean isOneway() {
            return command.isOnewayRPC();
        }

        public String remark() {
            return command.getRemark();
        }

        public Map<String, String> ext() {
            HashMap<String, String> ext = command.getExtFields();
            return ext == null ? Map.of() : ext;
        }

        public byte[] body() {
            return command.getBody() == null ? new byte[0] : command.getBody();
        }

        public String bodyText() {
            return new String(body(), StandardCharsets.UTF_8);
        }

        @Override
        public String toString() {
            return (isResponse() ? "response" : "request") + "{code=" + code() + ", opaque=" + opaque() + ", flag="
                + command.getFlag() + ", type=" + serializeType() + ", remark=" + remark() + ", ext=" + ext()
                + ", body=" + body().length + "B}";
        }
    }

    /** Builds a frame with {@link RemotingCommand#encode()}, as rocketmq-remoting writes it. */
    public static final class Builder {
        private final int code;
        private final boolean response;
        private int opaque = 1;
        private SerializeType type = SerializeType.JSON;
        private int version = 453;
        private LanguageCode language = LanguageCode.JAVA;
        private boolean oneway;
        private String remark;
        private final Map<String, String> ext = new LinkedHashMap<>();
        private byte[] body;

        private Builder(int code, boolean response) {
            this.code = code;
            this.response = response;
        }

        public Builder opaque(int opaque) {
            this.opaque = opaque;
            return this;
        }

        public Builder type(SerializeType type) {
            this.type = type;
            return this;
        }

        public Builder version(int version) {
            this.version = version;
            return this;
        }

        public Builder language(LanguageCode language) {
            this.language = language;
            return this;
        }

        public Builder oneway() {
            this.oneway = true;
            return this;
        }

        public Builder remark(String remark) {
            this.remark = remark;
            return this;
        }

        public Builder ext(String key, String value) {
            ext.put(key, value);
            return this;
        }

        public Builder body(byte[] body) {
            this.body = body;
            return this;
        }

        public Builder body(String body) {
            return body(utf8(body));
        }

        public byte[] bytes() {
            RemotingCommand cmd = response ? RemotingCommand.createResponseCommand(code, remark)
                : RemotingCommand.createRequestCommand(code, null);
            cmd.setCode(code);
            cmd.setOpaque(opaque);
            cmd.setSerializeTypeCurrentRPC(type);
            cmd.setVersion(version);
            cmd.setLanguage(language);
            if (!response && remark != null) {
                cmd.setRemark(remark);
            }
            if (oneway) {
                cmd.markOnewayRPC();
            }
            ext.forEach(cmd::addExtField);
            cmd.setBody(body);
            ByteBuffer encoded = cmd.encode();
            byte[] out = new byte[encoded.remaining()];
            encoded.get(out);
            return out;
        }
    }
}
