package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.DeliveryLedger;
import io.rmqgw.it.support.FaultLoad;
import java.time.Duration;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A broker killed with SIGKILL and started again mid-load, everything through the gateway (issue 14, faults):
 * two sync producers send without pause and a push consumer reads the topic, which lives on that broker only.
 * {@link BrokerDownThroughGatewayIT} shows how each failure is answered; this one counts: no acknowledged send
 * may be lost, and the duplicates (a key delivered again, or a send answered as failed and stored) are reported.
 */
@ExtendWith(SharedClusterExtension.class)
class BrokerKilledUnderLoadIT {

    @Test
    void noAcknowledgedSendIsLostWhenTheBrokerIsKilledAndRestarted(SharedCluster shared) throws Exception {
        String topic = shared.topic("kill_load");
        DeliveryLedger ledger = new DeliveryLedger();
        try (ForkedBroker broker = ForkedBroker.create(shared.dir().resolve("forked-broker-kill-load"),
                shared.namesrvAddress(), "ItKillLoadCluster", "it-kill-load-a").start();
             GatewayFixture gateway = GatewayFixture.start(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ)) {
            Admin.createTopic(broker.brokerAddress(), topic, 4);
            Admin.awaitRoute(gateway.namesrvAddress(), topic, broker.brokerName(), Duration.ofSeconds(30));
            try (FaultLoad load = FaultLoad.start(gateway.namesrvAddress(), topic, shared.group("kill_load"), 2, 5,
                Duration.ofSeconds(3), 2, ledger)) {
                load.awaitMoreAcknowledged(300, Duration.ofSeconds(30));

                int beforeKill = load.acknowledged();
                long killedAt = System.nanoTime();
                broker.kill();
                long killMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                // the producers meet the dead broker for a moment before it comes back
                TimeUnit.SECONDS.sleep(2);
                int failedWhileDown = load.failed();
                long t0 = System.nanoTime();
                broker.start();
                long restartMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                int atRestart = load.acknowledged();
                load.awaitMoreAcknowledged(300, Duration.ofSeconds(40));
                load.stopSending();
                long drainStart = System.nanoTime();
                load.awaitNothingMissing(Duration.ofSeconds(60));
                long drainMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainStart);

                Set<String> storedButFailed = new TreeSet<>(ledger.receivedUnacknowledged());
                System.err.println("[it] FAULT broker-sigkill: acknowledged " + ledger.sentCount() + " (" + beforeKill
                    + " before the kill, " + (atRestart - beforeKill) + " while it was down, "
                    + (ledger.sentCount() - atRestart) + " after the restart), failed " + load.failed() + " ("
                    + failedWhileDown + " by the restart), lost " + ledger.missing().size() + ", duplicates "
                    + ledger.duplicates() + " in " + ledger.duplicatedKeys() + " keys, failed but stored "
                    + storedButFailed.size() + "; kill took " + killMillis + " ms, restart " + restartMillis
                    + " ms, all received " + drainMillis + " ms after the last send");
                new TreeMap<>(load.failures()).values().stream().limit(5)
                    .forEach(f -> System.err.println("[it]   failed send: " + f));
                assertTrue(failedWhileDown > 0, "no send failed while the broker was down: was it killed?");
                assertEquals(Set.of(), ledger.missing(), "acknowledged sends never received");
            }
        }
    }
}
