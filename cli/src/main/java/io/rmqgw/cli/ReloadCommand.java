package io.rmqgw.cli;

import io.rmqgw.gateway.admin.AdminServer;
import io.rmqgw.gateway.admin.ReloadOutcome;
import io.rmqgw.gateway.config.AdminConfig;
import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.runtime.Errors;
import io.rmqgw.tools.VersionProvider;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code rmqgw reload}: asks a running gateway to reload its configuration (POST /reload on its admin port). */
@Command(name = "reload",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    header = "Make a running gateway reload its configuration.",
    description = {
        "Sends POST /reload to the gateway's admin port and prints what happened: the settings applied without"
            + " a restart (upstream name servers and timeouts, name checks, header encodings, metric options, log"
            + " levels), those that changed but need a restart (listen, broker-ports, admin.listen, ...; said once,"
            + " then listed as still pending), or why"
            + " the new configuration was refused (its path and reason; the running one stays in force).",
        "The gateway reads its own configuration file again, with the options it was started with. The admin"
            + " address comes from --admin, else from admin.listen in the configuration file (-c, default "
            + Main.DEFAULT_CONFIG + "), else " + "127.0.0.1:9877.%n"},
    footerHeading = "%nExit codes:%n",
    footer = {
        "  0  applied, or unchanged",
        "  1  refused: the new configuration is invalid (the running one stays)",
        "  2  the gateway could not be reached, or a usage error"})
final class ReloadCommand implements Callable<Integer> {

    static final int REFUSED = 1;
    static final int UNREACHABLE = 2;

    @ParentCommand
    Main main;

    @Spec
    CommandSpec spec;

    @Option(names = "--admin", paramLabel = "HOST:PORT",
        description = "The gateway's admin address. Default: admin.listen of the configuration file, else 127.0.0.1:9877.")
    String admin;

    @Option(names = {"-c", "--config"}, paramLabel = "FILE",
        description = "The configuration file to take admin.listen from (only that key is read: the file may be the"
            + " invalid one the gateway is about to refuse). Default: " + Main.DEFAULT_CONFIG + ".")
    Path config;

    @Option(names = "--timeout", paramLabel = "DURATION", defaultValue = "30s",
        description = "How long to wait for the answer. Default: ${DEFAULT-VALUE}.")
    String timeout;

    @Option(names = "--json", description = "Print the gateway's JSON answer as is.")
    boolean json;

    @Option(names = "--token-file", paramLabel = "FILE",
        description = "A file whose first line is the admin bearer token. Default: admin.token or admin.token-file"
            + " of the configuration file, if set.")
    Path tokenFile;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Duration wait;
        HostPort target;
        try {
            wait = ConfigLoader.parseDuration("--timeout", timeout);
            if (wait.isZero()) {
                throw new ConfigException("--timeout", "must be positive");
            }
            target = target(err);
        } catch (ConfigException e) {
            err.println("rmqgw reload: " + e.getMessage());
            return UNREACHABLE;
        }
        String host = target.host();
        if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
            host = "127.0.0.1"; // listening everywhere: ask on loopback
        }
        if (host.indexOf(':') >= 0 && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        URI uri = URI.create("http://" + host + ":" + target.port() + AdminServer.RELOAD_PATH);
        HttpResponse<String> response;
        try {
            HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(wait.compareTo(Duration.ofSeconds(5)) < 0 ? wait : Duration.ofSeconds(5)).build();
            HttpRequest.Builder request = HttpRequest.newBuilder(uri).timeout(wait).POST(HttpRequest.BodyPublishers.noBody());
            String token = token(err);
            if (token != null) {
                request.header("Authorization", "Bearer " + token);
            }
            response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
        } catch (HttpTimeoutException e) {
            err.println("rmqgw reload: no answer from " + uri + " within " + ConfigLoader.formatDuration(wait));
            return UNREACHABLE;
        } catch (ConnectException e) {
            err.println("rmqgw reload: cannot reach the admin port at " + target + ": connection refused (is the"
                + " gateway running, with admin.enabled: true? --admin HOST:PORT names another address)");
            return UNREACHABLE;
        } catch (IOException e) {
            err.println("rmqgw reload: cannot reach the admin port at " + target + ": " + Errors.oneLine(e));
            return UNREACHABLE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println("rmqgw reload: interrupted");
            return UNREACHABLE;
        }
        ReloadOutcome outcome;
        try {
            outcome = ReloadOutcome.fromJson(response.body());
        } catch (IllegalArgumentException e) {
            err.println("rmqgw reload: " + uri + " answered HTTP " + response.statusCode() + ", not a reload result: "
                + oneLine(response.body()));
            return UNREACHABLE;
        }
        if (json) {
            out.println(response.body().strip());
        } else {
            print(out, err, outcome, target);
        }
        return outcome.result() == ReloadOutcome.Result.REFUSED ? REFUSED : Main.OK;
    }

    /** The bearer token to send: --token-file, else the configuration file's; null when neither has one. */
    private String token(PrintWriter err) {
        try {
            if (tokenFile != null) {
                return new AdminConfig(null, null, null, null, null, main.resolve(tokenFile).toString(), null)
                    .bearerToken();
            }
            Path file = config != null ? main.resolve(config) : main.defaultConfig();
            return file == null || !java.nio.file.Files.isRegularFile(file) ? null : ConfigLoader.adminToken(file);
        } catch (ConfigException e) {
            err.println("rmqgw reload: no admin token: " + e.getMessage());
            return null;
        }
    }

    private HostPort target(PrintWriter err) {
        if (admin != null) {
            return HostPort.parse("--admin", admin);
        }
        Path file = config != null ? main.resolve(config) : main.defaultConfig();
        if (file == null) {
            return AdminConfig.DEFAULT_LISTEN;
        }
        try {
            return ConfigLoader.adminListen(file);
        } catch (ConfigException e) {
            if (config != null) {
                throw new ConfigException("", "cannot read admin.listen from " + main.display(file) + ": "
                    + e.getMessage() + " (give --admin HOST:PORT)");
            }
            err.println("rmqgw reload: cannot read admin.listen from " + main.display(file) + " (" + e.getMessage()
                + "); trying " + AdminConfig.DEFAULT_LISTEN);
            return AdminConfig.DEFAULT_LISTEN;
        }
    }

    private static void print(PrintWriter out, PrintWriter err, ReloadOutcome o, HostPort target) {
        switch (o.result()) {
            case REFUSED -> {
                err.println("rmqgw reload: refused by the gateway at " + target + ": " + o.error());
                err.println("the running configuration stays in force");
            }
            case UNCHANGED -> {
                if (o.pendingRestart().isEmpty()) {
                    out.println("unchanged: the gateway at " + target + " already runs this configuration");
                } else {
                    out.println("nothing applied by the gateway at " + target);
                }
                printRestart(out, o);
            }
            case APPLIED -> {
                out.println("applied by the gateway at " + target);
                out.println("  applied        " + String.join(", ", o.applied()));
                printRestart(out, o);
            }
        }
    }

    /** Settings bound at start: those this reload met first, then those reported before and still waiting. */
    private static void printRestart(PrintWriter out, ReloadOutcome o) {
        if (!o.needsRestart().isEmpty()) {
            out.println("  needs restart  " + String.join(", ", o.needsRestart())
                + " (changed in the file; the running values stay until the next start)");
        }
        java.util.List<String> earlier = o.pendingRestart().stream().filter(p -> !o.needsRestart().contains(p)).toList();
        if (!earlier.isEmpty()) {
            out.println("  still pending a restart  " + String.join(", ", earlier));
        }
    }

    private static String oneLine(String s) {
        String t = s == null ? "" : s.replaceAll("\\s+", " ").strip();
        return t.length() > 200 ? t.substring(0, 197) + "..." : t;
    }
}
