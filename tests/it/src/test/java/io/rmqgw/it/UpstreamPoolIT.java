package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.DefaultEventLoop;
import io.netty.util.concurrent.Future;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.pool.UpstreamConnection;
import io.rmqgw.it.fixture.BrokerRequestRecorder;
import io.rmqgw.it.fixture.BrokerRequestRecorder.RecordedRequest;
import io.rmqgw.it.fixture.ClusterUnderTest;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.RocketMqCluster;
import io.rmqgw.it.support.Admin;
import io.rmqgw.testing.Await;
import io.rmqgw.testing.UniqueNames;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The gateway's own upstream pool against the real 5.4.0 broker: GET_MAX_OFFSET requests the gateway
 * originates are answered with the offsets the broker reports to a direct request, while a real
 * producer sends through the same gateway to the same broker. The broker sees the pool's requests on
 * one connection of their own, apart from the producer's.
 */
@RocketMqCluster
class UpstreamPoolIT {

    private static final long REQUEST_TIMEOUT = TimeUnit.SECONDS.toNanos(5);
    /** How long the broker may take to add a message it already acknowledged to its consume queue. */
    private static final Duration INDEXED = Duration.ofSeconds(10);

    static ClusterUnderTest cluster;
    static GatewayFixture gateway;

    @BeforeAll
    static void setUp(ClusterUnderTest shared) throws Exception {
        cluster = shared;
        gateway = shared.closeAfterClass(GatewayFixture.on(shared).start());
    }

    @Test
    void gatewayOriginatedMaxOffsetIsAnsweredWhileAProducerSendsThroughTheGateway() throws Exception {
        String topic = UniqueNames.topic("pool");
        cluster.createTopic(topic, 1); // one queue: every message lands on queue 0
        int n = 60;
        CountDownLatch halfSent = new CountDownLatch(1);
        CountDownLatch queriedAtHalf = new CountDownLatch(1);

        DefaultMQProducer producer = new DefaultMQProducer(cluster.group("pool"));
        producer.setNamesrvAddr(gateway.namesrvAddress());
        producer.setInstanceName("rmqgw-it-pool-" + System.nanoTime());
        DefaultEventLoop caller = new DefaultEventLoop();
        UpstreamConnection broker = gateway.gateway().upstreamPool().broker(cluster.brokerAddress());
        try (BrokerRequestRecorder.Recording rec = cluster.recorder().start()) {
            producer.start();
            CompletableFuture<Integer> sending = CompletableFuture.supplyAsync(() -> {
                try {
                    for (int i = 0; i < n; i++) {
                        SendResult r = producer.send(new Message(topic, ("pool " + i).getBytes(StandardCharsets.UTF_8)));
                        if (r.getSendStatus() != SendStatus.SEND_OK) {
                            throw new IllegalStateException("send " + i + ": " + r);
                        }
                        if (i == n / 2 - 1) {
                            // the gateway's own request is asked and answered between two client sends
                            halfSent.countDown();
                            if (!queriedAtHalf.await(30, TimeUnit.SECONDS)) {
                                throw new IllegalStateException("no query at half-way");
                            }
                        }
                    }
                    return n;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });

            // the broker answers a send once its commit log holds it; the consume queue, whose end is the max offset,
            // follows on a broker thread of its own a moment later: so the max offset is awaited, not read once
            AtomicInteger poolQueries = new AtomicInteger();
            Callable<Long> poolMaxOffset = () -> {
                poolQueries.incrementAndGet();
                return maxOffset(broker, topic, caller);
            };
            assertTrue(halfSent.await(60, TimeUnit.SECONDS), "the producer did not get half-way");
            Await.until("max offset " + n / 2 + " after half the sync sends", INDEXED,
                () -> poolMaxOffset.call() == n / 2);
            queriedAtHalf.countDown();
            // and go on asking while the rest is sent: every answer is a real offset, never going back
            List<Long> during = new ArrayList<>();
            for (int i = 0; i < 2000 && !sending.isDone(); i++) {
                during.add(poolMaxOffset.call());
            }
            assertEquals(n, sending.get(60, TimeUnit.SECONDS));
            for (int i = 0; i < during.size(); i++) {
                long o = during.get(i);
                assertTrue(o >= n / 2 && o <= n && (i == 0 || o >= during.get(i - 1)), "offsets seen " + during);
            }

            Await.until("max offset " + n + " after all the sync sends", INDEXED, () -> poolMaxOffset.call() == n);
            assertEquals(n, directMaxOffset(topic), "the pool's answer and a direct request agree");

            // on the broker: the pool's requests on one connection of their own, the producer's sends on others
            List<RecordedRequest> queries = rec.brokerRequests().stream()
                .filter(r -> r.code() == RequestCode.GET_MAX_OFFSET).toList();
            RecordedRequest direct = queries.get(queries.size() - 1);
            List<RecordedRequest> fromPool = queries.subList(0, queries.size() - 1);
            Set<String> poolPeers = fromPool.stream().map(RecordedRequest::remoteAddress).collect(Collectors.toSet());
            Set<String> sendPeers = rec.brokerRequests().stream()
                .filter(r -> r.code() == RequestCode.SEND_MESSAGE_V2 || r.code() == RequestCode.SEND_MESSAGE)
                .map(RecordedRequest::remoteAddress).collect(Collectors.toSet());
            System.err.println("[it] pool: " + fromPool.size() + " GET_MAX_OFFSET from " + poolPeers + " ("
                + during.size() + " during the sends), sends from " + sendPeers);
            assertEquals(poolQueries.get(), fromPool.size(), "every pool query reached the broker once");
            assertEquals(1, poolPeers.size(), "one multiplexed connection: " + poolPeers);
            assertFalse(poolPeers.contains(direct.remoteAddress()));
            assertTrue(fromPool.stream().allMatch(r -> r.serializeType() == SerializeType.ROCKETMQ && !r.oneway()));
            assertFalse(sendPeers.isEmpty());
            assertTrue(sendPeers.stream().noneMatch(poolPeers::contains), "pool and producer share a connection");
        } finally {
            producer.shutdown();
            caller.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS).syncUninterruptibly();
        }
    }

    /** GET_MAX_OFFSET of queue 0 through the pool; the answer completes on {@code caller}, as asked. */
    private static long maxOffset(UpstreamConnection broker, String topic, DefaultEventLoop caller) throws Exception {
        CompletableFuture<Boolean> onCaller = new CompletableFuture<>();
        Future<RemotingFrame> f = broker.request(RequestCode.GET_MAX_OFFSET, Map.of("topic", topic, "queueId", "0"),
            null, REQUEST_TIMEOUT, caller);
        f.addListener(done -> onCaller.complete(caller.inEventLoop()));
        RemotingFrame answer = f.get(10, TimeUnit.SECONDS);
        try {
            assertTrue(onCaller.get(5, TimeUnit.SECONDS), "completed off the caller's loop");
            assertEquals(ResponseCode.SUCCESS, answer.code(), () -> HeaderCodec.decodeHeader(answer).remark());
            return Long.parseLong(HeaderCodec.decodeHeader(answer).extFields().get("offset"));
        } finally {
            answer.release();
        }
    }

    /** The same question asked on a connection of its own, straight to the broker. */
    private static long directMaxOffset(String topic) throws Exception {
        GetMaxOffsetRequestHeader h = new GetMaxOffsetRequestHeader();
        h.setTopic(topic);
        h.setQueueId(0);
        RemotingCommand response = Admin.invoke(cluster.brokerAddress(),
            RemotingCommand.createRequestCommand(RequestCode.GET_MAX_OFFSET, h), Duration.ofSeconds(5));
        assertEquals(ResponseCode.SUCCESS, response.getCode(), response::getRemark);
        return Long.parseLong(response.getExtFields().get("offset"));
    }
}
