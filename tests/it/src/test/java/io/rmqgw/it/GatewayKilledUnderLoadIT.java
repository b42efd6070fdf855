package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.ClusterTopic;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.ForkedGateway;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.DeliveryLedger;
import io.rmqgw.it.support.FaultLoad;
import io.rmqgw.testing.FreePorts;
import io.rmqgw.testing.UniqueNames;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The gateway itself killed with SIGKILL mid-load and started again on its ports (issue 14, faults): two sync
 * producers and a push consumer, all through a forked gateway, reconnect by themselves. No send a broker
 * acknowledged may be lost; duplicates (consumer redeliveries of offsets not yet committed, sends answered as
 * failed but stored) are counted and reported.
 */
@RocketMqCluster
class GatewayKilledUnderLoadIT {

    private static final List<String> JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-XX:-UsePerfData");

    @Test
    void noAcknowledgedSendIsLostWhenTheGatewayIsKilledAndRestarted(ClusterUnderTest cluster,
        @ClusterTopic(hint = "gw_kill_load") String topic) throws Exception {
        int port = FreePorts.port();
        int brokerPorts = FreePorts.range(12);
        DeliveryLedger ledger = new DeliveryLedger();
        ForkedGateway gateway = GatewayFixture.on(cluster).forked(UniqueNames.workDir("gw-kill-1")).jvmOptions(JVM)
            .ports(port, brokerPorts).start();
        try (FaultLoad load = FaultLoad.start(gateway.namesrvAddress(), topic, UniqueNames.group("gw_kill_load"), 2, 5,
            Duration.ofSeconds(3), 2, ledger)) {
            load.awaitMoreAcknowledged(300, Duration.ofSeconds(30));

            int beforeKill = load.acknowledged();
            gateway.kill();
            // the clients meet the dead gateway (refused connections) for a moment before it comes back
            TimeUnit.SECONDS.sleep(2);
            int failedWhileDown = load.failed();
            long t0 = System.nanoTime();
            gateway = GatewayFixture.on(cluster).forked(UniqueNames.workDir("gw-kill-2")).jvmOptions(JVM)
                .ports(port, brokerPorts).start();
            long restartMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            int atRestart = load.acknowledged();
            long back = System.nanoTime();
            load.awaitMoreAcknowledged(300, Duration.ofSeconds(60));
            long firstAfterMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - back);
            load.stopSending();
            long drainStart = System.nanoTime();
            load.awaitNothingMissing(Duration.ofSeconds(90));
            long drainMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainStart);

            Set<String> storedButFailed = new TreeSet<>(ledger.receivedUnacknowledged());
            System.err.println("[it] FAULT gateway-sigkill: acknowledged " + ledger.sentCount() + " (" + beforeKill
                + " before the kill, " + (atRestart - beforeKill) + " while it was down, "
                + (ledger.sentCount() - atRestart) + " after the restart), failed " + load.failed() + " ("
                + failedWhileDown + " while it was down), lost " + ledger.missing().size() + ", duplicates "
                + ledger.duplicates() + " in " + ledger.duplicatedKeys() + " keys, failed but stored "
                + storedButFailed.size() + "; restart took " + restartMillis + " ms, 300 more acknowledged "
                + firstAfterMillis + " ms after it, all received " + drainMillis + " ms after the last send");
            new TreeMap<>(load.failures()).values().stream().limit(5)
                .forEach(f -> System.err.println("[it]   failed send: " + f));
            assertTrue(ledger.sentCount() > atRestart, "nothing was acknowledged through the restarted gateway");
            assertEquals(Set.of(), ledger.missing(), "acknowledged sends never received");
        } finally {
            gateway.close();
        }
    }
}
