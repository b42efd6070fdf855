package io.rmqgw.tools;

/**
 * A picocli command (annotated with {@code @Command}) that {@code rmqgw} offers as a subcommand. Modules list
 * theirs in {@code META-INF/services/io.rmqgw.tools.Subcommand}; the {@code rmqgw} command registers every one
 * on its class path under its {@code @Command} name, so a tool ships with its module, not with the launcher.
 */
public interface Subcommand {
}
