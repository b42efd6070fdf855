package io.rmqgw.embedded;

import io.netty.handler.ssl.JdkSslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;
import io.netty.handler.ssl.util.InsecureTrustManagerFactory;
import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeoutException;
import org.apache.rocketmq.auth.config.AuthConfig;
import org.apache.rocketmq.broker.BrokerController;
import org.apache.rocketmq.broker.BrokerPathConfigHelper;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.logging.JoranConfiguratorExt;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.logging.ch.qos.logback.classic.LoggerContext;
import org.apache.rocketmq.namesrv.NamesrvController;
import org.apache.rocketmq.remoting.exception.RemotingCommandException;
import org.apache.rocketmq.remoting.netty.NettyClientConfig;
import org.apache.rocketmq.remoting.netty.NettyServerConfig;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.body.ClusterInfo;
import org.apache.rocketmq.remoting.protocol.route.BrokerData;
import org.apache.rocketmq.store.config.MessageStoreConfig;
import org.apache.rocketmq.store.ha.DefaultHAService;
import org.apache.rocketmq.store.ha.HAService;

/**
 * An Apache RocketMQ 5.4.0 name server and one master broker running in this JVM, bound to and
 * advertising 127.0.0.1 only, storing (and logging) under one directory. Used by
 * {@code rmqgw start --embedded} and by the integration tests.
 *
 * <p>Ports: the broker listens on {@code brokerPort} and on its VIP ("fast") port
 * {@code brokerPort - 2}. The HA port ({@code brokerPort + 1} in a stock broker) is NOT opened:
 * a stock broker binds it on the wildcard address, and a single master has no slaves.
 *
 * <p>Process-wide state this touches (RocketMQ keeps some settings in statics): the RocketMQ
 * logging context is reconfigured to write under {@code storeDir/logs} unless
 * {@code -Drmq.logback.configurationFile} is set (otherwise this sets it), {@code
 * rocketmq.remoting.version} is set if absent (as the stock start scripts do), and
 * {@link BrokerPathConfigHelper}'s broker config path points under {@code storeDir}. RocksDB's own
 * LOG file (5.4.0 opens a RocksDB under store/rocksdbstore) still goes to
 * {@code ${user.home}/logs/rocketmqlogs}. Run one embedded broker per JVM: 5.4.0 also leaves a
 * non-daemon thread running after {@link #close()}, so a JVM that ran one ends with System.exit.
 */
public final class EmbeddedCluster implements AutoCloseable {

    /** How long {@link #close} waits for the broker to leave the name server before stopping that anyway. */
    static final Duration UNREGISTER_WAIT = Duration.ofSeconds(5);

    /** How long {@link #start} waits for the broker to appear in the name server's cluster info. */
    public static final Duration REGISTRATION_TIMEOUT = Duration.ofSeconds(90);

    private static final String LOOPBACK = LoopbackConfigs.LOOPBACK;
    private static final String LOGBACK_CONFIG_PROPERTY = "rmq.logback.configurationFile";
    private static String ownLogConfig;
    private static final String HA_SERVICE_RESOURCE = "META-INF/service/" + HAService.class.getName();

    private final Path storeDir;
    private final NamesrvController namesrvController;
    private final BrokerController brokerController;
    private final String namesrvAddress;
    private final String brokerAddress;
    private boolean closed;

    private EmbeddedCluster(Path storeDir, NamesrvController namesrvController, BrokerController brokerController,
                            String namesrvAddress) {
        this.storeDir = storeDir;
        this.namesrvController = namesrvController;
        this.brokerController = brokerController;
        this.namesrvAddress = namesrvAddress;
        this.brokerAddress = brokerController.getBrokerAddr();
    }

    /**
     * Starts a name server on {@code 127.0.0.1:namesrvPort} and a master broker on
     * {@code 127.0.0.1:brokerPort} (plus {@code brokerPort - 2}), and returns once the name server
     * answers GET_BROKER_CLUSTER_INFO with the broker (at most {@link #REGISTRATION_TIMEOUT}).
     */
    public static EmbeddedCluster start(Path storeDir, int namesrvPort, int brokerPort, String clusterName,
                                        String brokerName) throws Exception {
        return start(storeDir, namesrvPort, brokerPort, clusterName, brokerName, new Properties());
    }

    /**
     * As {@link #start(Path, int, int, String, String)}, then applies {@code overrides} (RocketMQ
     * config keys, as in broker.conf / namesrv.conf) over the embedded defaults.
     */
    public static EmbeddedCluster start(Path storeDir, int namesrvPort, int brokerPort, String clusterName,
                                        String brokerName, Properties overrides) throws Exception {
        checkPort("namesrvPort", namesrvPort, 1);
        Path root = prepare(storeDir);
        NamesrvController namesrv = startNamesrv(root, namesrvPort, overrides);
        String namesrvAddress = LOOPBACK + ":" + namesrv.getNettyServerConfig().getListenPort();
        try {
            return startWith(root, namesrv, namesrvAddress, brokerPort, clusterName, brokerName, overrides);
        } catch (Exception | Error e) {
            namesrv.shutdown();
            throw e;
        }
    }

    /**
     * Starts only a broker, registered with an existing name server ({@code namesrvAddress},
     * {@code host:port[;host:port]}); {@link #namesrvController()} is then {@code null} and
     * {@link #close()} stops only the broker.
     */
    public static EmbeddedCluster startBroker(Path storeDir, String namesrvAddress, int brokerPort, String clusterName,
                                              String brokerName, Properties overrides) throws Exception {
        Objects.requireNonNull(namesrvAddress, "namesrvAddress");
        return startWith(prepare(storeDir), null, namesrvAddress, brokerPort, clusterName, brokerName, overrides);
    }

    /**
     * Starts only a name server on {@code 127.0.0.1:namesrvPort}, its files in {@code storeDir}: for tests that
     * stop a name server ({@link NamesrvController#shutdown()}) and start it again on the same port while
     * brokers stay up.
     */
    public static NamesrvController startNameServer(Path storeDir, int namesrvPort) throws Exception {
        checkPort("namesrvPort", namesrvPort, 1);
        return startNamesrv(prepare(storeDir), namesrvPort, new Properties());
    }

    private static EmbeddedCluster startWith(Path root, NamesrvController namesrv, String namesrvAddress, int brokerPort,
                                             String clusterName, String brokerName, Properties overrides)
        throws Exception {
        checkPort("brokerPort", brokerPort, 3);
        Objects.requireNonNull(clusterName, "clusterName");
        Objects.requireNonNull(brokerName, "brokerName");
        BrokerController broker = startBrokerController(root, namesrvAddress, brokerPort, clusterName, brokerName,
            overrides == null ? new Properties() : overrides);
        EmbeddedCluster cluster = new EmbeddedCluster(root, namesrv, broker, namesrvAddress);
        try {
            // 5.4.0 brokers register only with name servers their client has already probed
            // (NettyRemotingClient's available-name-server scan, which starts asynchronously): the
            // registration inside BrokerController.start() often finds none and the next one is
            // 10 s later. Register again, every 500 ms, until the name server lists the broker.
            awaitRegistration(namesrvAddress.split(";")[0], clusterName, brokerName, cluster.brokerAddress,
                REGISTRATION_TIMEOUT, true, () -> broker.registerBrokerAll(true, false, true));
        } catch (Exception | Error e) {
            broker.shutdown();
            throw e;
        }
        return cluster;
    }

    private static void checkPort(String what, int port, int min) {
        if (port < min || port > 65535) {
            throw new IllegalArgumentException(what + " must be between " + min + " and 65535, was " + port);
        }
    }

    /** Creates the directory layout and points process-wide RocketMQ settings at it. */
    private static Path prepare(Path storeDir) throws IOException {
        Path root = storeDir.toAbsolutePath().normalize();
        // ROCKETMQ_HOME: RocketMQ only needs it to exist with a conf/ directory.
        Files.createDirectories(root.resolve("home").resolve("conf"));
        Files.createDirectories(root.resolve("logs").resolve("rocketmqlogs"));
        Files.createDirectories(root.resolve("store").resolve("config"));
        Files.createDirectories(root.resolve("namesrv"));
        // First, before any RocketMQ class with a static logger loads (RemotingCommand has one).
        configureLogging(root.resolve("logs").resolve("rocketmqlogs"));
        // The stock start scripts set this before anything else; without it requests the broker
        // sends (registration, transaction check-back) carry version 0.
        if (System.getProperty(RemotingCommand.REMOTING_VERSION_KEY) == null) {
            System.setProperty(RemotingCommand.REMOTING_VERSION_KEY, Integer.toString(MQVersion.CURRENT_VERSION));
        }
        return root;
    }

    private static NamesrvController startNamesrv(Path root, int port, Properties overrides) throws Exception {
        NamesrvConfig config = LoopbackConfigs.namesrv(root);
        NettyServerConfig server = new NettyServerConfig();
        server.setBindAddress(LOOPBACK);
        server.setListenPort(port);
        NettyClientConfig client = new NettyClientConfig();
        if (overrides != null && !overrides.isEmpty()) {
            MixAll.properties2Object(overrides, config);
            MixAll.properties2Object(overrides, client);
        }
        // The name server's own remoting client lists the host's first non-loopback address and
        // probes it every few seconds; bound to 127.0.0.1 that only yields refused connections.
        client.setScanAvailableNameSrv(false);
        // Not overridable: the embedded cluster is loopback-only by contract.
        server.setBindAddress(LOOPBACK);
        server.setListenPort(port);
        NamesrvController controller = new NamesrvController(config, server, client);
        if (!controller.initialize()) {
            controller.shutdown();
            throw new IllegalStateException("name server failed to initialize on port " + port);
        }
        try {
            controller.start();
            controller.getRemotingClient().updateNameServerAddressList(List.of(LOOPBACK + ":" + port));
        } catch (Exception | Error e) {
            controller.shutdown();
            throw e;
        }
        return controller;
    }

    private static BrokerController startBrokerController(Path root, String namesrvAddress, int port, String clusterName,
                                                          String brokerName, Properties overrides) throws Exception {
        Path store = root.resolve("store");

        BrokerConfig broker = LoopbackConfigs.broker(root, namesrvAddress, clusterName, brokerName);
        broker.setListenPort(port);
        // Clients and tests use topics without creating them first.
        broker.setAutoCreateTopicEnable(true);
        // Half messages older than transactionTimeOut are checked back every transactionCheckInterval
        // (stock: 6 s and 30 s); tests wait for the check of an UNKNOWN transaction.
        broker.setTransactionTimeOut(2_000);
        broker.setTransactionCheckInterval(3_000);

        NettyServerConfig server = new NettyServerConfig();
        NettyClientConfig client = new NettyClientConfig();

        MessageStoreConfig store0 = LoopbackConfigs.store(store);
        // Stock 100 MiB timer log files (timer files live under storePathRootDir too): timers are rare here.
        store0.setMappedFileSizeTimerLog(8 * 1024 * 1024);

        if (!overrides.isEmpty()) {
            MixAll.properties2Object(overrides, broker);
            MixAll.properties2Object(overrides, server);
            MixAll.properties2Object(overrides, client);
            MixAll.properties2Object(overrides, store0);
        }
        // Not overridable: loopback-only, fixed ports.
        broker.setBrokerIP1(LOOPBACK);
        broker.setListenPort(port);
        server.setBindAddress(LOOPBACK);
        server.setListenPort(port);
        // Stock brokers listen for slaves on brokerPort + 1 (wildcard address); the loopback HA
        // service below opens nothing, the value is only reported to the name server.
        store0.setHaListenPort(port + 1);

        // Static: where UPDATE_BROKER_CONFIG persists the broker config (default ${user.home}/store/config).
        BrokerPathConfigHelper.setBrokerConfigPath(store.resolve("config").resolve("broker.properties").toString());

        BrokerController controller = new BrokerController(broker, server, client, store0,
            authConfig(overrides, broker, store));
        boolean initialized;
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        // The message store looks its HA service up through the context class loader
        // (META-INF/service/...HAService); answer with the loopback variant. Threads created
        // meanwhile inherit this loader; it delegates everything else to the previous one.
        thread.setContextClassLoader(new HaServiceOverride(
            previous != null ? previous : EmbeddedCluster.class.getClassLoader()));
        try {
            initialized = controller.initialize();
        } finally {
            thread.setContextClassLoader(previous);
        }
        if (!initialized) {
            try {
                controller.shutdown();
            } catch (RuntimeException e) {
                // half-initialized: some services were never created
            }
            throw new IllegalStateException("broker failed to initialize (store " + store + "; see "
                + root.resolve("logs").resolve("rocketmqlogs").resolve("rocketmq.log") + ")");
        }
        try {
            controller.start();
        } catch (Exception | Error e) {
            controller.shutdown();
            throw e;
        }
        return controller;
    }

    /**
     * ACL 2.0 settings (authentication, authorization) when {@code overrides} turns either on, as the stock
     * BrokerStartup builds them (metadata under the store's config directory); null otherwise, so a broker
     * without them starts exactly as before.
     */
    private static AuthConfig authConfig(Properties overrides, BrokerConfig broker, Path store) {
        if (!overrides.containsKey("authenticationEnabled") && !overrides.containsKey("authorizationEnabled")) {
            return null;
        }
        AuthConfig auth = new AuthConfig();
        MixAll.properties2Object(overrides, auth);
        auth.setConfigName(broker.getBrokerName());
        auth.setClusterName(broker.getBrokerClusterName());
        auth.setAuthConfigPath(store.resolve("config").toString());
        return auth;
    }

    /**
     * Waits until the name server at {@code namesrvAddress} lists {@code brokerAddress} as the
     * master of {@code brokerName} in {@code clusterName}.
     *
     * @throws java.util.concurrent.TimeoutException when it does not within {@code timeout}
     */
    public static void awaitRegistered(String namesrvAddress, String clusterName, String brokerName, String brokerAddress,
                                       Duration timeout) throws Exception {
        awaitRegistration(namesrvAddress, clusterName, brokerName, brokerAddress, timeout, true, null);
    }

    /** Waits until the name server no longer lists {@code brokerAddress} for {@code brokerName}. */
    public static void awaitUnregistered(String namesrvAddress, String clusterName, String brokerName,
                                         String brokerAddress, Duration timeout) throws Exception {
        awaitRegistration(namesrvAddress, clusterName, brokerName, brokerAddress, timeout, false, null);
    }

    private static void awaitRegistration(String namesrvAddress, String clusterName, String brokerName,
                                          String brokerAddress, Duration timeout, boolean present,
                                          Runnable nudge) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        long nextNudge = System.nanoTime() + 500_000_000L;
        Exception last = null;
        while (true) {
            if (nudge != null && System.nanoTime() - nextNudge >= 0) {
                nudge.run();
                nextNudge = System.nanoTime() + 500_000_000L;
            }
            try {
                if (isRegistered(namesrvAddress, clusterName, brokerName, brokerAddress) == present) {
                    return;
                }
                last = null;
            } catch (IOException | RemotingCommandException e) {
                last = e;
            }
            if (System.nanoTime() - deadline > 0) {
                TimeoutException timeoutException = new TimeoutException("broker " + brokerName + "@" + brokerAddress
                    + " still " + (present ? "not " : "") + "registered in cluster " + clusterName
                    + " at name server " + namesrvAddress + " after " + timeout);
                if (last != null) {
                    timeoutException.initCause(last);
                }
                throw timeoutException;
            }
            Thread.sleep(100);
        }
    }

    /**
     * Asks the name server for GET_BROKER_CLUSTER_INFO over a short-lived blocking socket (a
     * NettyRemotingClient takes seconds to shut down) and looks for the broker as master.
     */
    /**
     * {@code plain} wrapped in TLS that trusts any certificate: only asks a local name server about itself. It presents
     * the client certificate RocketMQ's own clients in this JVM present ({@code tls.client.certPath},
     * {@code tls.client.keyPath}), for a name server started with {@code tls.server.need.client.auth=require}.
     */
    private static Socket trustAnyTls(Socket plain, InetSocketAddress target) throws IOException {
        SslContextBuilder builder = SslContextBuilder.forClient().sslProvider(SslProvider.JDK)
            .trustManager(InsecureTrustManagerFactory.INSTANCE);
        String cert = System.getProperty("tls.client.certPath");
        String key = System.getProperty("tls.client.keyPath");
        if (cert != null && key != null) {
            builder.keyManager(new File(cert), new File(key), System.getProperty("tls.client.keyPassword"));
        }
        javax.net.ssl.SSLContext ssl = ((JdkSslContext) builder.build()).context();
        return ssl.getSocketFactory().createSocket(plain, target.getHostString(), target.getPort(), true);
    }

    private static boolean isRegistered(String namesrvAddress, String clusterName, String brokerName,
                                        String brokerAddress) throws IOException, RemotingCommandException {
        int colon = namesrvAddress.lastIndexOf(':');
        InetSocketAddress target = new InetSocketAddress(namesrvAddress.substring(0, colon).trim(),
            Integer.parseInt(namesrvAddress.substring(colon + 1).trim()));
        RemotingCommand request = RemotingCommand.createRequestCommand(RequestCode.GET_BROKER_CLUSTER_INFO, null);
        RemotingCommand response;
        try (Socket plain = new Socket()) {
            plain.connect(target, 3_000);
            plain.setSoTimeout(3_000);
            // a name server started with tls.server.mode=enforcing (and tls.enable for its broker) speaks TLS only
            Socket socket = Boolean.getBoolean("tls.enable") ? trustAnyTls(plain, target) : plain;
            ByteBuffer frame = request.encode();
            byte[] bytes = new byte[frame.remaining()];
            frame.get(bytes);
            socket.getOutputStream().write(bytes);
            socket.getOutputStream().flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int length = in.readInt();
            if (length < 4 || length > 16 * 1024 * 1024) {
                throw new IOException("bad frame length " + length + " from " + namesrvAddress);
            }
            byte[] body = new byte[length];
            in.readFully(body);
            response = RemotingCommand.decode(body);
        }
        if (response.getOpaque() != request.getOpaque() || response.getCode() != ResponseCode.SUCCESS
            || response.getBody() == null) {
            return false;
        }
        ClusterInfo info = ClusterInfo.decode(response.getBody(), ClusterInfo.class);
        if (info == null || info.getClusterAddrTable() == null || info.getBrokerAddrTable() == null) {
            return false;
        }
        Set<String> names = info.getClusterAddrTable().get(clusterName);
        BrokerData data = info.getBrokerAddrTable().get(brokerName);
        if (names == null || !names.contains(brokerName) || data == null || data.getBrokerAddrs() == null) {
            return false;
        }
        return brokerAddress.equals(data.getBrokerAddrs().get(MixAll.MASTER_ID));
    }

    /** {@code 127.0.0.1:port} of the name server (or the one given to {@link #startBroker}). */
    public String namesrvAddress() {
        return namesrvAddress;
    }

    /** {@code 127.0.0.1:brokerPort}, as registered with the name server. */
    public String brokerAddress() {
        return brokerAddress;
    }

    public BrokerController brokerController() {
        return brokerController;
    }

    /** {@code null} for a broker started with {@link #startBroker}. */
    public NamesrvController namesrvController() {
        return namesrvController;
    }

    public Path storeDir() {
        return storeDir;
    }

    /**
     * Stops the broker and the name server; idempotent. Left alone, RocketMQ 5.4.0 takes 13 to 15 s to stop
     * however idle it is: each remoting server and client joins its event thread, which polls its queue for up to
     * 3 s without heeding the stop (five of them), the message store sleeps 3 s for in-flight writes, and the
     * name server stops after the broker. Here the event threads are interrupted while the stop runs (their loop
     * takes an interrupt as a wake-up and sees the stop), and the name server stops as soon as the broker has
     * unregistered from it (first thing in the broker's stop; at most {@link #UNREGISTER_WAIT}), while the broker
     * finishes: about 7 s, most of it the store's fixed sleep.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        Thread nudger = EventThreadNudger.start();
        try {
            stopBoth();
        } finally {
            nudger.interrupt();
        }
    }

    private void stopBoth() {
        if (namesrvController == null) {
            brokerController.shutdown();
            return;
        }
        RuntimeException[] brokerFailure = new RuntimeException[1];
        Thread broker = new Thread(() -> {
            try {
                brokerController.shutdown();
            } catch (RuntimeException e) {
                brokerFailure[0] = e;
            }
        }, "embedded-broker-stop");
        broker.start();
        try {
            awaitUnregistered(namesrvAddress, brokerController.getBrokerConfig().getBrokerClusterName(),
                brokerController.getBrokerConfig().getBrokerName(), brokerAddress, UNREGISTER_WAIT);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            // not unregistered in time: stop the name server anyway, the broker's stop goes on
        }
        try {
            namesrvController.shutdown();
        } finally {
            boolean interrupted = false;
            while (true) {
                try {
                    broker.join();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true; // the store must finish its flush: wait anyway
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        if (brokerFailure[0] != null) {
            throw brokerFailure[0];
        }
    }

    /**
     * While a stop runs, interrupts RocketMQ's remoting event threads ({@code NettyEventExecutor}: one per
     * remoting server and client) every 50 ms: they poll their queue for 3 s at a time and only look at the stop
     * flag between polls, so each shutdown would wait out the poll. Nothing else in the process has threads of
     * that name (the gateway's Netty does not).
     */
    private static final class EventThreadNudger {
        private static final String EVENT_THREAD = "NettyEventExecutor";

        static Thread start() {
            Thread t = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    for (Thread candidate : Thread.getAllStackTraces().keySet()) {
                        if (candidate.getName().startsWith(EVENT_THREAD)) {
                            candidate.interrupt();
                        }
                    }
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            }, "embedded-stop-nudger");
            t.setDaemon(true);
            t.start();
            return t;
        }
    }

    /**
     * Points RocketMQ's own (shaded) logback at {@code logDir}: broker, name server, store and
     * remoting logs in rocketmq.log, statistics in stats.log, nothing on the console. Skipped when
     * {@code -Drmq.logback.configurationFile} chose a configuration.
     */
    private static synchronized void configureLogging(Path logDir) throws IOException {
        String chosen = System.getProperty(LOGBACK_CONFIG_PROPERTY);
        if (chosen != null && !chosen.equals(ownLogConfig)) {
            return;
        }
        String dir = xmlEscape(logDir.toString());
        String xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<configuration>\n"
            + fileAppender("FILE", dir, "rocketmq")
            + fileAppender("STATS_FILE", dir, "stats")
            + "  <appender name=\"ASYNC\" class=\"ch.qos.logback.classic.AsyncAppender\">\n"
            + "    <appender-ref ref=\"FILE\"/>\n"
            + "  </appender>\n"
            + statsLogger("RocketmqStats") + statsLogger("RocketmqCommercial") + statsLogger("RocketmqConsumerStats")
            + statsLogger("RocketmqDLQStats") + statsLogger("RocketmqAccount") + statsLogger("RocketmqWaterMark")
            + statsLogger("RocketmqNamesrvWaterMark") + statsLogger("RocketmqTraffic")
            + "  <root level=\"INFO\">\n"
            + "    <appender-ref ref=\"ASYNC\"/>\n"
            + "  </root>\n"
            + "</configuration>\n";
        Path file = logDir.getParent().getParent().resolve("home").resolve("conf").resolve("rmqgw-embedded-logback.xml");
        Files.writeString(file, xml, StandardCharsets.UTF_8);
        // Before RocketMQ's first logger exists this alone selects the file (and keeps the stock
        // rmq.*.logback.xml, which writes to ${user.home}/logs, from ever loading) ...
        ownLogConfig = file.toString();
        System.setProperty(LOGBACK_CONFIG_PROPERTY, ownLogConfig);
        LoggerContext context =
            (LoggerContext) org.apache.rocketmq.logging.org.slf4j.LoggerFactory.getILoggerFactory();
        // ... and if RocketMQ logged before (or an earlier cluster used another directory), reconfigure.
        context.reset();
        JoranConfiguratorExt configurator = new JoranConfiguratorExt();
        configurator.setContext(context);
        try {
            configurator.doConfigure0(file.toUri().toURL());
        } catch (Exception e) {
            throw new IOException("cannot configure RocketMQ logging from " + file, e);
        }
    }

    private static String fileAppender(String name, String dir, String base) {
        return "  <appender name=\"" + name + "\" class=\"ch.qos.logback.core.rolling.RollingFileAppender\">\n"
            + "    <file>" + dir + "/" + base + ".log</file>\n"
            + "    <rollingPolicy class=\"ch.qos.logback.core.rolling.FixedWindowRollingPolicy\">\n"
            + "      <fileNamePattern>" + dir + "/" + base + ".%i.log.gz</fileNamePattern>\n"
            + "      <minIndex>1</minIndex><maxIndex>3</maxIndex>\n"
            + "    </rollingPolicy>\n"
            + "    <triggeringPolicy class=\"ch.qos.logback.core.rolling.SizeBasedTriggeringPolicy\">\n"
            + "      <maxFileSize>64MB</maxFileSize>\n"
            + "    </triggeringPolicy>\n"
            + "    <encoder><pattern>%d{yyyy-MM-dd HH:mm:ss.SSS} %-5p [%t] %c - %m%n</pattern></encoder>\n"
            + "  </appender>\n";
    }

    private static String statsLogger(String name) {
        return "  <logger name=\"" + name + "\" additivity=\"false\" level=\"INFO\"><appender-ref ref=\"STATS_FILE\"/></logger>\n";
    }

    private static String xmlEscape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }

    /** Answers the message store's HA service lookup with {@link LoopbackHaService}; delegates the rest. */
    private static final class HaServiceOverride extends ClassLoader {
        HaServiceOverride(ClassLoader parent) {
            super(parent);
        }

        @Override
        public InputStream getResourceAsStream(String name) {
            if (HA_SERVICE_RESOURCE.equals(name)) {
                return new ByteArrayInputStream(LoopbackHaService.class.getName().getBytes(StandardCharsets.UTF_8));
            }
            return super.getResourceAsStream(name);
        }
    }

    /**
     * The stock HA service of a single master, minus the slave listener: {@code DefaultHAService}
     * binds {@code 0.0.0.0:haListenPort}, which an embedded loopback-only broker must not. Group
     * transfer (synchronous replication waits) and connection-state services still run, so a
     * SYNC_MASTER override would behave as a master without slaves.
     */
    public static final class LoopbackHaService extends DefaultHAService {
        public LoopbackHaService() {
        }

        @Override
        public void start() throws Exception {
            this.groupTransferService.start();
            this.haConnectionStateNotificationService.start();
            if (this.haClient != null) {
                this.haClient.start();
            }
        }
    }

    @Override
    public String toString() {
        return "EmbeddedCluster[namesrv=" + namesrvAddress + ", broker=" + brokerAddress + ", store=" + storeDir + "]";
    }

    /** For diagnostics: the effective broker settings RocketMQ will report (a subset). */
    public Map<String, Object> settings() {
        BrokerConfig b = brokerController.getBrokerConfig();
        MessageStoreConfig m = brokerController.getMessageStoreConfig();
        return Map.of(
            "brokerIP1", b.getBrokerIP1(),
            "listenPort", brokerController.getNettyServerConfig().getListenPort(),
            "bindAddress", brokerController.getNettyServerConfig().getBindAddress(),
            "mappedFileSizeCommitLog", m.getMappedFileSizeCommitLog(),
            "transactionCheckInterval", b.getTransactionCheckInterval(),
            "transactionTimeOut", b.getTransactionTimeOut(),
            "storePathRootDir", m.getStorePathRootDir());
    }
}
