package io.rmqgw.gateway.relay;

import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.routing.NamesrvAddresses;

/**
 * The upstream settings a reload may change while connections stay up. Sessions read the current
 * value per dial and per request, so a reload applies to the next request without a restart.
 */
public record UpstreamSettings(NamesrvAddresses namesrv, int connectTimeoutMillis, long requestTimeoutNanos,
                               long longPollTimeoutNanos) {

    public static UpstreamSettings of(UpstreamConfig config) {
        NamesrvAddresses namesrv = config.namesrv().isEmpty() ? null
            : NamesrvAddresses.of(config.namesrv().stream().map(HostPort::toString).toList());
        return new UpstreamSettings(namesrv, (int) config.connectTimeout().toMillis(),
            config.requestTimeout().toNanos(), config.longPollTimeout().toNanos());
    }
}
