package io.rmqgw.cli;

import io.rmqgw.gateway.runtime.Errors;
import io.rmqgw.gateway.runtime.GatewayProcess;
import io.rmqgw.gateway.runtime.GatewayRunner;
import io.rmqgw.tools.Subcommand;
import io.rmqgw.tools.VersionProvider;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.ServiceLoader;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The {@code rmqgw} command. */
@Command(name = "rmqgw",
    mixinStandardHelpOptions = true,
    versionProvider = VersionProvider.class,
    sortOptions = false,
    usageHelpAutoWidth = true,
    synopsisSubcommandLabel = "COMMAND",
    description = "A RocketMQ remoting-protocol gateway: clients point namesrvAddr at it, and it relays their"
        + " name-server and broker traffic to a RocketMQ cluster (or to an embedded one).%n",
    // the tools (bench, probe) come from their own modules: see commandLine
    subcommands = {StartCommand.class, CheckConfigCommand.class, ReloadCommand.class},
    footerHeading = "%nExit codes:%n",
    footer = {
        "  0  success",
        "  1  failed to start (the reason is printed on one line)",
        "  2  configuration or usage error",
        "",
        "Run 'rmqgw COMMAND --help' for a command's options."})
public final class Main implements Callable<Integer> {

    public static final int OK = 0;
    public static final int START_FAILED = 1;
    public static final int CONFIG_ERROR = 2;

    /** The configuration used when no {@code -c}/FILE is given and it exists. */
    public static final String DEFAULT_CONFIG = "conf/gateway.yaml";

    private final GatewayRunner runner;
    private final Path workingDir;
    private final String home;

    @Spec
    CommandSpec spec;

    /** The real thing: embedded cluster and gateway in this process; installation from {@code -Drmqgw.home}. */
    public Main() {
        this(process(), Path.of(""), System.getProperty("rmqgw.home"));
    }

    /** The gateway process as {@code rmqgw start} runs it: log levels applied to logback, embedded mode available. */
    public static GatewayProcess process() {
        return new GatewayProcess(new LogbackLevels(), EmbeddedMode.STARTER);
    }

    /**
     * @param runner     starts and runs the gateway ({@code start})
     * @param workingDir where relative paths and the default {@value #DEFAULT_CONFIG} are looked up first
     * @param home       the installation directory ({@code bin/rmqgw} sets it), looked up second; may be null
     */
    public Main(GatewayRunner runner, Path workingDir, String home) {
        this.runner = Objects.requireNonNull(runner);
        this.workingDir = Objects.requireNonNull(workingDir);
        this.home = home;
    }

    public static void main(String[] args) {
        // RocketMQ's jars bring a second SLF4J provider (a bridge to their shaded logging): rmqgw logs via logback
        if (System.getProperty("slf4j.provider") == null) {
            System.setProperty("slf4j.provider", "ch.qos.logback.classic.spi.LogbackServiceProvider");
            if (System.getProperty("slf4j.internal.verbosity") == null) {
                System.setProperty("slf4j.internal.verbosity", "WARN");
            }
        }
        PrintWriter out = new PrintWriter(System.out, true, StandardCharsets.UTF_8);
        PrintWriter err = new PrintWriter(System.err, true, StandardCharsets.UTF_8);
        int code = run(new Main(), out, err, args);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Parses {@code args}, runs the command and returns its exit code; never throws for user errors. */
    public static int run(Main main, PrintWriter out, PrintWriter err, String... args) {
        return commandLine(main, out, err).execute(args);
    }

    /** The picocli command line, with rmqgw's error handling (tests parse with it too). */
    public static CommandLine commandLine(Main main, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(main);
        for (Object tool : tools()) {
            cl.addSubcommand(tool);
        }
        cl.addSubcommand(new CommandLine.HelpCommand());
        cl.setOut(out);
        cl.setErr(err);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setParameterExceptionHandler((ex, args) -> {
            CommandLine failed = ex.getCommandLine();
            PrintWriter e = failed.getErr();
            e.println(failed.getCommandSpec().qualifiedName() + ": " + ex.getMessage());
            if (!CommandLine.UnmatchedArgumentException.printSuggestions(ex, e)) {
                e.println("Try '" + failed.getCommandSpec().qualifiedName() + " --help' for more information.");
            }
            e.flush();
            return CONFIG_ERROR;
        });
        cl.setExecutionExceptionHandler((ex, failed, parseResult) -> {
            PrintWriter e = failed.getErr();
            e.println("rmqgw: " + Errors.oneLine(ex));
            e.flush();
            return START_FAILED;
        });
        return cl;
    }

    /** The subcommands other modules offer ({@link Subcommand}), by name. */
    static List<Subcommand> tools() {
        return ServiceLoader.load(Subcommand.class, Main.class.getClassLoader()).stream()
            .map(ServiceLoader.Provider::get)
            .sorted(Comparator.comparing(t -> t.getClass().getAnnotation(Command.class).name()))
            .toList();
    }

    /** {@code rmqgw} without a command: show the usage, it is a usage error. */
    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("rmqgw: a command is required");
        spec.commandLine().usage(err);
        return CONFIG_ERROR;
    }

    GatewayRunner runner() {
        return runner;
    }

    /** {@code file} against the working directory. */
    Path resolve(Path file) {
        return file.isAbsolute() ? file : workingDir.resolve(file);
    }

    /**
     * The configuration used without {@code -c}: {@value #DEFAULT_CONFIG} in the working directory, else in the
     * installation directory; {@code null} when neither exists (built-in defaults apply).
     */
    Path defaultConfig() {
        Path local = workingDir.resolve(DEFAULT_CONFIG);
        if (Files.isRegularFile(local)) {
            return local;
        }
        if (home != null && !home.isBlank()) {
            Path installed = Path.of(home).resolve(DEFAULT_CONFIG);
            if (Files.isRegularFile(installed)) {
                return installed;
            }
        }
        return null;
    }

    /** How a path is shown to users: as given when relative to the working directory, else absolute. */
    String display(Path file) {
        Path abs = file.toAbsolutePath().normalize();
        Path wd = workingDir.toAbsolutePath().normalize();
        return abs.startsWith(wd) && !abs.equals(wd) ? wd.relativize(abs).toString() : abs.toString();
    }
}
