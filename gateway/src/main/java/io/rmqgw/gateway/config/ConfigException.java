package io.rmqgw.gateway.config;

/**
 * A refused setting: the path of the key as written in YAML (for example
 * {@code upstream.request-timeout}, or {@code upstream.namesrv[1]} for a list entry) and why.
 * An empty path means the problem is not tied to one key (unreadable file, YAML syntax).
 * The message is meant for users as is: no stack trace needed.
 */
public final class ConfigException extends RuntimeException {

    private final String path;
    private final String reason;

    public ConfigException(String path, String reason) {
        super(path == null || path.isEmpty() ? reason : path + ": " + reason);
        this.path = path == null ? "" : path;
        this.reason = reason;
    }

    /** The key's full path, or an empty string when the problem concerns the whole file. */
    public String path() {
        return path;
    }

    public String reason() {
        return reason;
    }
}
