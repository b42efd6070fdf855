package io.rmqgw.gateway.tls;

import io.netty.channel.Channel;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.KeyPairCheck;
import io.rmqgw.gateway.config.TlsConfig;
import io.rmqgw.gateway.config.TlsMode;
import io.rmqgw.metrics.GatewayMetrics;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TLS on the client-facing listeners: the server context in force, replaced whole when the settings or the
 * certificate and key files change. Each accepted connection takes the context in force at accept
 * ({@link #install}), so a new certificate reaches new connections while open ones keep theirs.
 *
 * <p>Files are read again on every {@link #apply} (a configuration reload) and every
 * {@code tls.file-check-interval} on the executor given to {@link #watch}; an unchanged file (same bytes)
 * changes nothing. A file that cannot be used is refused: on a reload with a {@link ConfigException} (the
 * reload is refused), on a file check with a warning and {@code rmqgw.tls.reloads{result="failed"}}; either
 * way the previous context stays in force.
 */
public final class ServerTls {

    private static final Logger log = LoggerFactory.getLogger(ServerTls.class);

    /** The context in force and what it was built from. */
    record Active(SslContext context, TlsMode mode, TlsConfig config, byte[] fingerprint, String subject) {
    }

    private final GatewayMetrics metrics;
    private volatile Active active;
    private volatile TlsConfig config = TlsConfig.DISABLED;
    private EventExecutor checker;
    private ScheduledFuture<?> check;
    private Duration checkInterval = Duration.ZERO;

    public ServerTls(GatewayMetrics metrics) {
        this.metrics = metrics;
    }

    /**
     * Applies {@code next}: TLS turned on or off, another mode, or other files; the files are read again even
     * when the settings are the same.
     *
     * @return whether the context in force changed
     * @throws ConfigException when a file cannot be read or does not hold a usable certificate or key
     */
    public synchronized boolean apply(TlsConfig next) {
        Active current = active;
        Active replacement = next.enabled() ? load(next, current) : null;
        config = next;
        reschedule();
        if (replacement == current) {
            return false;
        }
        active = replacement;
        if (replacement == null) {
            log.info("TLS on the client listeners is off");
        } else {
            log.info("TLS on the client listeners: {} mode, certificate {} ({}), key {}", next.mode().label(),
                next.certFile(), replacement.subject(), next.keyFile());
        }
        return true;
    }

    /** Checks the files every {@code tls.file-check-interval} on {@code executor} (until it shuts down). */
    public synchronized void watch(EventExecutor executor) {
        checker = executor;
        reschedule();
    }

    /** Stops checking the files. */
    public synchronized void stopWatching() {
        if (check != null) {
            check.cancel(false);
            check = null;
        }
        checker = null;
    }

    private void reschedule() {
        Duration wanted = config.enabled() ? config.fileCheckInterval() : Duration.ZERO;
        if (check != null && wanted.equals(checkInterval)) {
            return;
        }
        if (check != null) {
            check.cancel(false);
            check = null;
        }
        checkInterval = wanted;
        if (checker != null && !wanted.isZero() && !checker.isShuttingDown()) {
            long ms = wanted.toMillis();
            check = checker.scheduleWithFixedDelay(this::checkFiles, ms, ms, TimeUnit.MILLISECONDS);
        }
    }

    /** Reads the files again; a change replaces the context, a failure keeps the previous one. */
    synchronized void checkFiles() {
        Active current = active;
        if (current == null) {
            return;
        }
        try {
            Active replacement = load(current.config(), current);
            if (replacement != current) {
                active = replacement;
                metrics.tls().reload("applied");
                log.info("TLS certificate or key file changed: new connections get {}", replacement.subject());
            }
        } catch (ConfigException e) {
            metrics.tls().reload("failed");
            log.warn("TLS files changed but cannot be used, the previous certificate stays in force: {}",
                e.getMessage());
        } catch (RuntimeException e) {
            metrics.tls().reload("failed");
            log.warn("TLS file check failed, the previous certificate stays in force", e);
        }
    }

    /** Whether client listeners speak TLS now. */
    public boolean enabled() {
        return active != null;
    }

    /** The mode in force, or null when TLS is off. */
    public TlsMode mode() {
        Active a = active;
        return a == null ? null : a.mode();
    }

    /**
     * Puts the TLS detection first in an accepted connection's pipeline, with the context in force now; does
     * nothing when TLS is off.
     *
     * @param role the listener's role, for the close reasons counted
     */
    public void install(Channel channel, String role) {
        Active a = active;
        if (a != null) {
            channel.pipeline().addFirst(TlsSniffer.NAME, new TlsSniffer(a.context(), a.mode(), role, metrics));
        }
    }

    /** {@code current} itself when nothing changed, else a context built from the files as they are now. */
    private static Active load(TlsConfig next, Active current) {
        byte[] cert = read("tls.cert-file", next.certFile());
        byte[] key = read("tls.key-file", next.keyFile());
        byte[] fingerprint = fingerprint(cert, key, next.keyPassword());
        if (current != null && Arrays.equals(fingerprint, current.fingerprint())) {
            if (current.mode() == next.mode() && current.config().equals(next)) {
                return current;
            }
            return new Active(current.context(), next.mode(), next, fingerprint, current.subject());
        }
        Active built = new Active(build(next, cert, key), next.mode(), next, fingerprint, subjectOf(cert));
        String mismatch = KeyPairCheck.mismatch(cert, key, next.keyPassword());
        if (mismatch != null) {
            throw new ConfigException("tls.key-file", next.keyFile() + " does not go with " + next.certFile() + ": "
                + mismatch);
        }
        return built;
    }

    private static SslContext build(TlsConfig config, byte[] cert, byte[] key) {
        try {
            return SslContextBuilder.forServer(new ByteArrayInputStream(cert), new ByteArrayInputStream(key),
                config.keyPassword()).sslProvider(SslProvider.JDK).build();
        } catch (IOException | RuntimeException e) {
            String message = String.valueOf(e.getMessage());
            for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
                message += ": " + t.getMessage();
            }
            boolean aboutKey = message.toLowerCase(java.util.Locale.ROOT).contains("key");
            throw new ConfigException(aboutKey ? "tls.key-file" : "tls.cert-file", "cannot use "
                + (aboutKey ? config.keyFile() + " as a private key (PKCS#8 PEM expected)"
                : config.certFile() + " as a certificate chain (PEM expected)") + ": " + message);
        }
    }

    private static byte[] read(String path, String file) {
        if (file == null) {
            throw new ConfigException(path, "is required when tls.enabled is true");
        }
        try {
            return Files.readAllBytes(Path.of(file));
        } catch (IOException e) {
            throw new ConfigException(path, "cannot read " + file + ": " + e);
        }
    }

    private static byte[] fingerprint(byte[] cert, byte[] key, String password) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(cert);
            sha.update((byte) 0);
            sha.update(key);
            sha.update((byte) 0);
            if (password != null) {
                sha.update(password.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }
            return sha.digest();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The first certificate's subject and expiry, for the log. */
    private static String subjectOf(byte[] cert) {
        try {
            var certificate = (java.security.cert.X509Certificate) java.security.cert.CertificateFactory
                .getInstance("X.509").generateCertificate(new ByteArrayInputStream(cert));
            return certificate.getSubjectX500Principal().getName() + ", valid until "
                + certificate.getNotAfter().toInstant();
        } catch (java.security.cert.CertificateException | RuntimeException e) {
            return "subject unreadable";
        }
    }
}
