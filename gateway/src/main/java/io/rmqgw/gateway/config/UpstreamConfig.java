package io.rmqgw.gateway.config;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * @param namesrv                    upstream name servers, tried in order with failover
 * @param connectTimeout             TCP connect timeout toward name servers and brokers
 * @param requestTimeout             how long a request may wait for its upstream response before the client gets SYSTEM_BUSY
 * @param longPollTimeout            the same for long-polling pulls, which brokers hold for up to 30 s
 * @param headerEncoding             the header encoding sent to brokers and name servers
 * @param namesrvAddressUrl          an HTTP address server answering {@code host:port;host:port}, as RocketMQ clients
 *                                   poll one; once it answered, its list replaces {@code namesrv}; null: none
 * @param namesrvAddressPollInterval how often that URL is polled
 * @param namesrvAddressTimeout      how long one poll may take (connect and answer)
 * @param acl                        credentials signing the gateway's own requests to brokers; null: unsigned
 * @param tls                        TLS toward brokers and name servers
 */
public record UpstreamConfig(List<HostPort> namesrv, Duration connectTimeout, Duration requestTimeout,
                             Duration longPollTimeout, HeaderEncoding headerEncoding, String namesrvAddressUrl,
                             Duration namesrvAddressPollInterval, Duration namesrvAddressTimeout,
                             @Secret UpstreamAclConfig acl, UpstreamTlsConfig tls) {

    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(3);
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_LONG_POLL_TIMEOUT = Duration.ofSeconds(60);
    /** RocketMQ clients poll their address server every 2 minutes. */
    public static final Duration DEFAULT_NAMESRV_ADDRESS_POLL_INTERVAL = Duration.ofMinutes(2);
    /** RocketMQ clients give their address server 3 seconds. */
    public static final Duration DEFAULT_NAMESRV_ADDRESS_TIMEOUT = Duration.ofSeconds(3);
    public static final Duration MIN_NAMESRV_ADDRESS_POLL_INTERVAL = Duration.ofMillis(100);

    public UpstreamConfig {
        namesrv = namesrv == null ? List.of() : List.copyOf(namesrv);
        connectTimeout = positive("upstream.connect-timeout", connectTimeout, DEFAULT_CONNECT_TIMEOUT);
        requestTimeout = positive("upstream.request-timeout", requestTimeout, DEFAULT_REQUEST_TIMEOUT);
        longPollTimeout = positive("upstream.long-poll-timeout", longPollTimeout, DEFAULT_LONG_POLL_TIMEOUT);
        headerEncoding = Objects.requireNonNullElse(headerEncoding, HeaderEncoding.ROCKETMQ);
        namesrvAddressUrl = namesrvAddressUrl == null || namesrvAddressUrl.isBlank() ? null : namesrvAddressUrl.trim();
        if (namesrvAddressUrl != null) {
            checkUrl(namesrvAddressUrl);
        }
        namesrvAddressPollInterval = positive("upstream.namesrv-address-poll-interval", namesrvAddressPollInterval,
            DEFAULT_NAMESRV_ADDRESS_POLL_INTERVAL);
        if (namesrvAddressPollInterval.compareTo(MIN_NAMESRV_ADDRESS_POLL_INTERVAL) < 0) {
            throw new ConfigException("upstream.namesrv-address-poll-interval", "must be at least 100ms, was "
                + ConfigLoader.formatDuration(namesrvAddressPollInterval));
        }
        namesrvAddressTimeout = positive("upstream.namesrv-address-timeout", namesrvAddressTimeout,
            DEFAULT_NAMESRV_ADDRESS_TIMEOUT);
        tls = Objects.requireNonNullElse(tls, UpstreamTlsConfig.DISABLED);
    }

    /** Unsigned gateway requests, plain TCP. */
    public UpstreamConfig(List<HostPort> namesrv, Duration connectTimeout, Duration requestTimeout,
                          Duration longPollTimeout, HeaderEncoding headerEncoding, String namesrvAddressUrl,
                          Duration namesrvAddressPollInterval, Duration namesrvAddressTimeout) {
        this(namesrv, connectTimeout, requestTimeout, longPollTimeout, headerEncoding, namesrvAddressUrl,
            namesrvAddressPollInterval, namesrvAddressTimeout, null, null);
    }

    /** No address server, default header encoding ({@code rocketmq}). */
    public UpstreamConfig(List<HostPort> namesrv, Duration connectTimeout, Duration requestTimeout, Duration longPollTimeout) {
        this(namesrv, connectTimeout, requestTimeout, longPollTimeout, null);
    }

    /** No address server. */
    public UpstreamConfig(List<HostPort> namesrv, Duration connectTimeout, Duration requestTimeout, Duration longPollTimeout,
                          HeaderEncoding headerEncoding) {
        this(namesrv, connectTimeout, requestTimeout, longPollTimeout, headerEncoding, null, null, null);
    }

    public UpstreamConfig withNamesrv(List<HostPort> list) {
        return new UpstreamConfig(list, connectTimeout, requestTimeout, longPollTimeout, headerEncoding,
            namesrvAddressUrl, namesrvAddressPollInterval, namesrvAddressTimeout, acl, tls);
    }

    /** A copy polling {@code url} (null: no address server) with this poll interval and timeout. */
    public UpstreamConfig withNamesrvAddressUrl(String url) {
        return new UpstreamConfig(namesrv, connectTimeout, requestTimeout, longPollTimeout, headerEncoding,
            url, namesrvAddressPollInterval, namesrvAddressTimeout, acl, tls);
    }

    /** A copy signing the gateway's own requests with {@code credentials} (null: unsigned). */
    public UpstreamConfig withAcl(UpstreamAclConfig credentials) {
        return new UpstreamConfig(namesrv, connectTimeout, requestTimeout, longPollTimeout, headerEncoding,
            namesrvAddressUrl, namesrvAddressPollInterval, namesrvAddressTimeout, credentials, tls);
    }

    /** A copy with TLS toward brokers and name servers set so. */
    public UpstreamConfig withTls(UpstreamTlsConfig replacement) {
        return new UpstreamConfig(namesrv, connectTimeout, requestTimeout, longPollTimeout, headerEncoding,
            namesrvAddressUrl, namesrvAddressPollInterval, namesrvAddressTimeout, acl, replacement);
    }

    /** {@link #namesrvAddressUrl()} as a URI, or null. */
    public URI namesrvAddressUri() {
        return namesrvAddressUrl == null ? null : URI.create(namesrvAddressUrl);
    }

    private static void checkUrl(String url) {
        String path = "upstream.namesrv-address-url";
        String expected = "must be an http:// or https:// URL such as http://10.0.0.9:8080/rocketmq/nsaddr, was '"
            + url + "'";
        URI uri;
        try {
            uri = new URI(url);
        } catch (java.net.URISyntaxException e) {
            throw new ConfigException(path, expected + " (" + e.getReason() + ")");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new ConfigException(path, expected);
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw new ConfigException(path, expected + " (no host)");
        }
    }

    static Duration positive(String path, Duration value, Duration fallback) {
        Duration d = Objects.requireNonNullElse(value, fallback);
        if (d.isZero() || d.isNegative()) {
            throw new ConfigException(path, "must be positive, was " + ConfigLoader.formatDuration(d));
        }
        return d;
    }
}
