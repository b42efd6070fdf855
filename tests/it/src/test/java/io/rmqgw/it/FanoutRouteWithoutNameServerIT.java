package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.config.FanoutConfig;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.gateway.fanout.Fanout;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.testing.BlackHole;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.message.MessageQueue;
import org.junit.jupiter.api.Test;

/**
 * The gateway's only name server is a black hole (connects never complete): a 5.4.0 producer still gets the fan-out
 * topic's route over its fresh name-server connection within its own request timeout, though the gateway's
 * {@code upstream.connect-timeout} is far longer.
 */
class FanoutRouteWithoutNameServerIT {

    @Test
    void aProducerGetsTheFanoutRouteWhileTheNameServerCannotBeReached() throws Exception {
        try (BlackHole hole = BlackHole.listen();
             GatewayFixture gateway = GatewayFixture.startWith(hole.address(), HeaderEncoding.ROCKETMQ, c -> c
                 .withFanout(new FanoutConfig(true, null, null, null, null, null))
                 .withUpstream(new UpstreamConfig(c.upstream().namesrv(), Duration.ofSeconds(20), null, null,
                     HeaderEncoding.ROCKETMQ)))) {
            hole.fill();
            DefaultMQProducer producer = new DefaultMQProducer("rmqgw_it_fanout_nons_pg");
            producer.setNamesrvAddr(gateway.namesrvAddress());
            producer.setInstanceName("rmqgw-it-fanout-nons-" + System.nanoTime());
            // its start-up route update asks for this key (TBW102 by default): a request that needs the name server,
            // read before the fan-out one, would hold the connection's reads for its dial (docs/ARCHITECTURE.md)
            producer.setCreateTopicKey(FanoutConfig.DEFAULT_TOPIC);
            producer.start();
            try {
                List<MessageQueue> queues = producer.fetchPublishMessageQueues(FanoutConfig.DEFAULT_TOPIC);
                assertEquals(FanoutConfig.DEFAULT_QUEUES, queues.size(), queues::toString);
                assertTrue(queues.stream().allMatch(q -> Fanout.BROKER_NAME.equals(q.getBrokerName())), queues::toString);
            } finally {
                producer.shutdown();
            }
        }
    }
}
