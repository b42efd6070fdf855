package io.rmqgw.gateway.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * What a client-facing listener accepts when TLS is on, as RocketMQ's own {@code tls.server.mode}:
 * {@code permissive} both TLS and plain connections (told apart by their first bytes), {@code enforcing}
 * TLS only (a plain connection is closed and counted as {@code tls_required}).
 */
public enum TlsMode {
    PERMISSIVE, ENFORCING;

    @JsonCreator
    public static TlsMode parse(String text) {
        return Choices.parse(TlsMode.class, "tls.mode", text);
    }

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
