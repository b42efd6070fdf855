package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.it.fixture.ForkedGateway;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.DeliveryLedger;
import io.rmqgw.it.support.FaultLoad;
import io.rmqgw.testing.FreePorts;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The gateway itself killed with SIGKILL mid-load and started again on its ports (issue 14, faults): two sync
 * producers and a push consumer, all through a forked gateway, reconnect by themselves. No send a broker
 * acknowledged may be lost; duplicates (consumer redeliveries of offsets not yet committed, sends answered as
 * failed but stored) are counted and reported.
 */
@ExtendWith(SharedClusterExtension.class)
class GatewayKilledUnderLoadIT {

    private static final List<String> JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
        "-XX:-UsePerfData");

    @Test
    void noAcknowledgedSendIsLostWhenTheGatewayIsKilledAndRestarted(SharedCluster shared) throws Exception {
        String topic = shared.topic("gw_kill_load");
        Admin.createTopic(shared.brokerAddress(), topic, 4);
        Admin.awaitRoute(shared.namesrvAddress(), topic, shared.brokerName(), Duration.ofSeconds(30));
        int port = FreePorts.port();
        int brokerPorts = FreePorts.range(12);
        String work = System.getProperty("rmqgw.it.workDir", System.getProperty("java.io.tmpdir"));
        DeliveryLedger ledger = new DeliveryLedger();
        ForkedGateway gateway = ForkedGateway.start(Paths.get(work, "gw-kill-1-" + System.nanoTime()),
            shared.namesrvAddress(), JVM, port, brokerPorts, "");
        try (FaultLoad load = FaultLoad.start(gateway.namesrvAddress(), topic, shared.group("gw_kill_load"), 2, 5,
            Duration.ofSeconds(3), 2, ledger)) {
            load.awaitMoreAcknowledged(300, Duration.ofSeconds(30));

            int beforeKill = load.acknowledged();
            gateway.kill();
            // the clients meet the dead gateway (refused connections) for a moment before it comes back
            TimeUnit.SECONDS.sleep(2);
            int failedWhileDown = load.failed();
            long t0 = System.nanoTime();
            gateway = ForkedGateway.start(Paths.get(work, "gw-kill-2-" + System.nanoTime()),
                shared.namesrvAddress(), JVM, port, brokerPorts, "");
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
