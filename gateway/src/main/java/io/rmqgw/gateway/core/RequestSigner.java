package io.rmqgw.gateway.core;

import io.netty.buffer.ByteBuf;
import io.rmqgw.gateway.config.UpstreamAclConfig;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Base64;
import java.util.Map;
import java.util.TreeMap;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signs a request the gateway originates the way RocketMQ's {@code AclClientRPCHook} does, so brokers
 * with ACL on (4.x plain ACL, 5.x ACL 2.0 authentication) accept it: the extFields get
 * {@code AccessKey}, then {@code Signature} = Base64(HmacSHA1(secret, the UTF-8 values of the extFields
 * sorted by key, {@code Signature} left out, followed by the body bytes)).
 */
public final class RequestSigner {

    static final String ACCESS_KEY = "AccessKey";
    static final String SIGNATURE = "Signature";
    /** A client's token means nothing under the gateway's key; it would only be signed along. */
    static final String SECURITY_TOKEN = "SecurityToken";
    private static final String ALGORITHM = "HmacSHA1";

    private final String accessKey;
    private final SecretKeySpec key;

    public RequestSigner(UpstreamAclConfig credentials) {
        this.accessKey = credentials.accessKey();
        this.key = new SecretKeySpec(credentials.secretKey().getBytes(StandardCharsets.UTF_8), ALGORITHM);
    }

    /** The signer for {@code credentials}, or null when there are none (requests go unsigned). */
    public static RequestSigner of(UpstreamAclConfig credentials) {
        return credentials == null ? null : new RequestSigner(credentials);
    }

    /**
     * {@code extFields} (may be null; not modified) with the gateway's AccessKey and a Signature over them
     * and {@code body} (may be null; its reader index is left where it was). Fields with null values are
     * left out, as RocketMQ leaves them out of the encoded header. Any AccessKey, Signature or SecurityToken
     * already there (a client's, copied into a request the gateway builds) is replaced.
     */
    public Map<String, String> sign(Map<String, String> extFields, ByteBuf body) {
        TreeMap<String, String> signed = new TreeMap<>();
        if (extFields != null) {
            extFields.forEach((k, v) -> {
                if (v != null && !k.equals(SIGNATURE) && !k.equals(SECURITY_TOKEN)) {
                    signed.put(k, v);
                }
            });
        }
        signed.put(ACCESS_KEY, accessKey);
        Mac mac = newMac();
        for (String value : signed.values()) {
            mac.update(value.getBytes(StandardCharsets.UTF_8));
        }
        if (body != null && body.isReadable()) {
            for (ByteBuffer part : body.nioBuffers(body.readerIndex(), body.readableBytes())) {
                mac.update(part);
            }
        }
        signed.put(SIGNATURE, Base64.getEncoder().encodeToString(mac.doFinal()));
        return signed;
    }

    public String accessKey() {
        return accessKey;
    }

    private Mac newMac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA1 is not available in this JVM", e);
        }
    }

    @Override
    public String toString() {
        return "RequestSigner[accessKey=" + accessKey + "]";
    }
}
