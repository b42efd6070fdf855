package io.rmqgw.gateway.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The request codes whose registered handler a test method exercises end to end (a request of
 * that code through the gateway, and what the client or upstream sees). HandlerTableCoverageTest
 * fails when a code registered in {@code HandlerTables} has no such test.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.METHOD)
public @interface CoversCodes {
    int[] value();
}
