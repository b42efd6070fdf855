package io.rmqgw.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.runtime.ConfigReloader;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import io.rmqgw.testing.FreePorts;
import io.rmqgw.testing.RawRemoting;
import io.rmqgw.testing.ScriptedPeer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rmqgw reload} in-process against a real gateway (its admin port, {@code POST /reload}) with fake name
 * server and broker: it finds the admin port in the configuration file (even an invalid one), changes
 * upstream.request-timeout and names.topic-max-length on connections that stay open, and exits 0 applied or
 * unchanged, 1 refused (path and reason printed), 2 unreachable or usage error.
 */
@Timeout(60)
class ReloadCommandTest {

    private static final String TOPIC_20 = "Topic_of_20_chars___";

    @TempDir
    Path dir;

    private ScriptedPeer broker;
    private ScriptedPeer namesrv;
    private GatewayFiles files;
    private Gateway gateway;
    private GatewayMetrics metrics;
    private ConfigReloader reloader;
    private final AtomicBoolean brokerSilent = new AtomicBoolean();
    private StringWriter out;
    private StringWriter err;

    @BeforeEach
    void start() throws Exception {
        broker = ScriptedPeer.broker(code -> code == RequestCode.GET_MAX_OFFSET && brokerSilent.get());
        namesrv = ScriptedPeer.nameServer(broker.address());
        files = new GatewayFiles(dir, "  namesrv: " + namesrv.address() + "\n");
        files.write(files.yaml("20s", 127, ""));
        metrics = GatewayMetrics.inMemory();
        gateway = Gateway.start(ConfigLoader.load(files.file), metrics);
        reloader = ConfigReloader.builder(gateway, metrics, () -> ConfigLoader.load(files.file))
            .describedAs(files.file.toString()).build();
    }

    @AfterEach
    void stop() {
        if (reloader != null) {
            reloader.close();
        }
        if (gateway != null) {
            gateway.close(Duration.ZERO);
        }
        metrics.close();
        namesrv.close();
        broker.close();
    }

    private int reload(String... args) {
        out = new StringWriter();
        err = new StringWriter();
        String[] all = new String[args.length + 1];
        all[0] = "reload";
        System.arraycopy(args, 0, all, 1, args.length);
        return Main.run(new Main(new MainTest.RecordingRunner(), dir, null), new PrintWriter(out, true),
            new PrintWriter(err, true), all);
    }

    private int brokerPort() {
        Map<String, String> listeners = gateway.brokerListeners();
        String advertised = listeners.get(broker.address());
        return Integer.parseInt(advertised.substring(advertised.lastIndexOf(':') + 1));
    }

    private static RemotingCommand getMaxOffset() {
        GetMaxOffsetRequestHeader h = new GetMaxOffsetRequestHeader();
        h.setTopic("TopicA");
        h.setQueueId(0);
        return RemotingCommand.createRequestCommand(RequestCode.GET_MAX_OFFSET, h);
    }

    @Test
    void reloadAppliesNewTimeoutAndTopicLimitToOpenConnections() throws Exception {
        try (RawRemoting client = RawRemoting.connect(brokerPort(), Duration.ofSeconds(5));
             RawRemoting namesrvClient = RawRemoting.connect(gateway.listenAddress().getPort(), Duration.ofSeconds(5))) {
            assertEquals(ResponseCode.SUCCESS, client.invoke(GatewayFiles.send(TOPIC_20), SerializeType.JSON).command().getCode());
            assertEquals(ResponseCode.SUCCESS, namesrvClient.invoke(RemotingCommand.createRequestCommand(
                RequestCode.GET_KVLIST_BY_NAMESPACE, null), SerializeType.JSON).command().getCode());
            int brokerConnections = broker.connectionCount();
            int namesrvConnections = namesrv.connectionCount();

            files.write(files.yaml("300ms", 10, ""));
            assertEquals(Main.OK, reload("-c", files.file.toString()), () -> out + "\n" + err);
            String text = out.toString();
            assertTrue(text.startsWith("applied by the gateway at 127.0.0.1:" + files.admin), text);
            assertTrue(text.contains("applied        upstream, names, header encodings"), text);
            assertEquals("", err.toString());

            RemotingCommand refused = client.invoke(GatewayFiles.send(TOPIC_20), SerializeType.JSON).command();
            assertEquals(ResponseCode.INVALID_PARAMETER, refused.getCode(), refused.toString());
            assertTrue(refused.getRemark().endsWith("max length: 10"), refused.getRemark());
            brokerSilent.set(true);
            long t0 = System.nanoTime();
            RemotingCommand busy = client.invoke(getMaxOffset(), SerializeType.JSON).command();
            long millis = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(ResponseCode.SYSTEM_BUSY, busy.getCode(), busy.toString());
            assertTrue(millis >= 300 && millis < 3000, millis + " ms with request-timeout 300ms");
            brokerSilent.set(false);
            assertEquals(ResponseCode.SUCCESS, client.invoke(GatewayFiles.send("TopicA"), SerializeType.JSON).command().getCode());
            assertEquals(ResponseCode.SUCCESS, namesrvClient.invoke(RemotingCommand.createRequestCommand(
                RequestCode.GET_KVLIST_BY_NAMESPACE, null), SerializeType.JSON).command().getCode());
            assertEquals(brokerConnections, broker.connectionCount(), "the upstream connection to the broker stayed");
            assertEquals(namesrvConnections, namesrv.connectionCount(), "the upstream connection to the name server stayed");

            // again: unchanged; --admin and --json
            assertEquals(Main.OK, reload("--admin", "127.0.0.1:" + files.admin, "--json"), () -> out + "\n" + err);
            assertEquals("{\"result\":\"unchanged\",\"applied\":[],\"needsRestart\":[],\"pendingRestart\":[]}",
                out.toString().strip());
            assertEquals(1, MeterReadings.of(metrics).configReloads("applied"), 0.0);
            assertEquals(1, MeterReadings.of(metrics).configReloads("unchanged"), 0.0);
        }
    }

    @Test
    void anInvalidFileIsRefusedWithPathAndReasonExitOne() throws Exception {
        files.write(files.yaml("300ms", 0, ""));
        // the default configuration of the working directory names the admin port
        Files.createDirectories(dir.resolve("conf"));
        Files.copy(files.file, dir.resolve(Main.DEFAULT_CONFIG));
        assertEquals(ReloadCommand.REFUSED, reload(), () -> out + "\n" + err);
        assertTrue(err.toString().contains("refused by the gateway at 127.0.0.1:" + files.admin
            + ": names.topic-max-length: must be between 1 and 32767, was 0"), err::toString);
        assertTrue(err.toString().contains("the running configuration stays in force"), err::toString);
        assertEquals(127, gateway.config().names().topicMaxLength());
        assertEquals(1, MeterReadings.of(metrics).configReloads("refused"), 0.0);
    }

    @Test
    void aListenChangeIsReportedAsNeedingARestart() throws Exception {
        int other = FreePorts.port();
        files.write(files.yaml("20s", 127, "").replace("listen: 127.0.0.1:" + files.listen + "\n",
            "listen: 127.0.0.1:" + other + "\n"));
        assertEquals(Main.OK, reload("-c", files.file.toString()), () -> out + "\n" + err);
        assertTrue(out.toString().startsWith("nothing applied by the gateway"), out::toString);
        assertTrue(out.toString().contains("needs restart  listen (changed in the file; the running values stay until the"
            + " next start)"), out::toString);
        assertEquals(files.listen, gateway.listenAddress().getPort());

        // said once: the next reload reports it as still pending, and that nothing was applied
        out.getBuffer().setLength(0);
        assertEquals(Main.OK, reload("-c", files.file.toString()), () -> out + "\n" + err);
        assertEquals("nothing applied by the gateway at 127.0.0.1:" + files.admin + "\n  still pending a restart  listen",
            out.toString().strip().replace("\r", ""));
    }

    @Test
    void anUnreachableGatewayOrABadOptionExitsTwo() throws Exception {
        int dead;
        dead = FreePorts.port();
        assertEquals(ReloadCommand.UNREACHABLE, reload("--admin", "127.0.0.1:" + dead));
        assertTrue(err.toString().contains("cannot reach the admin port at 127.0.0.1:" + dead), err::toString);
        assertEquals(ReloadCommand.UNREACHABLE, reload("--admin", "nowhere"));
        assertTrue(err.toString().contains("--admin: must be host:port"), err::toString);
        assertEquals(ReloadCommand.UNREACHABLE, reload("--admin", "127.0.0.1:" + files.admin, "--timeout", "soon"));
        assertTrue(err.toString().contains("--timeout"), err::toString);
        assertEquals(ReloadCommand.UNREACHABLE, reload("-c", dir.resolve("missing.yaml").toString()));
        assertTrue(err.toString().contains("no such file"), err::toString);
        assertEquals(Main.CONFIG_ERROR, reload("--bogus"));
        assertEquals(0, MeterReadings.of(metrics).configReloads("applied") + MeterReadings.of(metrics).configReloads("refused")
            + MeterReadings.of(metrics).configReloads("unchanged"), 0.0);
    }

    @Test
    void helpDescribesTheCommand() {
        assertEquals(0, reload("--help"));
        for (String s : new String[] {"--admin=HOST:PORT", "-c, --config=FILE", "--timeout=DURATION", "--json",
            "Exit codes", "refused"}) {
            assertTrue(out.toString().contains(s), () -> "reload --help lacks " + s + ":\n" + out);
        }
    }
}
