package io.rmqgw.gateway.vq;

import io.rmqgw.gateway.core.Exchange;

/**
 * PULL_MESSAGE, and a 5.x lite pull consumer's LITE_PULL_MESSAGE (the same header, leases and answer): a served
 * group's pull leases messages on its virtual queue ({@link VirtualConsumer#pull}, on the virtual queues' loop);
 * another group's goes on to the real queue ({@link BypassPulls}).
 */
final class VirtualPulls extends VirtualBrokerFamily {

    VirtualPulls(VirtualQueues queues, Bypass bypass) {
        super(queues, bypass, "pulls");
    }

    @Override
    void serve(Exchange exchange, VirtualBrokerRequest r) {
        String group = r.field("consumerGroup");
        String topic = r.field("topic");
        if (bypass.applies(group, topic)) {
            bypass.pulls().pull(exchange, r);
            return;
        }
        VirtualConsumer c = consumerOr(exchange, r, group, topic);
        if (c == null) {
            return;
        }
        int queue = r.intField("queueId", -1);
        long offset = r.longField("queueOffset", 0);
        int max = r.intField("maxMsgNums", 32);
        int sysFlag = r.intField("sysFlag", 0);
        long commitOffset = r.longField("commitOffset", -1);
        long suspend = r.longField("suspendTimeoutMillis", 0);
        queues.loop().execute(() -> c.pull(exchange, r.opaque(), r.encoding(), queue, offset, max, sysFlag,
            commitOffset, suspend));
    }
}
