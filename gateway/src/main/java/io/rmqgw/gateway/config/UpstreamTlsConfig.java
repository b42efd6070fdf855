package io.rmqgw.gateway.config;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.Objects;

/**
 * TLS on every connection the gateway opens to brokers and name servers: the per-client relayed ones
 * and its own pooled ones. As RocketMQ clients with {@code tls.enable=true} and no
 * {@code tls.client.authServer}, it trusts any server certificate unless {@code trustCert} names the ones
 * to trust; the host name is not checked (routes name brokers by IP address).
 *
 * @param enabled   TLS toward brokers and name servers (every one: RocketMQ's own clients do the same)
 * @param trustCert PEM certificates (a CA or the servers' own) the servers must chain to; null: any
 */
public record UpstreamTlsConfig(Boolean enabled, String trustCert) {

    public static final UpstreamTlsConfig DISABLED = new UpstreamTlsConfig(null, null);

    public UpstreamTlsConfig {
        enabled = Objects.requireNonNullElse(enabled, Boolean.FALSE);
        trustCert = trustCert == null || trustCert.isBlank() ? null : trustCert.trim();
        if (enabled && trustCert != null) {
            checkCertificates(trustCert);
        }
    }

    private static void checkCertificates(String file) {
        String path = "upstream.tls.trust-cert";
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            throw new ConfigException(path, "no such file: " + file);
        }
        try (InputStream in = Files.newInputStream(p)) {
            if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
                throw new ConfigException(path, file + " holds no certificate (PEM expected)");
            }
        } catch (IOException e) {
            throw new ConfigException(path, "cannot read " + file + ": " + e.getMessage());
        } catch (CertificateException e) {
            throw new ConfigException(path, "cannot read " + file + " as PEM certificates: " + e.getMessage());
        }
    }
}
