package io.rmqgw.cli;

import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.runtime.ConfigSource;
import io.rmqgw.gateway.runtime.Errors;
import io.rmqgw.gateway.runtime.GatewayRunner;
import io.rmqgw.gateway.runtime.Summary;
import io.rmqgw.tools.VersionProvider;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code rmqgw start}: runs the gateway in the foreground until SIGTERM or SIGINT. */
@Command(name = "start",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    header = "Start the gateway and run until SIGTERM or Ctrl-C.",
    description = {
        "Starts the gateway in the foreground. SIGTERM or Ctrl-C stop it: no new clients, in-flight requests"
            + " finish for up to drain-timeout, then everything closes.",
        "The configuration reloads without a restart when the file changes, on SIGHUP, on POST /reload at the"
            + " admin port and with 'rmqgw reload' (options given here still apply); settings bound to sockets"
            + " (listen, broker-ports, admin.listen, ...) are reported as needing a restart.",
        "In embedded mode (the shipped default) an in-process Apache RocketMQ name server and broker (cluster"
            + " DefaultCluster, broker broker-a) start first and become the upstream.",
        "Options override the configuration file.%n"},
    footerHeading = "%nExit codes:%n",
    footer = {
        "  0  stopped normally",
        "  1  failed to start (the reason is printed on one line)",
        "  2  configuration or usage error"})
final class StartCommand implements Callable<Integer> {

    @ParentCommand
    Main main;

    @Spec
    CommandSpec spec;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
        description = "The YAML configuration. Default: " + Main.DEFAULT_CONFIG + " in the working directory, else in"
            + " the rmqgw installation, else built-in defaults (which then need --namesrv or --embedded).")
    Path config;

    @Option(names = "--namesrv", paramLabel = "ADDR[;ADDR...]",
        description = "Upstream name servers, RocketMQ style: host:port, several separated by ';' (quote them in"
            + " a shell). Overrides upstream.namesrv and turns embedded mode off.")
    String namesrv;

    @Option(names = "--listen", paramLabel = "HOST:PORT",
        description = "Where clients connect (the namesrvAddr they use). Overrides listen.")
    String listen;

    @Option(names = "--advertise", paramLabel = "HOST",
        description = "The host clients are told to reach the gateway's broker listeners at. Overrides"
            + " advertise-host; needed with --listen 0.0.0.0:PORT.")
    String advertise;

    @Option(names = "--embedded",
        description = "Start an in-process RocketMQ name server and broker and relay to them (embedded.enabled:"
            + " true). Cannot be combined with --namesrv.")
    boolean embedded;

    @Option(names = "--store-dir", paramLabel = "DIR",
        description = "Where the embedded broker keeps its messages and logs. Overrides embedded.store-dir.")
    String storeDir;

    /** A configuration and the file it came from ({@code null}: built-in defaults). */
    record Resolved(GatewayConfig config, Path file) {
    }

    @Override
    public Integer call() throws Exception {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Map<String, Object> overrides = overrides();
        Path file = config != null ? main.resolve(config) : main.defaultConfig();
        Resolved resolved;
        try {
            resolved = resolve(file, overrides);
        } catch (ConfigException e) {
            printConfigError(err, e, file, overrides);
            return Main.CONFIG_ERROR;
        }
        GatewayConfig c = resolved.config();
        out.println("rmqgw " + VersionProvider.version() + " starting with "
            + (file == null ? "built-in defaults" : main.display(file)));
        out.flush();
        GatewayRunner.Started started;
        try {
            started = main.runner().start(c, new ConfigSource(file, overrides,
                file == null ? null : main.display(file)), out);
        } catch (ConfigException e) {
            printConfigError(err, e, file, overrides);
            return Main.CONFIG_ERROR;
        } catch (Exception e) {
            err.println("rmqgw: failed to start: " + Errors.oneLine(e));
            return Main.START_FAILED;
        }
        Summary.printRunning(out, started);
        out.flush();
        main.runner().runUntilStopped(started);
        return Main.OK;
    }

    /** The configuration {@code start} would run with, flags applied (tests call this too). */
    Resolved resolve() {
        Map<String, Object> overrides = overrides();
        Path file = config != null ? main.resolve(config) : main.defaultConfig();
        return resolve(file, overrides);
    }

    private static Resolved resolve(Path file, Map<String, Object> overrides) {
        GatewayConfig c = file == null ? ConfigLoader.defaults(overrides) : ConfigLoader.load(file, overrides);
        return new Resolved(c, file);
    }

    /** The options as configuration keys; refuses malformed option values as usage errors. */
    private Map<String, Object> overrides() {
        if (embedded && namesrv != null) {
            throw new ParameterException(spec.commandLine(),
                "--embedded and --namesrv exclude each other (embedded mode replaces the upstream name servers)");
        }
        Map<String, Object> o = new LinkedHashMap<>();
        if (listen != null) {
            check(() -> HostPort.parse("--listen", listen));
            o.put("listen", listen.trim());
        }
        if (advertise != null) {
            if (advertise.isBlank()) {
                throw new ParameterException(spec.commandLine(), "--advertise: must not be empty");
            }
            o.put("advertise-host", advertise.trim());
        }
        if (namesrv != null) {
            check(() -> {
                if (ConfigLoader.parseAddressList("--namesrv", namesrv).isEmpty()) {
                    throw new ConfigException("--namesrv", "needs at least one host:port");
                }
            });
            o.put("upstream.namesrv", namesrv.trim());
            o.put("embedded.enabled", false);
        }
        if (embedded) {
            o.put("embedded.enabled", true);
        }
        if (storeDir != null) {
            if (storeDir.isBlank()) {
                throw new ParameterException(spec.commandLine(), "--store-dir: must not be empty");
            }
            o.put("embedded.store-dir", storeDir);
        }
        return o;
    }

    private void check(Runnable validation) {
        try {
            validation.run();
        } catch (ConfigException e) {
            throw new ParameterException(spec.commandLine(), e.getMessage());
        }
    }

    /** The option that sets a configuration key, for error messages. */
    private static String optionFor(String path) {
        return switch (path) {
            case "listen" -> "--listen";
            case "advertise-host" -> "--advertise";
            case "upstream.namesrv" -> "--namesrv";
            case "embedded.enabled" -> "--embedded";
            case "embedded.store-dir" -> "--store-dir";
            default -> null;
        };
    }

    private void printConfigError(PrintWriter err, ConfigException e, Path file, Map<String, Object> overrides) {
        String option = optionFor(e.path());
        if (option != null && overrides.containsKey(e.path())) {
            err.println("rmqgw: " + option + ": " + e.reason());
            return;
        }
        err.println("rmqgw: configuration error in " + (file == null ? "built-in defaults (no configuration file)"
            : main.display(file)) + ": " + e.getMessage());
        if (file == null && "upstream.namesrv".equals(e.path())) {
            err.println("rmqgw: pass -c FILE, --namesrv HOST:PORT or --embedded (see 'rmqgw start --help')");
        } else if (option != null) {
            err.println("rmqgw: " + (file == null ? "set it with " : "fix it there or override it with ") + option);
        }
    }
}
