package io.rmqgw.gateway.config;

/** A refused setting: the path of the key (as written in YAML) and why. */
public final class ConfigException extends RuntimeException {

    private final String path;
    private final String reason;

    public ConfigException(String path, String reason) {
        super(path + ": " + reason);
        this.path = path;
        this.reason = reason;
    }

    public String path() {
        return path;
    }

    public String reason() {
        return reason;
    }
}
