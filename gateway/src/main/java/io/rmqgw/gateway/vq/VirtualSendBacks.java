package io.rmqgw.gateway.vq;

import io.netty.channel.Channel;
import io.rmqgw.gateway.core.Exchange;
import java.util.Map;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * CONSUMER_SEND_MSG_BACK: a served group's client hands a leased message back for redelivery
 * ({@link SendBacks#sendBack}); another group's goes on to the broker that stores the message
 * ({@link BypassSendBacks}).
 */
final class VirtualSendBacks extends VirtualBrokerFamily {

    VirtualSendBacks(VirtualQueues queues, Bypass bypass) {
        super(queues, bypass, "send-backs");
    }

    @Override
    void serve(Exchange exchange, VirtualBrokerRequest r) {
        String group = r.field("group");
        String topic = r.field("originTopic");
        VirtualConsumer c = queues.consumer(group, topic);
        if (c == null && bypass.applies(group, topic)) {
            bypass.sendBacks().sendBack(exchange, r);
            return;
        }
        if (c == null) {
            c = queues.consumers().stream().filter(x -> x.config().group().equals(group)).findFirst().orElse(null);
        }
        if (c == null) {
            r.error(exchange, ResponseCode.NO_PERMISSION, notServed(group, topic));
            return;
        }
        VirtualConsumer consumer = c;
        Channel channel = exchange.client().channel();
        Map<String, String> fields = r.ext() == null ? Map.of() : r.ext();
        queues.loop().execute(() -> consumer.sendBack(channel, fields, (code, remark) -> {
            if (code == ResponseCode.SUCCESS) {
                r.success(exchange, null);
            } else {
                r.error(exchange, code, remark);
            }
        }));
    }
}
