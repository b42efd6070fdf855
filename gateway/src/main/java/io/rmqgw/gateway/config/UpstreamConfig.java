package io.rmqgw.gateway.config;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * @param namesrv          upstream name servers, tried in order with failover
 * @param connectTimeout   TCP connect timeout toward name servers and brokers
 * @param requestTimeout   how long a request may wait for its upstream response before the client gets SYSTEM_BUSY
 * @param longPollTimeout  the same for long-polling pulls, which brokers hold for up to 30 s
 * @param headerEncoding   the header encoding sent to brokers and name servers
 */
public record UpstreamConfig(List<HostPort> namesrv, Duration connectTimeout, Duration requestTimeout,
                             Duration longPollTimeout, HeaderEncoding headerEncoding) {

    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(3);
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_LONG_POLL_TIMEOUT = Duration.ofSeconds(60);

    public UpstreamConfig {
        namesrv = namesrv == null ? List.of() : List.copyOf(namesrv);
        connectTimeout = positive("upstream.connect-timeout", connectTimeout, DEFAULT_CONNECT_TIMEOUT);
        requestTimeout = positive("upstream.request-timeout", requestTimeout, DEFAULT_REQUEST_TIMEOUT);
        longPollTimeout = positive("upstream.long-poll-timeout", longPollTimeout, DEFAULT_LONG_POLL_TIMEOUT);
        headerEncoding = Objects.requireNonNullElse(headerEncoding, HeaderEncoding.ROCKETMQ);
    }

    /** Default header encoding ({@code rocketmq}). */
    public UpstreamConfig(List<HostPort> namesrv, Duration connectTimeout, Duration requestTimeout, Duration longPollTimeout) {
        this(namesrv, connectTimeout, requestTimeout, longPollTimeout, null);
    }

    public UpstreamConfig withNamesrv(List<HostPort> list) {
        return new UpstreamConfig(list, connectTimeout, requestTimeout, longPollTimeout, headerEncoding);
    }

    static Duration positive(String path, Duration value, Duration fallback) {
        Duration d = Objects.requireNonNullElse(value, fallback);
        if (d.isZero() || d.isNegative()) {
            throw new ConfigException(path, "must be positive, was " + ConfigLoader.formatDuration(d));
        }
        return d;
    }
}
