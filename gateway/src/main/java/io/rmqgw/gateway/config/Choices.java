package io.rmqgw.gateway.config;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** Parses a lower-case choice into an enum constant, naming the allowed values on refusal. */
final class Choices {

    private Choices() {
    }

    static <E extends Enum<E>> E parse(Class<E> type, String path, String text) {
        String wanted = text == null ? "" : text.trim().replace('-', '_').toUpperCase(Locale.ROOT);
        for (E e : type.getEnumConstants()) {
            if (e.name().equals(wanted)) {
                return e;
            }
        }
        throw new ConfigException(path, "must be one of " + Arrays.stream(type.getEnumConstants())
            .map(e -> e.name().toLowerCase(Locale.ROOT).replace('_', '-')).collect(Collectors.joining(", "))
            + ", was '" + text + "'");
    }
}
