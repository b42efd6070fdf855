package io.rmqgw.tools;

/**
 * A value refused by one of the shared parsers ({@link Durations}, {@link HostPort}): {@link #what()} names the
 * setting or option it was given for (empty when the caller adds that itself), {@link #reason()} says what is
 * wrong, in words meant for users. The message is {@code what: reason}.
 */
public final class InvalidValueException extends IllegalArgumentException {

    private final String what;
    private final String reason;

    public InvalidValueException(String what, String reason) {
        super(what == null || what.isEmpty() ? reason : what + ": " + reason);
        this.what = what == null ? "" : what;
        this.reason = reason;
    }

    /** The setting or option, as the caller named it; may be empty. */
    public String what() {
        return what;
    }

    /** Why the value was refused, without {@link #what()}. */
    public String reason() {
        return reason;
    }
}
