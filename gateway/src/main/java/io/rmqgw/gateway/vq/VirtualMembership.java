package io.rmqgw.gateway.vq;

import com.fasterxml.jackson.databind.JsonNode;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.gateway.core.Exchange;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Registrations on the virtual broker and the members they make, one handler per code: a heartbeat registers the
 * client (and starts its served groups' consumption), an unregistration ends its leases, and the member list is
 * the clients registered here (the real clients on the brokers for a group that bypasses).
 */
final class VirtualMembership {

    private VirtualMembership() {
    }

    /** HEART_BEAT: every client heartbeats every broker of its routes. */
    static final class Heartbeats extends VirtualBrokerFamily {
        Heartbeats(VirtualQueues queues, Bypass bypass) {
            super(queues, bypass, "heartbeats");
        }

        @Override
        JsonNode readBody(Exchange exchange, RemotingFrame request) {
            queues.clients().heartbeat(exchange.client().channel(), VirtualQueues.REGISTRY_KEY, request.bodySlice());
            return VirtualBrokerRequest.readJson(request.bodySlice());
        }

        @Override
        void serve(Exchange exchange, VirtualBrokerRequest r) {
            Set<String> joined = new LinkedHashSet<>();
            JsonNode heartbeat = r.json();
            if (heartbeat != null) {
                for (JsonNode cd : heartbeat.path("consumerDataSet")) {
                    joined(exchange, cd, joined);
                }
            }
            if (!joined.isEmpty()) {
                queues.watchMembers(exchange.client().channel(), joined);
            }
            r.success(exchange, null);
        }

        /** One consumer's data: its bypass topics remembered, its served group's consumers told of a member. */
        private void joined(Exchange exchange, JsonNode cd, Set<String> joined) {
            String group = cd.path("groupName").asText(null);
            for (JsonNode sub : cd.path("subscriptionDataSet")) {
                bypass.registered(exchange.client().channel(), group, sub.path("topic").asText(null));
            }
            for (VirtualConsumer c : queues.consumers()) {
                if (c.config().group().equals(group)) {
                    if (!"CLUSTERING".equals(cd.path("messageModel").asText("CLUSTERING"))) {
                        continue; // broadcasting members read every queue themselves: nothing to lease
                    }
                    Subscription s = Subscription.fromConsumerData(cd, c.config().topic());
                    Subscription retry = Subscription.fromConsumerData(cd, "%RETRY%" + group);
                    StartPoint from = StartPoint.of(cd.path("consumeFromWhere").asText(null));
                    joined.add(group);
                    queues.loop().execute(() -> c.member(s, retry, from));
                }
            }
        }
    }

    /** UNREGISTER_CLIENT: the client leaves its groups; its leases end. */
    static final class Unregistrations extends VirtualBrokerFamily {
        Unregistrations(VirtualQueues queues, Bypass bypass) {
            super(queues, bypass, "unregistrations");
        }

        @Override
        void serve(Exchange exchange, VirtualBrokerRequest r) {
            String group = r.field("consumerGroup");
            queues.clients().unregister(exchange.client().channel(), r.field("clientID"), r.field("producerGroup"),
                group);
            if (group != null && queues.isServed(group)) {
                long holder = VirtualConsumer.holderOf(exchange.client().channel());
                for (VirtualConsumer c : queues.consumers()) {
                    if (c.config().group().equals(group)) {
                        queues.loop().execute(() -> c.holderGone(holder));
                    }
                }
                queues.membersChanged(group);
            }
            r.success(exchange, null);
        }
    }

    /** GET_CONSUMER_LIST_BY_GROUP: the group's members as the gateway knows them. */
    static final class Members extends VirtualBrokerFamily {
        Members(VirtualQueues queues, Bypass bypass) {
            super(queues, bypass, "members");
        }

        @Override
        void serve(Exchange exchange, VirtualBrokerRequest r) {
            String group = r.field("consumerGroup");
            if (group != null && !queues.isServed(group)) {
                bypass.members(exchange, r); // its members are the real clients, registered on the brokers
            } else if (!r.oneway()) {
                exchange.answer(ServedGroupsFilter.membersAnswer(exchange, r.opaque(), r.encoding(), queues, group));
            }
        }
    }
}
