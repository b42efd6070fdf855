package io.rmqgw.codec.frame;

import java.util.Map;
import org.apache.rocketmq.remoting.protocol.LanguageCode;

/**
 * A fully decoded remoting header. {@code extFields} keeps its insertion order and every entry,
 * including ones the gateway does not know (signatures, client extensions): re-encoding carries
 * them exactly. {@code remark} and {@code extFields} may be null, as on the wire.
 */
public record RemotingHeader(int code, LanguageCode language, int version, int opaque, int flag, String remark,
                             Map<String, String> extFields) {

    public static final int RESPONSE_FLAG = 1;

    public RemotingHeader withExtFields(Map<String, String> fields) {
        return new RemotingHeader(code, language, version, opaque, flag, remark, fields);
    }

    /** A response to a request with this opaque: code, remark, and the responder's language. */
    public static RemotingHeader response(int opaque, int code, String remark) {
        return new RemotingHeader(code, LanguageCode.JAVA, 0, opaque, RESPONSE_FLAG, remark, null);
    }
}
