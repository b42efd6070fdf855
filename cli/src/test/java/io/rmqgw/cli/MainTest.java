package io.rmqgw.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.gateway.runtime.Errors;
import io.rmqgw.gateway.runtime.GatewayRunner;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/** Parsing, config resolution and exit codes; nothing is started (a recording runner stands in). */
class MainTest {

    @TempDir
    Path dir;

    private RecordingRunner runner;
    private StringWriter out;
    private StringWriter err;

    /** Records what start would run with; fails on demand. */
    static final class RecordingRunner implements GatewayRunner {
        final List<GatewayConfig> started = new ArrayList<>();
        Exception failure;
        int waited;

        @Override
        public Started start(GatewayConfig config, PrintWriter out) throws Exception {
            if (failure != null) {
                throw failure;
            }
            started.add(config);
            return new Started(config, new InetSocketAddress(config.listen().host(), config.listen().port()),
                Map.of("127.0.0.1:10911", "127.0.0.1:20900"), null);
        }

        @Override
        public void runUntilStopped(Started started) {
            waited++;
        }
    }

    @BeforeEach
    void setUp() {
        runner = new RecordingRunner();
        out = new StringWriter();
        err = new StringWriter();
    }

    private int run(String... args) {
        return Main.run(new Main(runner, dir, null), new PrintWriter(out, true), new PrintWriter(err, true), args);
    }

    private Path write(String name, String yaml) throws IOException {
        return Files.writeString(dir.resolve(name), yaml);
    }

    private static Path shippedConfig() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("conf/gateway.yaml"))) {
                return d.resolve("conf/gateway.yaml");
            }
        }
        throw new IllegalStateException("conf/gateway.yaml not found");
    }

    private GatewayConfig onlyStarted() {
        assertEquals(1, runner.started.size(), () -> "out: " + out + "\nerr: " + err);
        return runner.started.get(0);
    }

    // ------------------------------------------------------------------ start: flags over config

    @Test
    void flagsOverrideTheConfigFile() throws IOException {
        Path file = write("gw.yaml", """
            listen: 127.0.0.1:9000
            advertise-host: old.example
            upstream:
              namesrv: a:9876
              request-timeout: 5s
            """);
        int code = run("start", "-c", file.toString(), "--listen", "0.0.0.0:9100", "--advertise", "gw.local",
            "--namesrv", "x:1;y:2");
        assertEquals(Main.OK, code, err::toString);
        GatewayConfig c = onlyStarted();
        assertEquals(new HostPort("0.0.0.0", 9100), c.listen());
        assertEquals("gw.local", c.advertiseHost());
        assertEquals(List.of(new HostPort("x", 1), new HostPort("y", 2)), c.upstream().namesrv());
        assertEquals(Duration.ofSeconds(5), c.upstream().requestTimeout(), "the file's other keys stay");
        assertFalse(c.embedded().enabled());
        assertEquals(1, runner.waited);
        assertTrue(out.toString().contains("127.0.0.1:10911 -> 127.0.0.1:20900"), out::toString);
        assertTrue(out.toString().contains("namesrvAddr=gw.local:9100"), out::toString);
    }

    @Test
    void withoutFlagsTheFileApplies() throws IOException {
        Path file = write("gw.yaml", "listen: 127.0.0.1:9000\nupstream:\n  namesrv: [a:9876]\n");
        assertEquals(Main.OK, run("start", "--config", file.toString()), err::toString);
        GatewayConfig c = onlyStarted();
        assertEquals(9000, c.listen().port());
        assertEquals(List.of(new HostPort("a", 9876)), c.upstream().namesrv());
    }

    @Test
    void namesrvTurnsTheShippedEmbeddedModeOff() {
        assertEquals(Main.OK, run("start", "-c", shippedConfig().toString(), "--namesrv", "ns:9876"), err::toString);
        GatewayConfig c = onlyStarted();
        assertFalse(c.embedded().enabled());
        assertEquals(List.of(new HostPort("ns", 9876)), c.upstream().namesrv());
    }

    @Test
    void embeddedAndStoreDirForceEmbeddedMode() throws IOException {
        Path file = write("gw.yaml", "upstream:\n  namesrv: a:9876\nembedded:\n  enabled: false\n");
        assertEquals(Main.OK, run("start", "-c", file.toString(), "--embedded", "--store-dir", "/tmp/rmq-store"),
            err::toString);
        GatewayConfig c = onlyStarted();
        assertTrue(c.embedded().enabled());
        assertEquals("/tmp/rmq-store", c.embedded().storeDir());
    }

    @Test
    void defaultConfigIsConfGatewayYamlInTheWorkingDirectory() throws IOException {
        Files.createDirectories(dir.resolve("conf"));
        write("conf/gateway.yaml", "listen: 127.0.0.1:9555\nembedded:\n  enabled: true\n");
        assertEquals(Main.OK, run("start"), err::toString);
        assertEquals(9555, onlyStarted().listen().port());
        assertTrue(out.toString().contains("conf/gateway.yaml"), out::toString);
    }

    @Test
    void defaultConfigFallsBackToTheInstallation() throws IOException {
        Path home = Files.createDirectories(dir.resolve("home"));
        Files.createDirectories(home.resolve("conf"));
        Files.writeString(home.resolve("conf/gateway.yaml"), "listen: 127.0.0.1:9666\nembedded: {enabled: true}\n");
        Path work = Files.createDirectories(dir.resolve("work"));
        Main main = new Main(runner, work, home.toString());
        assertEquals(home.resolve("conf/gateway.yaml"), main.defaultConfig());
        assertNull(new Main(runner, work, null).defaultConfig());
    }

    @Test
    void noConfigAtAllNeedsNamesrvOrEmbedded() {
        assertEquals(Main.CONFIG_ERROR, run("start"));
        assertTrue(err.toString().contains("upstream.namesrv"), err::toString);
        assertTrue(err.toString().contains("--namesrv"), err::toString);
        assertEquals(Main.OK, run("start", "--namesrv", "127.0.0.1:9876"), err::toString);
    }

    // ------------------------------------------------------------------ start: errors and exit codes

    @Test
    void badConfigFileExitsTwoWithThePath() throws IOException {
        Path file = write("bad.yaml", "upstream:\n  namesrv: a:9876\n  request-timeout: 0s\n");
        assertEquals(Main.CONFIG_ERROR, run("start", "-c", file.toString()));
        assertTrue(runner.started.isEmpty());
        assertEquals("rmqgw: configuration error in bad.yaml: upstream.request-timeout: must be positive, was 0s\n",
            err.toString());
    }

    @Test
    void missingConfigFileExitsTwo() {
        assertEquals(Main.CONFIG_ERROR, run("start", "-c", "nope.yaml"));
        assertTrue(err.toString().contains("no such file"), err::toString);
    }

    @Test
    void malformedFlagsAreUsageErrors() {
        assertEquals(Main.CONFIG_ERROR, run("start", "--namesrv", "ns:9876", "--listen", "nohostport"));
        assertTrue(err.toString().contains("--listen: must be host:port"), err::toString);
        assertTrue(err.toString().contains("rmqgw start --help"), err::toString);
        assertFalse(err.toString().contains("Exception"), err::toString);
        assertTrue(runner.started.isEmpty());
    }

    @Test
    void malformedNamesrvFlag() {
        assertEquals(Main.CONFIG_ERROR, run("start", "--namesrv", "a:1;b"));
        assertTrue(err.toString().contains("--namesrv: must be host:port"), err::toString);
        err.getBuffer().setLength(0);
        assertEquals(Main.CONFIG_ERROR, run("start", "--namesrv", ";"));
        assertTrue(err.toString().contains("--namesrv: needs at least one host:port"), err::toString);
    }

    @Test
    void embeddedAndNamesrvExcludeEachOther() {
        assertEquals(Main.CONFIG_ERROR, run("start", "--embedded", "--namesrv", "a:1"));
        assertTrue(err.toString().contains("exclude each other"), err::toString);
    }

    @Test
    void wildcardListenWithoutAdvertiseNamesTheFlag() {
        assertEquals(Main.CONFIG_ERROR, run("start", "--namesrv", "a:1", "--listen", "0.0.0.0:9876"));
        assertTrue(err.toString().contains("advertise-host: must be an address clients can reach"), err::toString);
        assertTrue(err.toString().contains("--advertise"), err::toString);
    }

    @Test
    void unknownOptionIsAUsageError() {
        assertEquals(Main.CONFIG_ERROR, run("start", "--listn", "a:1"));
        assertTrue(err.toString().contains("--listn"), err::toString);
    }

    @Test
    void startFailureExitsOneWithOneLine() {
        runner.failure = new IllegalStateException("could not bind 127.0.0.1:9876",
            new BindException("Address already in use"));
        assertEquals(Main.START_FAILED, run("start", "--namesrv", "a:1"));
        String e = err.toString();
        assertEquals("rmqgw: failed to start: could not bind 127.0.0.1:9876: Address already in use\n", e);
        assertEquals(0, runner.waited);
    }

    @Test
    void configErrorDuringStartExitsTwo() {
        runner.failure = new ConfigException("broker-ports", "no free port left in 20900-20999");
        assertEquals(Main.CONFIG_ERROR, run("start", "--namesrv", "a:1"));
        assertTrue(err.toString().contains("broker-ports: no free port left"), err::toString);
    }

    // ------------------------------------------------------------------ check-config

    @Test
    void checkConfigPrintsOkAndASummary() {
        assertEquals(Main.OK, run("check-config", shippedConfig().toString()), err::toString);
        String o = out.toString();
        assertTrue(o.startsWith("OK: "), o);
        assertTrue(o.contains("clients connect to 127.0.0.1:9876"), o);
        assertTrue(o.contains("embedded RocketMQ (name server 127.0.0.1:19876, broker 127.0.0.1:10911"), o);
        assertTrue(o.contains("request-timeout: 30s"), o);
        assertEquals("", err.toString());
    }

    @Test
    void checkConfigRefusesABadFileWithPathAndReason() throws IOException {
        Path file = write("bad.yaml", "upstream:\n  namesrv: a:9876\n  request-timout: 5s\n");
        assertEquals(Main.CONFIG_ERROR, run("check-config", file.toString()));
        String e = err.toString();
        assertTrue(e.startsWith("bad.yaml: upstream.request-timout: unknown key (did you mean 'request-timeout'?)"), e);
        assertEquals(1, e.lines().count(), e);
        assertEquals("", out.toString());
    }

    @Test
    void checkConfigReportsEachKindOfError() throws IOException {
        Map<String, String> cases = Map.of(
            "listen: nope\nupstream: {namesrv: a:1}\n", "bad.yaml: listen: must be host:port",
            "upstream: {namesrv: [a:1, 'b:x']}\n", "bad.yaml: upstream.namesrv[1]: port is not a number",
            "upstream: {namesrv: a:1}\ndrain-timeout: 10\n", "bad.yaml: drain-timeout: needs a unit",
            "upstream: {namesrv: a:1}\nembedded: {enabled: maybe}\n", "bad.yaml: embedded.enabled: expected true or false",
            "upstream:\n  namesrv: a:1\n oops\n", "bad.yaml: YAML syntax error at line");
        for (Map.Entry<String, String> c : cases.entrySet()) {
            StringWriter e = new StringWriter();
            Path file = write("bad.yaml", c.getKey());
            int code = Main.run(new Main(runner, dir, null), new PrintWriter(new StringWriter()), new PrintWriter(e, true),
                "check-config", file.toString());
            assertEquals(Main.CONFIG_ERROR, code, c.getKey());
            assertTrue(e.toString().startsWith(c.getValue()), () -> c.getKey() + " -> " + e);
            assertFalse(e.toString().contains("Exception") || e.toString().contains("\tat "), e::toString);
        }
    }

    @Test
    void checkConfigMissingFileExitsTwo() {
        assertEquals(Main.CONFIG_ERROR, run("check-config", "missing.yaml"));
        assertTrue(err.toString().startsWith("missing.yaml: no such file"), err::toString);
        err.getBuffer().setLength(0);
        assertEquals(Main.CONFIG_ERROR, run("check-config"));
        assertTrue(err.toString().contains("no FILE given"), err::toString);
    }

    // ------------------------------------------------------------------ help and version

    @Test
    void helpOnEveryCommandExplainsEveryOption() {
        CommandLine cl = Main.commandLine(new Main(runner, dir, null), new PrintWriter(out), new PrintWriter(err));
        List<CommandLine> commands = new ArrayList<>();
        commands.add(cl);
        commands.add(cl.getSubcommands().get("start"));
        commands.add(cl.getSubcommands().get("check-config"));
        for (CommandLine c : commands) {
            for (String flag : List.of("--help", "-h")) {
                StringWriter help = new StringWriter();
                List<String> args = new ArrayList<>();
                if (c != cl) {
                    args.add(c.getCommandName());
                }
                args.add(flag);
                int code = Main.run(new Main(runner, dir, null), new PrintWriter(help, true), new PrintWriter(err, true),
                    args.toArray(String[]::new));
                assertEquals(0, code, flag);
                String text = help.toString();
                for (OptionSpec option : c.getCommandSpec().options()) {
                    assertTrue(option.description().length > 0 && !option.description()[0].isBlank(),
                        c.getCommandName() + " " + option.longestName() + " has no description");
                    for (String name : option.names()) {
                        assertTrue(text.contains(name), () -> c.getCommandName() + " help lacks " + name + ":\n" + text);
                    }
                }
                c.getCommandSpec().positionalParameters().forEach(p ->
                    assertTrue(text.contains(p.paramLabel()), () -> "help lacks " + p.paramLabel() + ":\n" + text));
            }
        }
    }

    @Test
    void startHelpListsTheFlags() {
        assertEquals(0, run("start", "--help"));
        String text = out.toString();
        for (String flag : List.of("-c, --config=FILE", "--namesrv=ADDR[;ADDR...]", "--listen=HOST:PORT",
            "--advertise=HOST", "--embedded", "--store-dir=DIR", "-h, --help", "-V, --version", "Exit codes")) {
            assertTrue(text.contains(flag), () -> "start --help lacks " + flag + ":\n" + text);
        }
    }

    @Test
    void helpSubcommandWorks() {
        assertEquals(0, run("help", "check-config"));
        assertTrue(out.toString().contains("Usage: rmqgw check-config"), out::toString);
    }

    @Test
    void versionPrintsTheVersion() {
        assertEquals(0, run("--version"));
        assertTrue(out.toString().startsWith("rmqgw "), out::toString);
        assertFalse(out.toString().contains("${"), out::toString);
        out.getBuffer().setLength(0);
        assertEquals(0, run("start", "--version"));
        assertTrue(out.toString().startsWith("rmqgw "), out::toString);
    }

    @Test
    void noCommandIsAUsageError() {
        assertEquals(Main.CONFIG_ERROR, run());
        assertTrue(err.toString().contains("a command is required"), err::toString);
        assertTrue(err.toString().contains("check-config"), err::toString);
    }

    @Test
    void oneLineErrors() {
        assertEquals("boom", Errors.oneLine(new RuntimeException("boom")));
        assertEquals("NullPointerException", Errors.oneLine(new NullPointerException()));
        assertEquals("outer: inner", Errors.oneLine(new RuntimeException("outer", new RuntimeException("inner"))));
        assertEquals("inner", Errors.oneLine(new RuntimeException(new IllegalStateException("inner"))));
        assertEquals("a b", Errors.oneLine(new RuntimeException("a\n   b")));
    }

    @Test
    void benchAndProbeAreRegisteredFromTheirModules() {
        assertEquals(0, run("--help"));
        String help = out.toString();
        assertTrue(help.contains("bench") && help.contains("probe"), help);
        List<String> order = List.of("\n  start ", "\n  check-config ", "\n  reload ", "\n  bench ", "\n  probe ",
            "\n  help ");
        for (int i = 1; i < order.size(); i++) {
            assertTrue(help.indexOf(order.get(i - 1)) >= 0 && help.indexOf(order.get(i - 1)) < help.indexOf(order.get(i)),
                help);
        }

        out.getBuffer().setLength(0);
        assertEquals(0, run("probe", "--help"));
        for (String expected : List.of("--namesrv", "--topic", "--group", "--rate", "--size", "--count", "--duration",
            "--timeout", "--latency-budget", "--json", "autoCreateTopicEnable", "Exit codes:", "usage error")) {
            assertTrue(out.toString().contains(expected), expected + " missing in:\n" + out);
        }
        out.getBuffer().setLength(0);
        assertEquals(0, run("bench", "latency", "--help"));
        assertTrue(out.toString().contains("--rate"), out::toString);

        // usage errors through rmqgw never start a client (nor a gateway: the recording runner saw nothing)
        assertEquals(Main.CONFIG_ERROR, run("probe", "--count", "1", "--duration", "1s"));
        assertTrue(err.toString().contains("rmqgw probe: --count and --duration exclude each other"), err::toString);
        assertEquals(Main.CONFIG_ERROR, run("bench", "produce", "--size", "0"));
        assertTrue(err.toString().contains("rmqgw bench produce: --size"), err::toString);
        assertEquals(Main.CONFIG_ERROR, run("bench"));
        assertEquals(List.of(), runner.started);
    }
}
