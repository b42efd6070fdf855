package io.rmqgw.gateway.core;

import io.rmqgw.codec.frame.RemotingFrame;

/**
 * One step of a role's request path, before the request's handler (RocketMQ's {@code RPCHook}, Kroxylicious'
 * request filters): name checks, rate limits, topic labels, a feature taking the request. A role's filters run in
 * the order they were added to its {@link HandlerTable}, each for the codes it was added for, once per request and
 * before any upstream is dialed. A filter that decodes the header does so through {@link Exchange#header}, so one
 * decode serves the whole chain and the forward. On the connection's event loop.
 */
@FunctionalInterface
public interface RequestFilter {

    /**
     * The request to go on with: {@code request} itself, or a replacement with the same header (a body rewritten),
     * {@code request} then released; null when this filter answered it, dropped it or took it to answer later
     * ({@link Exchange#answer}), having taken ownership of {@code request}. Takes ownership of {@code request}:
     * one whose header cannot be decoded is released and the exception rethrown (the connection closes).
     */
    RemotingFrame filter(Exchange exchange, RemotingFrame request);

    /**
     * Whether the filter may read the body now (asked per large frame, so it may change with the settings): requests
     * it sees are then stored whole, never streamed through.
     */
    default boolean readsBody() {
        return false;
    }
}
