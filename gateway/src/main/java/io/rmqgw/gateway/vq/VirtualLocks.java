package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.core.Exchange;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;

/**
 * LOCK_BATCH_MQ and UNLOCK_BATCH_MQ: an orderly group that is not served on any of the queues' topics locks the
 * real queues behind them ({@link BypassLocks}); the served group cannot consume in order (its messages go to many
 * consumers), so it is refused with the reason.
 */
final class VirtualLocks extends VirtualBrokerFamily {

    VirtualLocks(VirtualQueues queues, Bypass bypass) {
        super(queues, bypass, "locks");
    }

    @Override
    JsonNode readBody(Exchange exchange, RemotingFrame request) {
        return VirtualBrokerRequest.readJson(request.bodySlice());
    }

    @Override
    void serve(Exchange exchange, VirtualBrokerRequest r) {
        if (r.json() instanceof ObjectNode body) {
            String group = body.path("consumerGroup").asText(null);
            boolean bypassed = body.path("mqSet").size() > 0;
            for (JsonNode mq : body.path("mqSet")) {
                bypassed &= bypass.applies(group, mq.path("topic").asText(null));
            }
            if (bypassed) {
                bypass.locks().locks(exchange, r, body);
                return;
            }
        }
        r.error(exchange, RemotingSysResponseCode.SYSTEM_ERROR, "orderly consumption is not served on virtual queues "
            + "for their group: take the group out of virtual-queues to consume it in order");
    }
}
