package io.rmqgw.gateway.config;

import java.util.Objects;

/** @param responseEncoding the header encoding of answers and broker requests sent to clients */
public record DownstreamConfig(ResponseEncoding responseEncoding) {

    public static final DownstreamConfig DEFAULT = new DownstreamConfig(null);

    public DownstreamConfig {
        responseEncoding = Objects.requireNonNullElse(responseEncoding, ResponseEncoding.MIRROR);
    }
}
