package io.rmqgw.gateway.edge;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;

/**
 * A scripted broker behind a real gateway: the name server names the broker at start, so the
 * gateway has a listener for it, and a client on that port talks to the broker through the broker
 * role. The broker answers every request (not oneway, not response) with whatever
 * {@link #answers} returns for it (null: silence); by default SUCCESS in the request's encoding.
 */
public final class BrokerBehindGateway implements AutoCloseable {

    /** The default answer: SUCCESS with the request's opaque, in the encoding the request arrived in. */
    public static final Function<Wire.Frame, byte[]> SUCCESS_IN_KIND = f -> Wire.response(Wire.SUCCESS, f.opaque())
        .type(f.serializeType()).remark("ok " + f.code()).bytes();

    public final ScriptedPeer broker;
    public final ScriptedPeer namesrv;
    public final TestGateway gateway;
    /** How the broker answers the next requests. */
    public final AtomicReference<Function<Wire.Frame, byte[]>> answers = new AtomicReference<>(SUCCESS_IN_KIND);

    private final Closer closer;

    private BrokerBehindGateway(ScriptedCluster cluster, Closer closer) {
        this.broker = cluster.broker();
        this.namesrv = cluster.namesrv();
        this.gateway = cluster.gateway();
        this.closer = closer;
    }

    /** Starts broker, name server and a gateway configured by {@code options} (namesrv and a 5 s request timeout set). */
    public static BrokerBehindGateway start(UnaryOperator<TestGateway.Builder> options) throws Exception {
        AtomicReference<BrokerBehindGateway> self = new AtomicReference<>();
        Closer closer = Closer.eachTest();
        try {
            ScriptedCluster cluster = ScriptedCluster.options().broker((c, f) -> {
                BrokerBehindGateway s = self.get();
                if (s != null && !f.isResponse() && !f.isOneway()) {
                    byte[] answer = s.answers.get().apply(f);
                    if (answer != null) {
                        c.send(answer);
                    }
                }
            })
                // generous: the first requests of a cold JVM must not time out (tests that want timeouts set their own)
                .gateway(g -> options.apply(g.requestTimeout(Duration.ofSeconds(5)))).start(closer);
            BrokerBehindGateway s = new BrokerBehindGateway(cluster, closer);
            self.set(s);
            return s;
        } catch (Exception | Error e) {
            try {
                closer.close();
            } catch (Exception closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /** The gateway's advertised port for the scripted broker. */
    public int port() {
        return gateway.brokerPort(broker.address());
    }

    public RawClient connect() throws IOException {
        return RawClient.connect(port());
    }

    public InetSocketAddress brokerAddress() {
        return new InetSocketAddress("127.0.0.1", broker.port());
    }

    public InetSocketAddress gatewayAddress() {
        return new InetSocketAddress("127.0.0.1", port());
    }

    /** Closes the gateway, then the name server and the broker. */
    @Override
    public void close() {
        try {
            closer.close();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            // none of the three closes with a checked exception; kept unchecked for the callers' teardowns
            throw new IllegalStateException("closing the broker behind the gateway", e);
        }
    }

    /**
     * Asserts that {@code actual} carries the same command as {@code expected} as rocketmq-remoting
     * reads them: code, opaque, flag, version, language, remark, every extFields entry and the body
     * bytes. Only the serialize type may differ.
     */
    public static void assertSameCommand(Wire.Frame expected, Wire.Frame actual) {
        RemotingCommand e = expected.command();
        RemotingCommand a = actual.command();
        String what = "frame code " + e.getCode() + " opaque " + e.getOpaque();
        assertEquals(e.getCode(), a.getCode(), what + ": code");
        assertEquals(e.getOpaque(), a.getOpaque(), what + ": opaque");
        assertEquals(e.getFlag(), a.getFlag(), what + ": flag");
        assertEquals(e.getVersion(), a.getVersion(), what + ": version");
        assertEquals(e.getLanguage(), a.getLanguage(), what + ": language");
        assertEquals(e.getRemark(), a.getRemark(), what + ": remark");
        assertEquals(expected.ext(), actual.ext(), what + ": extFields");
        assertArrayEquals(expected.body(), actual.body(), what + ": body");
    }
}
