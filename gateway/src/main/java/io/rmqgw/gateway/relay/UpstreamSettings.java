package io.rmqgw.gateway.relay;

import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.gateway.upstream.RequestSigner;
import io.rmqgw.routing.NamesrvAddresses;

/**
 * The upstream settings a reload may change while connections stay up. Sessions read the current
 * value per dial and per request, so a reload applies to the next request without a restart.
 *
 * @param signer signs the requests the gateway originates ({@code upstream.acl}); null: they go unsigned
 */
public record UpstreamSettings(NamesrvAddresses namesrv, int connectTimeoutMillis, long requestTimeoutNanos,
                               long longPollTimeoutNanos, RequestSigner signer) {

    /** Unsigned gateway requests. */
    public UpstreamSettings(NamesrvAddresses namesrv, int connectTimeoutMillis, long requestTimeoutNanos,
                            long longPollTimeoutNanos) {
        this(namesrv, connectTimeoutMillis, requestTimeoutNanos, longPollTimeoutNanos, null);
    }

    public static UpstreamSettings of(UpstreamConfig config) {
        NamesrvAddresses namesrv = config.namesrv().isEmpty() ? null
            : NamesrvAddresses.of(config.namesrv().stream().map(HostPort::toString).toList());
        return new UpstreamSettings(namesrv, (int) config.connectTimeout().toMillis(),
            config.requestTimeout().toNanos(), config.longPollTimeout().toNanos(),
            RequestSigner.of(config.acl()));
    }
}
