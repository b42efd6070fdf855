package io.rmqgw.gateway.vq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.internal.logging.InternalLoggerFactory;
import io.netty.util.internal.logging.JdkLoggerFactory;
import io.rmqgw.gateway.config.CoalescingConfig;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.ScriptedCluster;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.LeakCheckExtension;
import io.rmqgw.testing.RawClient;
import io.rmqgw.testing.ScriptedPeer;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A gateway running virtual queues and coalescing stops cleanly with its virtual-queue fetches held at the broker:
 * no ERROR line. Every stop used to log two Netty ERROR traces ({@code RejectedExecutionException: event executor
 * terminated} from {@code UpstreamConnection.fail}): the pool failed held requests on its loops after the stop
 * had begun ending them, so the caller's loop was gone when the failure was to be told.
 *
 * <p>Netty logs through java.util.logging in this module's tests (no SLF4J provider on the test classpath): a
 * handler on the root logger sees every record of every logger, whenever it was made.
 */
@ExtendWith(LeakCheckExtension.class)
class CleanStopTest {

    private static final String TOPIC = Records.TOPIC;
    private static final String SERVED = "GID_served";

    @RegisterExtension
    final Closer resources = Closer.eachTest();

    /** The records at SEVERE (ERROR) logged while it is installed. */
    private static final class Severe extends Handler {
        final List<LogRecord> records = new CopyOnWriteArrayList<>();

        @Override
        public void publish(LogRecord record) {
            if (record.getLevel().intValue() >= Level.SEVERE.intValue()) {
                records.add(record);
            }
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }

        String describe() {
            StringBuilder b = new StringBuilder();
            for (LogRecord r : records) {
                b.append('\n').append(r.getLoggerName()).append(": ").append(r.getMessage())
                    .append(r.getThrown() == null ? "" : " " + r.getThrown());
            }
            return b.toString();
        }
    }

    /** Which loop ends first is a race: repeated, with held requests from clients on every worker loop. */
    @RepeatedTest(10)
    void aGatewayWithVirtualQueuesAndCoalescingStopsWithoutAnErrorWhileFetchesAreHeld() throws Exception {
        assertTrue(InternalLoggerFactory.getDefaultFactory() instanceof JdkLoggerFactory,
            "Netty does not log through java.util.logging here: this test would see nothing");
        // every pull held: the virtual queues' fetches stay in flight at the broker until the stop
        ScriptedCluster cluster = ScriptedCluster.options()
            .broker("broker-a", ScriptedPeer.answering(request -> request.getCode() == RequestCode.PULL_MESSAGE ? null
                : RemotingCommand.createResponseCommand(Wire.SUCCESS, "broker-a " + request.getCode())))
            .noClusterInfo().nameServer(brokers -> Routes.nameServer(Map.of(TOPIC, brokers)))
            .gateway(g -> g.requestTimeout(Duration.ofSeconds(5)).longPollTimeout(Duration.ofSeconds(30))
                .virtualQueues(new VirtualQueueConfig(SERVED, TOPIC, 2, null, null, null, null, null, null))
                .coalescing(new CoalescingConfig(List.of(TOPIC), null, null, null, null)))
            .start(resources);
        TestGateway gateway = cluster.gateway();
        String address = gateway.gateway().virtualQueues().listener().get();
        int virtualPort = Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
        Severe severe = new Severe();
        Logger root = Logger.getLogger("");
        root.addHandler(severe);
        List<RawClient> clients = new ArrayList<>();
        try (RawClient consumer = RawClient.connect(virtualPort)) {
            consumer.send(Wire.request(RequestCode.HEART_BEAT).opaque(1).body(heartbeat("10.0.0.9@c1")).bytes());
            consumer.readUntil(Wire.Frame::isResponse, RawClient.WAIT);
            // the served group's pull of a virtual queue (its fetches), and other groups' pulls that bypass them
            // (relayed on the gateway's pool) from connections on every loop: all held at the broker
            consumer.send(pull(2, SERVED, 0).bytes());
            for (int i = 0; i < 8; i++) {
                RawClient other = RawClient.connect(virtualPort);
                clients.add(other);
                other.send(pull(3, "GID_other" + i, i % 4).bytes());
            }
            TestGateway.await(() -> gateway.gateway().inFlight() >= 8, Duration.ofSeconds(10), "the pulls held");
            int held = gateway.gateway().inFlight();
            int fetches = gateway.gateway().virtualQueues().fetchesInFlight();
            gateway.gateway().close(Duration.ofSeconds(2));
            System.err.println("[test] stopped with " + held + " requests in flight (" + fetches
                + " virtual-queue fetches) held at the broker; " + severe.records.size() + " ERROR records");
            assertEquals(0, severe.records.size(), severe::describe);
        } finally {
            root.removeHandler(severe);
            clients.forEach(RawClient::close);
        }
    }

    private static Wire.Builder pull(int opaque, String group, int queue) {
        return Wire.request(RequestCode.PULL_MESSAGE).opaque(opaque).ext("consumerGroup", group).ext("topic", TOPIC)
            .ext("queueId", Integer.toString(queue)).ext("queueOffset", "0").ext("maxMsgNums", "32")
            .ext("sysFlag", "2").ext("commitOffset", "0").ext("suspendTimeoutMillis", "20000");
    }

    private static String heartbeat(String clientId) {
        return "{\"clientID\":\"" + clientId + "\",\"producerDataSet\":[],\"consumerDataSet\":[{\"groupName\":\""
            + SERVED + "\",\"consumeType\":\"CONSUME_PASSIVELY\",\"messageModel\":\"CLUSTERING\","
            + "\"consumeFromWhere\":\"CONSUME_FROM_LAST_OFFSET\",\"subscriptionDataSet\":[{\"topic\":\"" + TOPIC
            + "\",\"subString\":\"*\",\"tagsSet\":[],\"codeSet\":[],\"subVersion\":1,\"expressionType\":\"TAG\"}],"
            + "\"unitMode\":false}]}";
    }
}
