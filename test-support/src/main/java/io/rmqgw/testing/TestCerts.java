package io.rmqgw.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * Two self-signed test certificates with their PKCS#8 PEM keys ({@code CN=rmqgw-test-a} and
 * {@code CN=rmqgw-test-b}, for 127.0.0.1, valid until 2126; see the README beside them), and a TLS
 * client that trusts anything, to see which certificate a server presents.
 */
public final class TestCerts {

    /** Certificate {@code a} or {@code b}. */
    public enum Cert {
        A, B;

        public String commonName() {
            return "rmqgw-test-" + name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    private TestCerts() {
    }

    /** Writes {@code cert} to {@code certFile} and its key to {@code keyFile} (replacing them, atomically each). */
    public static void write(Cert cert, Path certFile, Path keyFile) {
        String n = cert.name().toLowerCase(java.util.Locale.ROOT);
        copy("tls/cert-" + n + ".pem", certFile);
        copy("tls/key-" + n + ".pem", keyFile);
    }

    private static void copy(String resource, Path target) {
        try (InputStream in = TestCerts.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("missing test resource " + resource);
            }
            Files.createDirectories(target.toAbsolutePath().getParent());
            Path tmp = target.resolveSibling(target.getFileName() + ".tmp");
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A client TLS context that trusts any server certificate (as RocketMQ clients do by default). */
    public static SSLContext trustAll() {
        try {
            SSLContext ssl = SSLContext.getInstance("TLS");
            ssl.init(null, new TrustManager[] {new TrustAll()}, null);
            return ssl;
        } catch (java.security.GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The subject CN of the certificate a TLS server at 127.0.0.1:{@code port} presents (trusting anything). */
    public static String presentedCommonName(int port) throws Exception {
        try (SSLSocket socket = (SSLSocket) trustAll().getSocketFactory().createSocket("127.0.0.1", port)) {
            socket.setSoTimeout(5_000);
            socket.startHandshake();
            X509Certificate peer = (X509Certificate) socket.getSession().getPeerCertificates()[0];
            String dn = peer.getSubjectX500Principal().getName();
            return dn.startsWith("CN=") ? dn.substring(3).split(",")[0] : dn;
        }
    }

    private static final class TrustAll implements X509TrustManager {
        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) {
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            return new X509Certificate[0];
        }
    }
}
