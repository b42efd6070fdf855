package io.rmqgw.routing;

/** A name server answer body that is not the JSON route or cluster shape the gateway can rewrite. */
public class MalformedRouteBodyException extends RuntimeException {

    public MalformedRouteBodyException(String message) {
        super(message);
    }

    public MalformedRouteBodyException(String message, Throwable cause) {
        super(message, cause);
    }
}
