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
    private final boolean relative;

    public ConfigException(String path, String reason) {
        this(path, reason, false);
    }

    private ConfigException(String path, String reason, boolean relative) {
        super(path == null || path.isEmpty() ? reason : path + ": " + reason);
        this.path = path == null ? "" : path;
        this.reason = reason;
        this.relative = relative;
    }

    /**
     * A refused key of a list entry, which does not know its own index: {@code key} is relative to the
     * entry ({@code per-real-queue}), and {@link ConfigLoader} puts the entry's path in front
     * ({@code virtual-queues[1].per-real-queue}).
     */
    public static ConfigException inEntry(String key, String reason) {
        return new ConfigException(key, reason, true);
    }

    /** Whether {@link #path()} is relative to a list entry (see {@link #inEntry}). */
    public boolean isRelative() {
        return relative;
    }

    /** The key's full path, or an empty string when the problem concerns the whole file. */
    public String path() {
        return path;
    }

    public String reason() {
        return reason;
    }
}
