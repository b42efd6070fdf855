package io.rmqgw.cli;

import io.rmqgw.embedded.EmbeddedCluster;
import io.rmqgw.gateway.config.EmbeddedConfig;
import io.rmqgw.gateway.runtime.EmbeddedUpstream;
import java.nio.file.Path;

/** {@code rmqgw start --embedded}: the gateway's upstream is an {@link EmbeddedCluster} in this JVM. */
final class EmbeddedMode implements EmbeddedUpstream {

    static final String CLUSTER_NAME = "DefaultCluster";
    static final String BROKER_NAME = "broker-a";

    /** Starts a name server and broker broker-a of cluster DefaultCluster on the configured loopback ports. */
    static final EmbeddedUpstream.Starter STARTER = (EmbeddedConfig config, Path storeDir) -> new EmbeddedMode(
        EmbeddedCluster.start(storeDir, config.namesrvPort(), config.brokerPort(), CLUSTER_NAME, BROKER_NAME));

    private final EmbeddedCluster cluster;

    private EmbeddedMode(EmbeddedCluster cluster) {
        this.cluster = cluster;
    }

    @Override
    public String namesrvAddress() {
        return cluster.namesrvAddress();
    }

    @Override
    public String brokerAddress() {
        return cluster.brokerAddress();
    }

    @Override
    public void close() {
        cluster.close();
    }
}
