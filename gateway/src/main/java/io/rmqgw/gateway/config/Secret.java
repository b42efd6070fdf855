package io.rmqgw.gateway.config;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * A record component holding a secret (a password, a token, credentials): read from the configuration like any
 * other key, never written back out ({@link ConfigLoader#toYaml} leaves it out, and {@code check-config} and the
 * start summary print that).
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.RECORD_COMPONENT)
@interface Secret {
}
