package io.rmqgw.gateway.multicluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RelayContext;
import io.rmqgw.gateway.core.Role;
import io.rmqgw.gateway.core.UpstreamSettings;
import io.rmqgw.gateway.net.Dialer;
import io.rmqgw.gateway.net.Transport;
import io.rmqgw.gateway.pool.UpstreamPool;
import io.rmqgw.gateway.testing.FakeExchange;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.BrokerPortMap;
import io.rmqgw.testing.Wire;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the send steering never takes, whatever the brokers' health: sends to ordered logical topics, half messages
 * of transactions, oneway sends, sends to other topics. They go on as they came (the same frame, nothing answered).
 */
class SendSteeringTest {

    private final GatewayMetrics metrics = GatewayMetrics.inMemory();
    private final Dialer noDials = (target, loop, timeout, handler) -> {
        throw new AssertionError("a send it does not take dials nothing: " + target);
    };
    private final Transport transport = new Transport(1);
    private final RelayContext context = new RelayContext(transport, noDials, metrics, 1 << 20,
        new UpstreamSettings(null, 1000, TimeUnit.SECONDS.toNanos(30), TimeUnit.SECONDS.toNanos(60)));
    private final BrokerListeners brokers = new BrokerListeners(context, "127.0.0.1", "127.0.0.1",
        new BrokerPortMap(20000, 20011), (address, hosts) -> HandlerTable.builder(Role.BROKER).build());
    private final UpstreamPool pool = new UpstreamPool(context);
    private final LogicalTopics feature = new LogicalTopics(ConfigLoader.parse("upstream:\n  namesrv: a:9876\n"
        + "clusters:\n  idc2: {namesrv: 'b:9876'}\nlogical-topics:\n  - {topic: Orders, clusters: [default, idc2]}\n"
        + "  - {topic: Ledger, clusters: [default, idc2], ordered: true}\n"), context, pool, brokers);
    private final SendSteering steering = new SendSteering(feature, "127.0.0.1:10911");

    @AfterEach
    void close() {
        feature.close();
        pool.close();
        transport.close(Duration.ofMillis(50));
    }

    private static RemotingFrame send(String topic, int sysFlag, UnaryOperator<Wire.Builder> more) {
        return FakeExchange.frame(more.apply(Wire.request(RequestCode.SEND_MESSAGE_V2).type(SerializeType.JSON)
            .opaque(2).ext("a", "Group").ext("b", topic).ext("c", "TBW102").ext("d", "4").ext("e", "0")
            .ext("f", Integer.toString(sysFlag)).ext("g", "1700000000000").ext("h", "0")).body("m").bytes());
    }

    private void passes(RemotingFrame request) {
        try (FakeExchange exchange = FakeExchange.of(request)) {
            assertSame(request, steering.filter(exchange, request));
            assertEquals(0, exchange.answers().size());
            request.release();
        }
    }

    @Test
    void anOrderedLogicalTopicsSendIsNeverTaken() {
        passes(send("Ledger", 0, b -> b));
    }

    @Test
    void halfMessagesAndTheirCommitsAndRollbacksAreNeverTaken() {
        for (int transactionBits : new int[] {0x04, 0x08, 0x0C}) {
            passes(send("Orders", transactionBits, b -> b));
        }
    }

    @Test
    void onewaySendsAndOtherTopicsAreNeverTaken() {
        passes(send("Orders", 0, Wire.Builder::oneway));
        passes(send("Invoices", 0, b -> b));
    }
}
