package io.rmqgw.gateway.config;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Locale;

/**
 * The header encoding the gateway sends to brokers and name servers. {@code rocketmq}: the compact
 * binary encoding, which brokers decode without JSON parsing or reflection; {@code json}: JSON;
 * {@code preserve}: whatever the client sent.
 */
public enum HeaderEncoding {
    ROCKETMQ, JSON, PRESERVE;

    @JsonCreator
    public static HeaderEncoding parse(String text) {
        return Choices.parse(HeaderEncoding.class, "upstream.header-encoding", text);
    }

    @JsonValue
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }
}
