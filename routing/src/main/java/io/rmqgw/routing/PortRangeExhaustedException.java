package io.rmqgw.routing;

/** Every block of three gateway ports in the configured range is taken. */
public class PortRangeExhaustedException extends RuntimeException {

    public PortRangeExhaustedException(String message) {
        super(message);
    }
}
