package io.rmqgw.embedded;

import java.nio.file.Path;
import org.apache.rocketmq.common.BrokerConfig;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.namesrv.NamesrvConfig;
import org.apache.rocketmq.store.config.BrokerRole;
import org.apache.rocketmq.store.config.FlushDiskType;
import org.apache.rocketmq.store.config.MessageStoreConfig;

/**
 * The settings a loopback name server and master broker in one directory start from, before overrides: shared by
 * {@link EmbeddedCluster} (RocketMQ 5.4.0) and tests/broker-4.9.7's {@code LegacyClusterMain} (4.9.7), which
 * compiles this source directory against its own RocketMQ: only what both versions have belongs here. The layout
 * under {@code root}: {@code home/} (ROCKETMQ_HOME), {@code namesrv/}, {@code store/}.
 */
public final class LoopbackConfigs {

    public static final String LOOPBACK = "127.0.0.1";

    private LoopbackConfigs() {
    }

    /** ROCKETMQ_HOME under {@code root}, and the files that default to {@code ${user.home}/namesrv} in it. */
    public static NamesrvConfig namesrv(Path root) {
        NamesrvConfig config = new NamesrvConfig();
        config.setRocketmqHome(root.resolve("home").toString());
        config.setKvConfigPath(root.resolve("namesrv").resolve("kvConfig.json").toString());
        config.setConfigStorePath(root.resolve("namesrv").resolve("namesrv.properties").toString());
        return config;
    }

    /** A master broker advertising 127.0.0.1, its ROCKETMQ_HOME under {@code root}. */
    public static BrokerConfig broker(Path root, String namesrvAddress, String clusterName, String brokerName) {
        BrokerConfig broker = new BrokerConfig();
        broker.setRocketmqHome(root.resolve("home").toString());
        broker.setNamesrvAddr(namesrvAddress);
        broker.setBrokerClusterName(clusterName);
        broker.setBrokerName(brokerName);
        broker.setBrokerId(MixAll.MASTER_ID);
        // Brokers register their first non-loopback address by default; clients would dial it.
        broker.setBrokerIP1(LOOPBACK);
        broker.setBrokerIP2(LOOPBACK);
        // Clients and tests use subscription groups without creating them first.
        broker.setAutoCreateSubscriptionGroup(true);
        // A send may wait this long in the broker's queue before "broker busy" (stock 200 ms); a
        // loaded 2-core machine exceeds 200 ms now and then, which makes tests flaky.
        broker.setWaitTimeMillsInSendQueue(1_000);
        return broker;
    }

    /** A test-sized store in {@code store}: asynchronous flush, asynchronous master. */
    public static MessageStoreConfig store(Path store) {
        MessageStoreConfig config = new MessageStoreConfig();
        // Everything the store writes (commitlog, consumequeue, index, config/*.json, checkpoint, lock and
        // abort files) lives under storePathRootDir.
        config.setStorePathRootDir(store.toString());
        config.setStorePathCommitLog(store.resolve("commitlog").toString());
        // Stock 1 GiB commit log files; 64 MiB keeps a test disk small (files are sparse until written).
        config.setMappedFileSizeCommitLog(64 * 1024 * 1024);
        // Stock 300,000 entries (5.7 MiB) per consume queue file and per queue: 30,000 (586 KiB).
        config.setMappedFileSizeConsumeQueue(30_000 * 20);
        // Stock index file is about 420 MiB (5 M slots, 20 M entries): 50 k slots, 200 k entries.
        config.setMaxHashSlotNum(50_000);
        config.setMaxIndexNum(200_000);
        // Asynchronous flush and asynchronous master (both stock, set to be explicit): a send never
        // waits for a disk flush (SYNC_FLUSH) or a slave (SYNC_MASTER).
        config.setFlushDiskType(FlushDiskType.ASYNC_FLUSH);
        config.setBrokerRole(BrokerRole.ASYNC_MASTER);
        return config;
    }
}
