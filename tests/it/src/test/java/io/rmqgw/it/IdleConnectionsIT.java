package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.ForkedGateway;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.FaultLoad;
import io.rmqgw.testing.Await;
import io.rmqgw.testing.RawRemoting;
import io.rmqgw.testing.UniqueNames;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A measurement, not a check of speed (issue 14, floods): the heap and direct memory a forked gateway holds for
 * many idle client connections. Not run by default (it opens thousands of sockets); run with
 * {@code -Drmqgw.it.idleConnections=10000}. Two kinds of idle connection, each in a fresh gateway:
 * <ul>
 *   <li>connected and silent (half on the name-server port, half on a broker port): no upstream is dialled;</li>
 *   <li>each sent one request to a broker port (GET_MAX_OFFSET) and got its answer: each holds its own upstream
 *       connection to the broker ({@code rmqgw.it.idleConnectionsWithUpstream}, 4,000 by default: the test JVM
 *       holds both ends of those broker connections, and {@code ulimit -n} is 20,000 here).</li>
 * </ul>
 * Memory is read from the gateway's {@code /metrics} after two full GCs ({@code jcmd PID GC.run}): heap used
 * (all pools), direct buffers ({@code jvm_buffer_memory_used_bytes{id="direct"}}), Netty's pooled direct memory
 * and the resident set, before the connections and with them. Printed as {@code IDLE-CONNECTIONS} lines.
 */
@RocketMqCluster
@EnabledIfSystemProperty(named = "rmqgw.it.idleConnections", matches = "\\d+")
class IdleConnectionsIT {

    private static final List<String> JVM = List.of("-Xmx512m", "-XX:MaxDirectMemorySize=512m", "-XX:+UseSerialGC",
        "-XX:-UsePerfData");
    private static final String DOWNSTREAM = "  idle-timeout: 0s\n";
    private static final String DIRECT = "jvm_buffer_memory_used_bytes{id=\"direct\"}";

    /** What the gateway held at one moment, after full GCs. */
    private record Memory(long heap, long direct, long nettyDirect, long resident, long fds, long clients,
                          long upstreams) {
        String minus(Memory base, int n) {
            return String.format(Locale.ROOT, "heap +%.1f MiB (%d bytes each), direct buffers +%.1f MiB, Netty pooled"
                    + " direct +%.1f MiB, resident +%.1f MiB (%d bytes each), open fds %d -> %d, client connections %d,"
                    + " upstream connections %d", mib(heap - base.heap), (heap - base.heap) / n,
                mib(direct - base.direct), mib(nettyDirect - base.nettyDirect), mib(resident - base.resident),
                (resident - base.resident) / n, base.fds, fds, clients, upstreams);
        }
    }

    @Test
    void idleClientConnectionsHoldLittleMemory(ClusterUnderTest shared) throws Exception {
        int silent = Integer.getInteger("rmqgw.it.idleConnections");
        int withUpstream = Integer.getInteger("rmqgw.it.idleConnectionsWithUpstream", Math.min(silent, 4_000));
        String topic = shared.topic("idle", 4);

        Run quiet = run(shared, topic, "silent", silent, (gateway, brokerPort, i) -> SocketChannel.open(
            new InetSocketAddress("127.0.0.1", i % 2 == 0 ? gateway.port() : brokerPort)));
        System.err.println("[it] IDLE-CONNECTIONS " + silent + " silent (opened in " + quiet.openMillis() + " ms): "
            + quiet.with().minus(quiet.before(), silent) + String.format(Locale.ROOT, "; before: heap %.1f MiB, direct"
            + " %.1f MiB, resident %.1f MiB", mib(quiet.before().heap), mib(quiet.before().direct),
            mib(quiet.before().resident)));
        assertEquals(silent, quiet.with().clients, "client connections the gateway holds");
        assertEquals(0, quiet.with().upstreams - quiet.before().upstreams, "a silent connection dialled an upstream");

        Run asked = run(shared, topic, "with-upstream", withUpstream, (gateway, brokerPort, i) -> {
            SocketChannel ch = SocketChannel.open(new InetSocketAddress("127.0.0.1", brokerPort));
            askMaxOffset(ch, topic, i % 4);
            return ch;
        });
        System.err.println("[it] IDLE-CONNECTIONS " + withUpstream + " after one request each (opened and answered in "
            + asked.openMillis() + " ms): " + asked.with().minus(asked.before(), withUpstream));
        assertTrue(asked.with().clients >= withUpstream, "client connections the gateway holds: " + asked.with().clients);
    }

    /** Opens the {@code i}-th connection. */
    private interface Opener {
        SocketChannel open(ForkedGateway gateway, int brokerPort, int i) throws IOException;
    }

    private record Run(Memory before, Memory with, long openMillis) {
    }

    /** In a fresh gateway ({@code topic} routes to the shared broker): memory before, {@code n} connections opened by {@code opener}, memory with them. */
    private static Run run(ClusterUnderTest shared, String topic, String kind, int n, Opener opener) throws Exception {
        try (ForkedGateway gateway = GatewayFixture.on(shared).forked(UniqueNames.workDir("idle-connections-" + kind))
            .jvmOptions(JVM).downstreamYaml(DOWNSTREAM).start()) {
            int brokerPort = brokerPort(gateway, topic);
            Memory before = measure(gateway);
            List<SocketChannel> open = new ArrayList<>();
            try {
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    open.add(opener.open(gateway, brokerPort, i));
                }
                long openMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                FaultLoad.await(n + " client connections at the gateway", Duration.ofSeconds(60),
                    () -> clients(gateway) >= n);
                return new Run(before, measure(gateway), openMillis);
            } finally {
                closeAll(open);
            }
        }
    }

    private static void closeAll(List<SocketChannel> open) {
        for (SocketChannel ch : open) {
            try {
                ch.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** The gateway port the shared broker is reached at, from a route answer. */
    private static int brokerPort(ForkedGateway gateway, String topic) throws Exception {
        GetRouteInfoRequestHeader h = new GetRouteInfoRequestHeader();
        h.setTopic(topic);
        try (RawRemoting raw = RawRemoting.connect(gateway.port(), Duration.ofSeconds(10))) {
            RawRemoting.Answer a = raw.invoke(RemotingCommand.createRequestCommand(RequestCode.GET_ROUTEINFO_BY_TOPIC, h),
                SerializeType.JSON);
            assertEquals(ResponseCode.SUCCESS, a.code(), a::toString);
            String body = new String(a.command().getBody(), StandardCharsets.UTF_8);
            Matcher m = Pattern.compile("127\\.0\\.0\\.1:(\\d+)").matcher(body);
            assertTrue(m.find(), body);
            return Integer.parseInt(m.group(1));
        }
    }

    /** One GET_MAX_OFFSET on {@code ch} (blocking), its answer read whole. */
    private static void askMaxOffset(SocketChannel ch, String topic, int queueId) throws IOException {
        GetMaxOffsetRequestHeader h = new GetMaxOffsetRequestHeader();
        h.setTopic(topic);
        h.setQueueId(queueId);
        ByteBuffer out = ByteBuffer.wrap(RawRemoting.frame(
            RemotingCommand.createRequestCommand(RequestCode.GET_MAX_OFFSET, h), SerializeType.JSON));
        while (out.hasRemaining()) {
            ch.write(out);
        }
        ByteBuffer length = ByteBuffer.allocate(4);
        readFully(ch, length);
        ByteBuffer frame = ByteBuffer.allocate(length.getInt(0));
        readFully(ch, frame);
        RemotingCommand answer;
        try {
            answer = RemotingCommand.decode(frame.array());
        } catch (Exception e) {
            throw new IOException("undecodable answer", e);
        }
        assertEquals(ResponseCode.SUCCESS, answer.getCode(), answer::toString);
    }

    private static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new IOException("closed by the gateway");
            }
        }
    }

    private static long clients(ForkedGateway gateway) {
        try {
            return (long) ForkedGateway.sum(gateway.scrape(), "rmqgw_client_connections", "");
        } catch (Exception e) {
            return -1;
        }
    }

    private static Memory measure(ForkedGateway gateway) throws Exception {
        for (int i = 0; i < 2; i++) {
            Process gc = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                Long.toString(gateway.pid()), "GC.run").redirectErrorStream(true).start();
            gc.getInputStream().readAllBytes();
            assertTrue(gc.waitFor(60, TimeUnit.SECONDS) && gc.exitValue() == 0, "jcmd GC.run");
        }
        // Unreachable direct buffers are freed by the JDK's Cleaner thread a moment after the GC: read once the direct
        // total stands still between two scrapes.
        String[] last = {gateway.scrape()};
        Await.until("direct buffer memory settled after the GC", Duration.ofSeconds(10), () -> {
            String now = gateway.scrape();
            boolean settled = ForkedGateway.sample(now, DIRECT) == ForkedGateway.sample(last[0], DIRECT);
            last[0] = now;
            return settled;
        });
        String s = last[0];
        return new Memory((long) ForkedGateway.sum(s, "jvm_memory_used_bytes", "area=\"heap\""),
            (long) ForkedGateway.sample(s, DIRECT),
            (long) ForkedGateway.sample(s, "rmqgw_netty_pooled_memory_used_bytes{memory=\"direct\"}"),
            (long) ForkedGateway.sample(s, "process_resident_memory_bytes"),
            (long) ForkedGateway.sample(s, "process_open_fds"),
            (long) ForkedGateway.sum(s, "rmqgw_client_connections", ""),
            (long) ForkedGateway.sum(s, "rmqgw_upstream_connections", ""));
    }

    private static double mib(long bytes) {
        return bytes / (1024.0 * 1024);
    }
}
