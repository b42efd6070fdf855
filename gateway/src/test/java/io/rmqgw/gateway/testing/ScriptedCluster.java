package io.rmqgw.gateway.testing;

import io.rmqgw.testing.Closer;
import io.rmqgw.testing.ScriptedPeer;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * Scripted brokers, a scripted name server whose cluster info names them ({@value #BROKER_A} first; or, with
 * {@link Options#noClusterInfo}, none), and a real gateway in front of the name server, all registered with a
 * {@link Closer} (closed gateway first).
 * Defaults: one ECHO broker, an ECHO name server, a gateway with {@link TestGateway}'s defaults.
 */
public final class ScriptedCluster {

    public static final String BROKER_A = "broker-a";

    /** Starts a scripted peer (a factory such as {@link ScriptedPeer#broker}). */
    @FunctionalInterface
    public interface PeerStarter {
        ScriptedPeer start() throws Exception;
    }

    private final Map<String, ScriptedPeer> brokers;
    private final ScriptedPeer namesrv;
    private final TestGateway gateway;

    private ScriptedCluster(Map<String, ScriptedPeer> brokers, ScriptedPeer namesrv, TestGateway gateway) {
        this.brokers = brokers;
        this.namesrv = namesrv;
        this.gateway = gateway;
    }

    public static Options options() {
        return new Options();
    }

    /** Broker-a. */
    public ScriptedPeer broker() {
        return broker(BROKER_A);
    }

    public ScriptedPeer broker(String name) {
        ScriptedPeer broker = brokers.get(name);
        if (broker == null) {
            throw new AssertionError("no scripted broker " + name + ": " + brokers.keySet());
        }
        return broker;
    }

    public ScriptedPeer namesrv() {
        return namesrv;
    }

    public TestGateway gateway() {
        return gateway;
    }

    /** What differs between tests; {@link #start} starts it. */
    public static final class Options {
        private final Map<String, PeerStarter> brokers = new LinkedHashMap<>();
        private Function<Map<String, String>, ScriptedPeer.Script> nameServer = addresses -> ScriptedPeer.Script.ECHO;
        private TestGateway.Builder gateway = TestGateway.builder();
        private boolean clusterInfo = true;

        private Options() {
            brokers.put(BROKER_A, () -> ScriptedPeer.start(ScriptedPeer.Script.ECHO));
        }

        /** Broker-a's script (default ECHO). */
        public Options broker(ScriptedPeer.Script script) {
            return broker(BROKER_A, script);
        }

        /** Broker-a as {@code starter} starts it. */
        public Options broker(PeerStarter starter) {
            return broker(BROKER_A, starter);
        }

        /** Another broker (or broker-a again), named in the cluster info after those added before. */
        public Options broker(String name, ScriptedPeer.Script script) {
            return broker(name, () -> ScriptedPeer.start(script));
        }

        public Options broker(String name, PeerStarter starter) {
            brokers.put(name, starter);
            return this;
        }

        /** The name server's script, from the brokers' addresses by name (default ECHO). */
        public Options nameServer(Function<Map<String, String>, ScriptedPeer.Script> script) {
            this.nameServer = script;
            return this;
        }

        /**
         * The name server answers GET_BROKER_CLUSTER_INFO with SYSTEM_ERROR, so the gateway binds no broker listener at
         * start, only when a route names the broker.
         */
        public Options noClusterInfo() {
            this.clusterInfo = false;
            return this;
        }

        /** Gateway settings on top of the defaults (the name server is added at start). */
        public Options gateway(UnaryOperator<TestGateway.Builder> settings) {
            this.gateway = settings.apply(gateway);
            return this;
        }

        /** Gateway settings made elsewhere (the name server is added at start). */
        public Options gateway(TestGateway.Builder settings) {
            this.gateway = settings;
            return this;
        }

        /** Starts brokers, name server and gateway, in that order, each registered with {@code closer}. */
        public ScriptedCluster start(Closer closer) throws Exception {
            Map<String, ScriptedPeer> started = new LinkedHashMap<>();
            Map<String, String> addresses = new LinkedHashMap<>();
            for (Map.Entry<String, PeerStarter> broker : brokers.entrySet()) {
                ScriptedPeer peer = closer.add(broker.getValue().start());
                started.put(broker.getKey(), peer);
                addresses.put(broker.getKey(), peer.address());
            }
            Map<String, String> readOnly = Collections.unmodifiableMap(addresses);
            ScriptedPeer namesrv = closer.add(ScriptedPeer.start(nameServer.apply(readOnly)));
            if (clusterInfo) {
                namesrv.clusterInfo(ScriptedPeer.clusterInfoNaming(readOnly));
            }
            TestGateway runningGateway = closer.add(gateway.namesrv(namesrv.address()).start());
            return new ScriptedCluster(Collections.unmodifiableMap(started), namesrv, runningGateway);
        }
    }
}
