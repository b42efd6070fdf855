package io.rmqgw.gateway.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * The header encoding of what the gateway sends to clients. {@code mirror}: the encoding the client
 * used (JSON-only third-party clients keep working); {@code rocketmq} or {@code json}: always that.
 */
public enum ResponseEncoding {
    MIRROR, ROCKETMQ, JSON;

    @JsonCreator
    public static ResponseEncoding parse(String text) {
        return Choices.parse(ResponseEncoding.class, "downstream.response-encoding", text);
    }

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
