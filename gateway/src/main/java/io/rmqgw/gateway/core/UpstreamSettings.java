package io.rmqgw.gateway.core;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.gateway.config.UpstreamTlsConfig;
import io.rmqgw.routing.NamesrvAddresses;
import java.io.File;
import javax.net.ssl.SSLException;

/**
 * The upstream settings a reload may change while connections stay up. Sessions read the current
 * value per dial and per request, so a reload applies to the next request without a restart.
 *
 * @param signer signs the requests the gateway originates ({@code upstream.acl}); null: they go unsigned
 * @param tls    the client TLS context of every upstream connection ({@code upstream.tls}); null: plain TCP
 */
public record UpstreamSettings(NamesrvAddresses namesrv, int connectTimeoutMillis, long requestTimeoutNanos,
                               long longPollTimeoutNanos, RequestSigner signer, SslContext tls) {

    /** Plain TCP. */
    public UpstreamSettings(NamesrvAddresses namesrv, int connectTimeoutMillis, long requestTimeoutNanos,
                            long longPollTimeoutNanos, RequestSigner signer) {
        this(namesrv, connectTimeoutMillis, requestTimeoutNanos, longPollTimeoutNanos, signer, null);
    }

    /** Unsigned gateway requests. */
    public UpstreamSettings(NamesrvAddresses namesrv, int connectTimeoutMillis, long requestTimeoutNanos,
                            long longPollTimeoutNanos) {
        this(namesrv, connectTimeoutMillis, requestTimeoutNanos, longPollTimeoutNanos, null, null);
    }

    public static UpstreamSettings of(UpstreamConfig config) {
        NamesrvAddresses namesrv = config.namesrv().isEmpty() ? null
            : NamesrvAddresses.of(config.namesrv().stream().map(HostPort::toString).toList());
        return new UpstreamSettings(namesrv, (int) config.connectTimeout().toMillis(),
            config.requestTimeout().toNanos(), config.longPollTimeout().toNanos(),
            RequestSigner.of(config.acl()), clientTls(config.tls()));
    }

    /** The context for {@code config}, or null when it is off; its files were checked by the config. */
    static SslContext clientTls(UpstreamTlsConfig config) {
        if (!config.enabled()) {
            return null;
        }
        String path = "upstream.tls.trust-cert";
        String file = config.trustCert();
        try {
            SslContextBuilder builder = SslContextBuilder.forClient();
            if (config.trustCert() == null) {
                builder.trustManager(InsecureTrustManagerFactory.INSTANCE); // as RocketMQ clients by default
            } else {
                builder.trustManager(new File(config.trustCert()));
            }
            if (config.certFile() != null) {
                // presented to servers with tls.server.need.client.auth
                path = "upstream.tls.key-file";
                file = config.keyFile();
                builder.keyManager(new File(config.certFile()), new File(config.keyFile()), config.keyPassword());
            }
            return builder.build();
        } catch (SSLException | IllegalArgumentException e) {
            throw new ConfigException(path, "cannot use " + file + ": " + e.getMessage());
        }
    }
}
