package io.rmqgw.legacybroker;

import io.netty.bootstrap.ServerBootstrap;
import io.rmqgw.embedded.LoopbackConfigs;
import io.rmqgw.forked.ForkedMain;
import java.lang.reflect.Field;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Map;
import java.util.Properties;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.BrokerPathConfigHelper;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.TopicConfig;
import org.apache.rocketmq.common.constant.PermName;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * A RocketMQ 4.9.7 name server and broker (the Maven Central artifacts, nothing of rmqgw on the class path) in
 * one JVM, on loopback only, for the it module's {@code ForkedBroker.legacy}. Prints
 * {@code READY <namesrv> <broker>} once the broker is registered with topics created, {@code FAILED ...}
 * otherwise. Exits when its stdin closes (the test JVM ended).
 *
 * <p>4.9.x servers have no bind-address setting: the name server, the broker (port P and its VIP port P-2)
 * and the HA service (P+1) bind the wildcard address. The tests' rule is loopback only, so before the
 * servers start, their still unconfigured {@link ServerBootstrap}s are replaced by ones that turn a wildcard
 * address into 127.0.0.1, and the HA service's listen address is set to 127.0.0.1 (reflection on 4.9.7's
 * private fields; a changed field name fails the start, it never falls back to the wildcard).
 *
 * <pre>
 * LegacyClusterMain --dir DIR --namesrv-port N --broker-port P --cluster C --broker-name B
 *                   [--overrides FILE]   broker.conf keys over the defaults (e.g. aclEnable=true)
 *                   [--topics T1,T2:4]   created before READY, with 2 read and 2 write queues or as many as
 *                                        follow a colon
 * </pre>
 *
 * With {@code aclEnable=true} the broker reads {@code ${rocketmq.home.dir}/conf/plain_acl.yml} (ACL 1.0).
 */
public final class LegacyClusterMain {

    private static final String LOOPBACK = LoopbackConfigs.LOOPBACK;

    private LegacyClusterMain() {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = ForkedMain.options(argv);
        NamesrvController namesrv;
        BrokerController broker;
        try {
            // as NamesrvStartup and BrokerStartup do: requests carry version 0 otherwise, and a 4.9.x name server
            // reads a version-0 registration the pre-3.0.11 way, which drops every topic of it
            System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
            Path dir = Paths.get(a.get("dir")).toAbsolutePath();
            Properties overrides = ForkedMain.overrides(a);
            int namesrvPort = Integer.parseInt(a.get("namesrv-port"));
            namesrv = startNamesrv(dir, namesrvPort);
            broker = startBroker(dir, LOOPBACK + ":" + namesrvPort, Integer.parseInt(a.get("broker-port")),
                a.get("cluster"), a.get("broker-name"), overrides);
            String topics = a.getOrDefault("topics", "");
            for (String entry : topics.split(",")) {
                if (!entry.isBlank()) {
                    String[] nameAndQueues = entry.trim().split(":", 2);
                    int queues = nameAndQueues.length == 2 ? Integer.parseInt(nameAndQueues[1]) : 2;
                    broker.getTopicConfigManager().updateTopicConfig(
                        new TopicConfig(nameAndQueues[0], queues, queues, PermName.PERM_READ | PermName.PERM_WRITE));
                }
            }
            // at once rather than at the next periodic registration (30 s)
            broker.registerBrokerAll(true, false, true);
        } catch (Throwable t) {
            ForkedMain.failed(t);
            return;
        }
        NamesrvController namesrvToStop = namesrv;
        BrokerController brokerToStop = broker;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            brokerToStop.shutdown();
            namesrvToStop.shutdown();
        }, "legacy-cluster-shutdown"));
        ForkedMain.ready(LOOPBACK + ":" + a.get("namesrv-port") + " " + LOOPBACK + ":" + a.get("broker-port"));
        ForkedMain.awaitParentGone();
        Runtime.getRuntime().halt(0);
    }

    private static NamesrvController startNamesrv(Path dir, int port) throws Exception {
        NamesrvConfig config = LoopbackConfigs.namesrv(dir);
        NettyServerConfig server = new NettyServerConfig();
        server.setListenPort(port);
        NamesrvController controller = new NamesrvController(config, server);
        if (!controller.initialize()) {
            throw new IllegalStateException("4.9.7 name server failed to initialize");
        }
        bindLoopback(field(controller, "remotingServer"));
        controller.start();
        return controller;
    }

    private static BrokerController startBroker(Path dir, String namesrvAddress, int port, String clusterName,
                                                String brokerName, Properties overrides) throws Exception {
        Path store = dir.resolve("store");
        BrokerConfig broker = LoopbackConfigs.broker(dir, namesrvAddress, clusterName, brokerName);
        // topics are the ones --topics creates
        broker.setAutoCreateTopicEnable(false);
        NettyServerConfig server = new NettyServerConfig();
        NettyClientConfig client = new NettyClientConfig();
        MessageStoreConfig storeConfig = LoopbackConfigs.store(store);
        MixAll.properties2Object(overrides, broker);
        MixAll.properties2Object(overrides, storeConfig);
        // not overridable: loopback only, fixed ports
        broker.setBrokerIP1(LOOPBACK);
        broker.setBrokerIP2(LOOPBACK);
        server.setListenPort(port);
        storeConfig.setHaListenPort(port + 1);
        BrokerPathConfigHelper.setBrokerConfigPath(store.resolve("config").resolve("broker.properties").toString());

        BrokerController controller = new BrokerController(broker, server, client, storeConfig);
        if (!controller.initialize()) {
            throw new IllegalStateException("4.9.7 broker failed to initialize (store " + store + ")");
        }
        bindLoopback(field(controller, "remotingServer"));
        bindLoopback(field(controller, "fastRemotingServer"));
        Object haService = field(controller.getMessageStore(), "haService");
        Object acceptSocketService = field(haService, "acceptSocketService");
        setField(acceptSocketService, "socketAddressListen", new InetSocketAddress(LOOPBACK, port + 1));
        controller.start();
        return controller;
    }

    /** Replaces a NettyRemotingServer's (not yet configured) bootstrap with a {@link LoopbackServerBootstrap}. */
    private static void bindLoopback(Object nettyRemotingServer) throws ReflectiveOperationException {
        ServerBootstrap current = (ServerBootstrap) field(nettyRemotingServer, "serverBootstrap");
        if (current.config().localAddress() != null || current.config().group() != null) {
            throw new IllegalStateException("the server bootstrap is configured already: " + current);
        }
        setField(nettyRemotingServer, "serverBootstrap", new LoopbackServerBootstrap());
    }

    private static Object field(Object owner, String name) throws ReflectiveOperationException {
        Field f = declared(owner.getClass(), name);
        return f.get(owner);
    }

    private static void setField(Object owner, String name, Object value) throws ReflectiveOperationException {
        declared(owner.getClass(), name).set(owner, value);
    }

    private static Field declared(Class<?> type, String name) throws NoSuchFieldException {
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            try {
                Field f = c.getDeclaredField(name);
                f.setAccessible(true);
                return f;
            } catch (NoSuchFieldException e) {
                // try the superclass
            }
        }
        throw new NoSuchFieldException(type.getName() + "." + name);
    }

    /** Binds where asked, except that the wildcard address becomes 127.0.0.1 (same port). */
    static final class LoopbackServerBootstrap extends ServerBootstrap {
        @Override
        public ServerBootstrap localAddress(SocketAddress address) {
            if (address instanceof InetSocketAddress && ((InetSocketAddress) address).getAddress() != null
                && ((InetSocketAddress) address).getAddress().isAnyLocalAddress()) {
                return super.localAddress(new InetSocketAddress(LOOPBACK, ((InetSocketAddress) address).getPort()));
            }
            return super.localAddress(address);
        }
    }
}
