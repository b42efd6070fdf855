package io.rmqgw.gateway.config;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * TLS on the client-facing listeners (the name-server port and every broker port), for RocketMQ
 * clients started with {@code -Dtls.enable=true}. Every key applies to connections accepted after a
 * reload; the certificate and key files are read again on every reload and whenever they change
 * (checked every {@code fileCheckInterval}), so a renewed certificate needs no restart.
 *
 * @param enabled           TLS on the client listeners
 * @param certFile          the certificate chain, PEM (the server's certificate first)
 * @param keyFile           the private key, PKCS#8 PEM ({@code BEGIN PRIVATE KEY}, or {@code BEGIN ENCRYPTED
 *                          PRIVATE KEY} with {@code keyPassword}); convert an RSA key with
 *                          {@code openssl pkcs8 -topk8 -nocrypt}
 * @param keyPassword       the key's password, or null for an unencrypted key
 * @param mode              {@code permissive} (TLS and plain) or {@code enforcing} (TLS only)
 * @param fileCheckInterval how often the files are checked for changes; 0 checks them on reloads only
 */
public record TlsConfig(Boolean enabled, String certFile, String keyFile, @Secret String keyPassword, TlsMode mode,
                        Duration fileCheckInterval) {

    public static final Duration DEFAULT_FILE_CHECK_INTERVAL = Duration.ofSeconds(10);
    public static final Duration MIN_FILE_CHECK_INTERVAL = Duration.ofMillis(100);

    /** TLS off. */
    public static final TlsConfig DISABLED = new TlsConfig(null, null, null, null, null, null);

    public TlsConfig {
        enabled = Objects.requireNonNullElse(enabled, Boolean.FALSE);
        mode = Objects.requireNonNullElse(mode, TlsMode.PERMISSIVE);
        fileCheckInterval = Objects.requireNonNullElse(fileCheckInterval, DEFAULT_FILE_CHECK_INTERVAL);
        if (!fileCheckInterval.isZero() && fileCheckInterval.compareTo(MIN_FILE_CHECK_INTERVAL) < 0) {
            throw new ConfigException("tls.file-check-interval", "must be 0s (reloads only) or at least 100ms, was "
                + ConfigLoader.formatDuration(fileCheckInterval));
        }
        certFile = blankToNull(certFile);
        keyFile = blankToNull(keyFile);
        keyPassword = keyPassword == null || keyPassword.isEmpty() ? null : keyPassword;
        if (enabled) {
            readable("tls.cert-file", certFile);
            readable("tls.key-file", keyFile);
        }
    }

    /** TLS on with these files, permissive, the default file check interval. */
    public static TlsConfig of(Path certFile, Path keyFile, TlsMode mode) {
        return new TlsConfig(true, certFile.toString(), keyFile.toString(), null, mode, null);
    }

    /** A copy with another mode. */
    public TlsConfig withMode(TlsMode replacement) {
        return new TlsConfig(enabled, certFile, keyFile, keyPassword, replacement, fileCheckInterval);
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    private static void readable(String path, String file) {
        if (file == null) {
            throw new ConfigException(path, "is required when tls.enabled is true");
        }
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            throw new ConfigException(path, "no such file: " + file);
        }
        if (!Files.isReadable(p)) {
            throw new ConfigException(path, "cannot read " + file + ": permission denied");
        }
    }

    /** Hides the password from logs and reload answers. */
    @Override
    public String toString() {
        return "TlsConfig[enabled=" + enabled + ", certFile=" + certFile + ", keyFile=" + keyFile + ", keyPassword="
            + (keyPassword == null ? "none" : "***") + ", mode=" + mode.label() + ", fileCheckInterval="
            + ConfigLoader.formatDuration(fileCheckInterval) + "]";
    }
}
