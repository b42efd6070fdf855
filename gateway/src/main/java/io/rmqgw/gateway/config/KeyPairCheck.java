package io.rmqgw.gateway.config;

import io.netty.handler.ssl.SslContext;
import java.io.ByteArrayInputStream;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;

/**
 * Whether a private key belongs to a certificate: a random challenge signed with the key must verify with the
 * certificate's public key. Netty builds a server context from any pair and only the handshakes fail, so a
 * certificate renewed file by file (the new certificate beside the old key for a moment) must be caught here.
 * Reads the PEM files with Netty's own readers (SslContext's protected helpers), as the context does. Used for the
 * listeners' certificate ({@code tls}) and the one presented to brokers ({@code upstream.tls}).
 */
public abstract class KeyPairCheck extends SslContext {

    private KeyPairCheck() {
    }

    /** Null when {@code key} matches the first certificate of {@code chain}; else why not. */
    public static String mismatch(byte[] chain, byte[] key, String password) {
        try {
            X509Certificate[] certificates = toX509Certificates(new ByteArrayInputStream(chain));
            PrivateKey privateKey = toPrivateKey(new ByteArrayInputStream(key), password);
            if (certificates == null || certificates.length == 0 || privateKey == null) {
                return "no certificate or no key";
            }
            PublicKey publicKey = certificates[0].getPublicKey();
            if (!publicKey.getAlgorithm().equals(privateKey.getAlgorithm())) {
                return "the key is " + privateKey.getAlgorithm() + ", the certificate's " + publicKey.getAlgorithm();
            }
            String algorithm = switch (privateKey.getAlgorithm()) {
                case "RSA" -> "SHA256withRSA";
                case "EC" -> "SHA256withECDSA";
                case "DSA" -> "SHA256withDSA";
                default -> privateKey.getAlgorithm(); // Ed25519, Ed448, EdDSA sign with their own name
            };
            byte[] challenge = new byte[32];
            new SecureRandom().nextBytes(challenge);
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(privateKey);
            signer.update(challenge);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(publicKey);
            verifier.update(challenge);
            return verifier.verify(signature) ? null : "the key does not belong to the certificate";
        } catch (GeneralSecurityException | java.io.IOException | RuntimeException e) {
            return "cannot read them: " + e.getMessage();
        }
    }
}
