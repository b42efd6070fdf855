package io.rmqgw.gateway.edge;

import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.ResponseEncoding;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * What the gateway does to frames at its edges, replaceable by a reload: the header encoding toward
 * upstreams (null: keep the client's), the encoding of what goes to clients, and name checks.
 *
 * @param upstreamEncoding  encoding for requests sent upstream, or null to preserve the client's
 * @param responseEncoding  encoding of answers and broker requests sent to clients
 * @param names             the name checker, or null when names are not checked
 * @param legacyBrokers     answer bad names with SYSTEM_ERROR as brokers before 5.3.2 do
 */
public record EdgeSettings(SerializeType upstreamEncoding, ResponseEncoding responseEncoding, NameValidator names,
                           boolean legacyBrokers) {

    public static EdgeSettings of(GatewayConfig config) {
        SerializeType upstream = switch (config.upstream().headerEncoding()) {
            case ROCKETMQ -> SerializeType.ROCKETMQ;
            case JSON -> SerializeType.JSON;
            case PRESERVE -> null;
        };
        NameValidator names = config.names().check()
            ? new NameValidator(config.names().topicMaxLength(), config.names().groupMaxLength(),
                Math.max(config.names().topicMaxLength(), NameValidator.DEFAULT_RETRY_DLQ_TOPIC_MAX_LENGTH))
            : null;
        return new EdgeSettings(upstream, config.downstream().responseEncoding(), names, config.names().legacyBrokers());
    }

    /** Settings that change nothing: frames pass in the encoding they came in, names unchecked. */
    public static EdgeSettings passThrough() {
        return new EdgeSettings(null, ResponseEncoding.MIRROR, null, false);
    }

    /** The encoding for something sent to a client that spoke {@code clientEncoding} (null: unknown yet). */
    public SerializeType towardClient(SerializeType clientEncoding, SerializeType current) {
        return switch (responseEncoding) {
            case MIRROR -> clientEncoding == null ? current : clientEncoding;
            case ROCKETMQ -> SerializeType.ROCKETMQ;
            case JSON -> SerializeType.JSON;
        };
    }
}
