package io.rmqgw.gateway.clients;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashSet;
import java.util.Set;
import org.apache.rocketmq.common.message.MessageQueue;
import org.apache.rocketmq.remoting.protocol.body.LockBatchRequestBody;
import org.apache.rocketmq.remoting.protocol.heartbeat.ConsumeType;
import org.apache.rocketmq.remoting.protocol.heartbeat.ConsumerData;
import org.apache.rocketmq.remoting.protocol.heartbeat.HeartbeatData;
import org.apache.rocketmq.remoting.protocol.heartbeat.MessageModel;
import org.apache.rocketmq.remoting.protocol.heartbeat.ProducerData;
import org.apache.rocketmq.remoting.protocol.heartbeat.SubscriptionData;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * Writes {@link HeartbeatFuzzTest}'s seeds with rocketmq-remoting 5.4.0's own classes. Gated:
 * {@code mvn -pl gateway -am test -Dtest=HeartbeatSeedsWriter -Drmqgw.fuzz.writeSeeds=true -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class HeartbeatSeedsWriter {

    @Test
    @EnabledIfSystemProperty(named = "rmqgw.fuzz.writeSeeds", matches = "true")
    void write() throws Exception {
        Path dir = Files.createDirectories(Paths.get("src/test/resources/io/rmqgw/gateway/clients/HeartbeatFuzzTestInputs"));
        HeartbeatData hb = new HeartbeatData();
        hb.setClientID("127.0.0.1@4242#1707000000000");
        ProducerData producer = new ProducerData();
        producer.setGroupName("producer_group");
        hb.getProducerDataSet().add(producer);
        ConsumerData consumer = new ConsumerData();
        consumer.setGroupName("consumer_group");
        consumer.setConsumeType(ConsumeType.CONSUME_PASSIVELY);
        consumer.setMessageModel(MessageModel.CLUSTERING);
        SubscriptionData sub = new SubscriptionData();
        sub.setTopic("TopicTest");
        sub.setSubString("TagA || TagB");
        sub.getTagsSet().add("TagA");
        sub.getTagsSet().add("TagB");
        consumer.getSubscriptionDataSet().add(sub);
        hb.getConsumerDataSet().add(consumer);
        Files.write(dir.resolve("heartbeat-producer-consumer"), hb.encode());

        HeartbeatData withoutSub = new HeartbeatData();
        withoutSub.setClientID("127.0.0.1@4243#1707000000001");
        withoutSub.setWithoutSub(true);
        withoutSub.setHeartbeatFingerprint(12345);
        withoutSub.getProducerDataSet().add(producer);
        Files.write(dir.resolve("heartbeat-without-subscriptions"), withoutSub.encode());

        LockBatchRequestBody lock = new LockBatchRequestBody();
        lock.setConsumerGroup("consumer_group");
        lock.setClientId("127.0.0.1@4242#1707000000000");
        Set<MessageQueue> queues = new HashSet<>();
        queues.add(new MessageQueue("TopicTest", "broker-a", 0));
        queues.add(new MessageQueue("TopicTest", "broker-a", 1));
        lock.setMqSet(queues);
        Files.write(dir.resolve("lock-batch"), lock.encode());
    }
}
