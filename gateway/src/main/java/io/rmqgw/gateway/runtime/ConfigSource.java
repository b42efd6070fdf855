package io.rmqgw.gateway.runtime;

import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import java.nio.file.Path;
import java.util.Map;

/**
 * Where {@code rmqgw start} got its configuration: the file (null: built-in defaults) and the command-line
 * overrides. A reload reads the same file again with the same overrides.
 *
 * @param file      the configuration file, or null
 * @param overrides option values as configuration keys ({@code upstream.namesrv}, ...)
 * @param display   how messages name the file
 */
public record ConfigSource(Path file, Map<String, Object> overrides, String display) {

    public ConfigSource {
        overrides = Map.copyOf(overrides);
        if (display == null) {
            display = file == null ? "built-in defaults" : file.toString();
        }
    }

    /** Reads the configuration again; throws {@link io.rmqgw.gateway.config.ConfigException} when it is invalid. */
    public GatewayConfig load() {
        return file == null ? ConfigLoader.defaults(overrides) : ConfigLoader.load(file, overrides);
    }
}
