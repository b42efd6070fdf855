package io.rmqgw.gateway.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rmqgw.gateway.clients.ClientRegistry.Outcome;
import io.rmqgw.gateway.clients.ClientRegistry.Role;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.common.consumer.ConsumeFromWhere;
import org.apache.rocketmq.remoting.protocol.heartbeat.ConsumeType;
import org.apache.rocketmq.remoting.protocol.heartbeat.ConsumerData;
import org.apache.rocketmq.remoting.protocol.heartbeat.HeartbeatData;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.remoting.protocol.heartbeat.ProducerData;
import org.apache.rocketmq.remoting.protocol.heartbeat.SubscriptionData;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ClientRegistryTest {

    private static final String BROKER_A = "10.0.0.1:10911";
    private static final String BROKER_B = "10.0.0.3:10911";

    private final ClientRegistry registry = new ClientRegistry();
    private final List<EmbeddedChannel> channels = new ArrayList<>();

    @AfterEach
    void closeChannels() {
        channels.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    private EmbeddedChannel channel() {
        EmbeddedChannel ch = new EmbeddedChannel();
        channels.add(ch);
        return ch;
    }

    /** What a 5.4.0 client's MQClientInstance.prepareHeartbeatData builds, encoded by the real class. */
    private static byte[] heartbeat540(String clientId, Set<String> producers, Set<String> consumers, boolean withoutSub) {
        HeartbeatData hb = new HeartbeatData();
        hb.setClientID(clientId);
        for (String group : producers) {
            ProducerData p = new ProducerData();
            p.setGroupName(group);
            hb.getProducerDataSet().add(p);
        }
        for (String group : consumers) {
            ConsumerData c = new ConsumerData();
            c.setGroupName(group);
            c.setConsumeType(ConsumeType.CONSUME_PASSIVELY);
            c.setMessageModel(MessageModel.CLUSTERING);
            c.setConsumeFromWhere(ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET);
            if (!withoutSub) {
                SubscriptionData s = new SubscriptionData("TopicTest", "TagA || TagB");
                s.getTagsSet().add("TagA");
                s.getTagsSet().add("TagB");
                c.getSubscriptionDataSet().add(s);
            }
            hb.getConsumerDataSet().add(c);
        }
        hb.setWithoutSub(withoutSub);
        hb.setHeartbeatFingerprint(hb.computeHeartbeatFingerprint());
        return hb.encode();
    }

    /**
     * A 4.9.7 client's heartbeat: produced by rocketmq-common 4.9.7's HeartbeatData.encode()
     * (fastjson 1.2.69_noneautotype) for a producer group and a consumer group with two subscriptions.
     */
    private static byte[] heartbeat497() throws Exception {
        try (InputStream in = ClientRegistryTest.class.getResourceAsStream("/clients/heartbeat-4.9.7.json")) {
            return in.readAllBytes();
        }
    }

    /** Feeds the body through a pooled buffer, as it arrives off the wire, and checks it is left alone. */
    private Outcome heartbeat(Channel ch, String broker, byte[] body, boolean direct) {
        ByteBuf buf = direct ? PooledByteBufAllocator.DEFAULT.directBuffer() : PooledByteBufAllocator.DEFAULT.heapBuffer();
        try {
            buf.writeBytes(new byte[] {1, 2, 3}).writeBytes(body).readerIndex(3);
            Outcome outcome = registry.heartbeat(ch, broker, buf);
            assertEquals(3, buf.readerIndex(), "reader index untouched");
            assertEquals(1, buf.refCnt(), "no ownership taken");
            return outcome;
        } finally {
            buf.release();
        }
    }

    private Outcome heartbeat(Channel ch, String broker, byte[] body) {
        return heartbeat(ch, broker, body, true);
    }

    @Test
    void recordsA540HeartbeatInBothKinds() {
        EmbeddedChannel full = channel();
        EmbeddedChannel light = channel();
        byte[] body = heartbeat540("10.1.1.1@100#1", Set.of("P1", "CLIENT_INNER_PRODUCER"), Set.of("C1", "C2"), false);
        assertTrue(new String(body, StandardCharsets.UTF_8).contains("\"heartbeatFingerprint\""));

        assertEquals(Outcome.RECORDED, heartbeat(full, BROKER_A, body));
        assertEquals(Outcome.RECORDED, heartbeat(light, BROKER_B,
            heartbeat540("10.1.1.1@100#1", Set.of("P1"), Set.of("C1"), true), false));

        assertEquals(Optional.of(full), registry.connection(BROKER_A, "10.1.1.1@100#1"));
        assertEquals(Optional.of(light), registry.connection(BROKER_B, "10.1.1.1@100#1"));
        assertEquals(Optional.empty(), registry.connection(BROKER_A, "other"));
        ClientRegistry.Client client = registry.client(BROKER_A, "10.1.1.1@100#1").orElseThrow();
        assertEquals(Set.of("P1", "CLIENT_INNER_PRODUCER"), client.producerGroups());
        assertEquals(Set.of("C1", "C2"), client.consumerGroups());
        assertEquals(Set.of("10.1.1.1@100#1"), registry.clientsOfGroup(Role.CONSUMER, "C2"));
        assertEquals(List.of(full), registry.connectionsOfGroup(Role.CONSUMER, "C2", BROKER_A));
        assertEquals(List.of(), registry.connectionsOfGroup(Role.CONSUMER, "C2", BROKER_B));
        assertEquals(List.of(light), registry.connectionsOfGroup("C1", BROKER_B));
        assertEquals(2, registry.size());
    }

    @Test
    void records497HeartbeatFixture() throws Exception {
        EmbeddedChannel ch = channel();
        assertEquals(Outcome.RECORDED, heartbeat(ch, BROKER_A, heartbeat497(), false));

        String id = "127.0.0.1@4711#1234567890";
        assertEquals(Set.of("CLIENT_INNER_PRODUCER", "please_rename_unique_group_name"),
            registry.client(BROKER_A, id).orElseThrow().producerGroups());
        assertEquals(Set.of("OrderConsumers"), registry.client(BROKER_A, id).orElseThrow().consumerGroups());
        assertEquals(Set.of(id), registry.clientsOfGroup("please_rename_unique_group_name"));
        assertEquals(Set.of(), registry.clientsOfGroup(Role.PRODUCER, "OrderConsumers"), "roles are separate");
        assertEquals(Set.of(), registry.clientsOfGroup(Role.CONSUMER, "TopicTest"), "topics are not groups");
    }

    @Test
    void groupMembershipAcrossClientsAndBrokers() {
        EmbeddedChannel a1 = channel();
        EmbeddedChannel a2 = channel();
        EmbeddedChannel b1 = channel();
        heartbeat(a1, BROKER_A, heartbeat540("c1", Set.of("P"), Set.of("C"), false));
        heartbeat(a2, BROKER_A, heartbeat540("c2", Set.of(), Set.of("C"), false));
        heartbeat(b1, BROKER_B, heartbeat540("c1", Set.of("P"), Set.of("C"), false));

        assertEquals(Set.of("c1", "c2"), registry.clientsOfGroup(Role.CONSUMER, "C"));
        assertEquals(Set.of("c1"), registry.clientsOfGroup(Role.PRODUCER, "P"));
        assertEquals(Set.of(a1, a2), Set.copyOf(registry.connectionsOfGroup(Role.CONSUMER, "C", BROKER_A)));
        assertEquals(List.of(b1), registry.connectionsOfGroup(Role.CONSUMER, "C", BROKER_B));
        assertEquals(List.of(a1), registry.connectionsOfGroup("P", BROKER_A));
        assertEquals(Set.of(), registry.clientsOfGroup("nobody"));
    }

    @Test
    void reHeartbeatReplacesGroups() {
        EmbeddedChannel ch = channel();
        assertEquals(Outcome.RECORDED, heartbeat(ch, BROKER_A, heartbeat540("c1", Set.of("P1"), Set.of("C1"), false)));
        assertEquals(Outcome.UNCHANGED, heartbeat(ch, BROKER_A, heartbeat540("c1", Set.of("P1"), Set.of("C1"), true)),
            "a 5.x heartbeat without subscriptions still names the same groups");

        assertEquals(Outcome.RECORDED, heartbeat(ch, BROKER_A, heartbeat540("c1", Set.of("P2"), Set.of("C1", "C3"), false)));
        assertEquals(Set.of(), registry.clientsOfGroup("P1"));
        assertEquals(Set.of("c1"), registry.clientsOfGroup(Role.PRODUCER, "P2"));
        assertEquals(Set.of("c1"), registry.clientsOfGroup(Role.CONSUMER, "C3"));
        assertEquals(1, registry.size());
    }

    @Test
    void aClientMovingToANewConnectionKeepsItWhenTheOldOneCloses() {
        EmbeddedChannel old = channel();
        EmbeddedChannel fresh = channel();
        heartbeat(old, BROKER_A, heartbeat540("c1", Set.of("P"), Set.of(), false));
        assertEquals(Outcome.RECORDED, heartbeat(fresh, BROKER_A, heartbeat540("c1", Set.of("P"), Set.of(), false)));
        assertEquals(Optional.of(fresh), registry.connection(BROKER_A, "c1"));

        old.close();
        assertEquals(Optional.of(fresh), registry.connection(BROKER_A, "c1"));
        assertEquals(List.of(fresh), registry.connectionsOfGroup("P", BROKER_A));
    }

    @Test
    void unregisterLeavesTheNamedGroupsOnly() {
        EmbeddedChannel a = channel();
        EmbeddedChannel b = channel();
        heartbeat(a, BROKER_A, heartbeat540("c1", Set.of("P1", "P2"), Set.of("C1"), false));
        heartbeat(b, BROKER_B, heartbeat540("c1", Set.of("P1"), Set.of("C1"), false));

        assertTrue(registry.unregister(a, "c1", "P1", null));
        assertEquals(Set.of("P2"), registry.client(BROKER_A, "c1").orElseThrow().producerGroups());
        assertEquals(List.of(), registry.connectionsOfGroup(Role.PRODUCER, "P1", BROKER_A));
        assertEquals(List.of(b), registry.connectionsOfGroup(Role.PRODUCER, "P1", BROKER_B), "other broker untouched");

        assertTrue(registry.unregister(a, "c1", "P2", "C1"));
        assertEquals(Set.of(), registry.client(BROKER_A, "c1").orElseThrow().consumerGroups());
        assertEquals(Set.of("c1"), registry.clientsOfGroup(Role.CONSUMER, "C1"), "still a member through broker B");
        assertEquals(Optional.of(a), registry.connection(BROKER_A, "c1"), "the connection stays until it closes");

        assertFalse(registry.unregister(a, "c1", "P2", "C1"), "already gone");
        assertFalse(registry.unregister(a, "someone-else", "P2", null));
        assertFalse(registry.unregister(channel(), "c1", "P1", null), "never heartbeated on that channel");
        assertFalse(registry.unregister(a, null, "P1", null));
    }

    @Test
    void closingAChannelRemovesItsClients() {
        EmbeddedChannel a = channel();
        EmbeddedChannel b = channel();
        heartbeat(a, BROKER_A, heartbeat540("c1", Set.of("P"), Set.of("C"), false));
        heartbeat(b, BROKER_A, heartbeat540("c2", Set.of("P"), Set.of(), false));

        a.close();
        assertEquals(Optional.empty(), registry.client(BROKER_A, "c1"));
        assertEquals(Optional.empty(), registry.connection(BROKER_A, "c1"));
        assertEquals(Set.of("c2"), registry.clientsOfGroup("P"));
        assertEquals(Set.of(), registry.clientsOfGroup("C"));
        assertEquals(1, registry.size());

        b.close();
        assertEquals(0, registry.size());
        assertEquals(Set.of(), registry.clientsOfGroup("P"));
    }

    @Test
    void aHeartbeatOnAnAlreadyClosedChannelDoesNotLinger() {
        EmbeddedChannel ch = channel();
        ch.close();
        heartbeat(ch, BROKER_A, heartbeat540("c1", Set.of("P"), Set.of(), false));
        assertEquals(0, registry.size());
        assertEquals(Set.of(), registry.clientsOfGroup("P"));
    }

    @Test
    void malformedBodiesAreIgnoredAndChangeNothing() {
        EmbeddedChannel ch = channel();
        heartbeat(ch, BROKER_A, heartbeat540("c1", Set.of("P"), Set.of("C"), false));
        List<String> bad = List.of(
            "",
            "   ",
            "[]",
            "not json",
            "{\"clientID\":\"c1\",\"producerDataSet\":[{\"groupName\":\"X\"}]",
            "{\"producerDataSet\":[{\"groupName\":\"X\"}]}",
            "{\"clientID\":\"\",\"producerDataSet\":[]}",
            "{\"clientID\":7}",
            "{\"clientID\":\"c1\",\"producerDataSet\":{\"groupName\":\"X\"}}",
            "{\"clientID\":\"c1\",\"producerDataSet\":[\"X\"]}",
            "{\"clientID\":\"c1\",\"consumerDataSet\":[{\"consumeType\":\"CONSUME_PASSIVELY\"}]}",
            "{\"clientID\":\"c1\",\"consumerDataSet\":[{\"groupName\":\"X\"}],");
        for (String body : bad) {
            assertEquals(Outcome.MALFORMED, heartbeat(ch, BROKER_A, body.getBytes(StandardCharsets.UTF_8)), body);
            assertEquals(Outcome.MALFORMED, heartbeat(ch, BROKER_A, body.getBytes(StandardCharsets.UTF_8), false), body);
        }
        byte[] real = heartbeat540("c1", Set.of("Q"), Set.of("D"), false);
        for (int len = 0; len < real.length; len++) {
            assertEquals(Outcome.MALFORMED, heartbeat(ch, BROKER_A, java.util.Arrays.copyOf(real, len)), "prefix " + len);
        }
        assertEquals(Set.of("P"), registry.client(BROKER_A, "c1").orElseThrow().producerGroups());
        assertEquals(Set.of("c1"), registry.clientsOfGroup("C"));
        assertEquals(Set.of(), registry.clientsOfGroup("X"));
    }

    @Test
    void nullsForGroupSetsMeanNone() {
        EmbeddedChannel ch = channel();
        assertEquals(Outcome.RECORDED, heartbeat(ch, BROKER_A,
            "{\"clientID\":\"c1\",\"producerDataSet\":null,\"consumerDataSet\":[],\"extra\":{\"a\":[1,{}]}}"
                .getBytes(StandardCharsets.UTF_8)));
        ClientRegistry.Client client = registry.client(BROKER_A, "c1").orElseThrow();
        assertEquals(Set.of(), client.producerGroups());
        assertEquals(Set.of(), client.consumerGroups());
    }

    @Test
    void heartbeatsFromManyThreadsKeepTheIndexesConsistent() throws Exception {
        // 4 threads, each its own clients and connections, switching groups; then every channel closes.
        int threads = 4;
        int clientsPerThread = 25;
        List<EmbeddedChannel> all = new ArrayList<>();
        for (int i = 0; i < threads * clientsPerThread; i++) {
            all.add(channel());
        }
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> work = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int thread = t;
                work.add(pool.submit(() -> {
                    for (int round = 0; round < 200; round++) {
                        for (int c = 0; c < clientsPerThread; c++) {
                            int n = thread * clientsPerThread + c;
                            String group = round % 2 == 0 ? "Even" : "Odd";
                            registry.heartbeat(all.get(n), BROKER_A, wrap(heartbeat540("c" + n, Set.of(group), Set.of("Shared"), true)));
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : work) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
        }
        // the last round (199) is odd for every client
        assertEquals(threads * clientsPerThread, registry.clientsOfGroup(Role.PRODUCER, "Odd").size());
        assertEquals(Set.of(), registry.clientsOfGroup("Even"));
        assertEquals(threads * clientsPerThread, registry.connectionsOfGroup(Role.CONSUMER, "Shared", BROKER_A).size());
        all.forEach(EmbeddedChannel::close);
        assertEquals(0, registry.size());
        assertEquals(Set.of(), registry.clientsOfGroup("Shared"));
    }

    private static ByteBuf wrap(byte[] body) {
        return io.netty.buffer.Unpooled.wrappedBuffer(body);
    }
}
