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
 * to trust; the host name is not checked (routes name brokers by IP address). With {@code certFile} and
 * {@code keyFile} it presents a client certificate, for servers that require one
 * ({@code tls.server.need.client.auth=require}).
 *
 * @param enabled     TLS toward brokers and name servers (every one: RocketMQ's own clients do the same)
 * @param trustCert   PEM certificates (a CA or the servers' own) the servers must chain to; null: any
 * @param certFile    the client certificate chain presented to the servers, PEM (its own certificate first); null:
 *                    none
 * @param keyFile     its private key, PKCS#8 PEM (as {@code tls.key-file}); with {@code certFile} or not at all
 * @param keyPassword the key's password, or null for an unencrypted key
 */
public record UpstreamTlsConfig(Boolean enabled, String trustCert, String certFile, String keyFile,
                                @Secret String keyPassword) {

    public static final UpstreamTlsConfig DISABLED = new UpstreamTlsConfig(null, null);

    public UpstreamTlsConfig {
        enabled = Objects.requireNonNullElse(enabled, Boolean.FALSE);
        trustCert = blankToNull(trustCert);
        certFile = blankToNull(certFile);
        keyFile = blankToNull(keyFile);
        keyPassword = keyPassword == null || keyPassword.isEmpty() ? null : keyPassword;
        if (enabled && trustCert != null) {
            checkCertificates(trustCert);
        }
        if (enabled && (certFile != null || keyFile != null)) {
            checkClientCertificate(certFile, keyFile, keyPassword);
        }
    }

    /** No client certificate. */
    public UpstreamTlsConfig(Boolean enabled, String trustCert) {
        this(enabled, trustCert, null, null, null);
    }

    /** A copy presenting this client certificate and key (unencrypted). */
    public UpstreamTlsConfig withClientCertificate(String chain, String key) {
        return new UpstreamTlsConfig(enabled, trustCert, chain, key, null);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    private static void checkCertificates(String file) {
        String path = "upstream.tls.trust-cert";
        try (InputStream in = Files.newInputStream(existing(path, file))) {
            if (CertificateFactory.getInstance("X.509").generateCertificates(in).isEmpty()) {
                throw new ConfigException(path, file + " holds no certificate (PEM expected)");
            }
        } catch (IOException e) {
            throw new ConfigException(path, "cannot read " + file + ": " + e.getMessage());
        } catch (CertificateException e) {
            throw new ConfigException(path, "cannot read " + file + " as PEM certificates: " + e.getMessage());
        }
    }

    /** Both files or neither, readable, and the key must belong to the chain's first certificate. */
    private static void checkClientCertificate(String certFile, String keyFile, String keyPassword) {
        if (certFile == null) {
            throw new ConfigException("upstream.tls.cert-file", "is required with upstream.tls.key-file");
        }
        if (keyFile == null) {
            throw new ConfigException("upstream.tls.key-file", "is required with upstream.tls.cert-file");
        }
        byte[] chain = read("upstream.tls.cert-file", certFile);
        byte[] key = read("upstream.tls.key-file", keyFile);
        String mismatch = KeyPairCheck.mismatch(chain, key, keyPassword);
        if (mismatch != null) {
            throw new ConfigException("upstream.tls.key-file", keyFile + " does not go with " + certFile + ": "
                + mismatch);
        }
    }

    private static Path existing(String path, String file) {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            throw new ConfigException(path, "no such file: " + file);
        }
        return p;
    }

    private static byte[] read(String path, String file) {
        try {
            return Files.readAllBytes(existing(path, file));
        } catch (IOException e) {
            throw new ConfigException(path, "cannot read " + file + ": " + e.getMessage());
        }
    }

    /** Hides the password from logs and reload answers. */
    @Override
    public String toString() {
        return "UpstreamTlsConfig[enabled=" + enabled + ", trustCert=" + trustCert + ", certFile=" + certFile
            + ", keyFile=" + keyFile + ", keyPassword=" + (keyPassword == null ? "none" : "***") + "]";
    }
}
