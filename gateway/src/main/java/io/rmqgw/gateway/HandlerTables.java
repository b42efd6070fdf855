package io.rmqgw.gateway;

import static org.apache.rocketmq.remoting.protocol.RequestCode.CHECK_TRANSACTION_STATE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.CONSUMER_SEND_MSG_BACK;
import static org.apache.rocketmq.remoting.protocol.RequestCode.CONSUME_MESSAGE_DIRECTLY;
import static org.apache.rocketmq.remoting.protocol.RequestCode.GET_BROKER_CLUSTER_INFO;
import static org.apache.rocketmq.remoting.protocol.RequestCode.GET_CONSUMER_LIST_BY_GROUP;
import static org.apache.rocketmq.remoting.protocol.RequestCode.GET_EARLIEST_MSG_STORETIME;
import static org.apache.rocketmq.remoting.protocol.RequestCode.GET_MAX_OFFSET;
import static org.apache.rocketmq.remoting.protocol.RequestCode.GET_MIN_OFFSET;
import static org.apache.rocketmq.remoting.protocol.RequestCode.GET_ROUTEINFO_BY_TOPIC;
import static org.apache.rocketmq.remoting.protocol.RequestCode.HEART_BEAT;
import static org.apache.rocketmq.remoting.protocol.RequestCode.LITE_PULL_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.LOCK_BATCH_MQ;
import static org.apache.rocketmq.remoting.protocol.RequestCode.POP_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.PULL_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.QUERY_CONSUMER_OFFSET;
import static org.apache.rocketmq.remoting.protocol.RequestCode.QUERY_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.REGISTER_TOPIC_IN_NAMESRV;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEARCH_OFFSET_BY_TIMESTAMP;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEND_BATCH_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEND_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEND_MESSAGE_V2;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEND_REPLY_MESSAGE;
import static org.apache.rocketmq.remoting.protocol.RequestCode.SEND_REPLY_MESSAGE_V2;
import static org.apache.rocketmq.remoting.protocol.RequestCode.UNLOCK_BATCH_MQ;
import static org.apache.rocketmq.remoting.protocol.RequestCode.UNREGISTER_CLIENT;
import static org.apache.rocketmq.remoting.protocol.RequestCode.UPDATE_CONSUMER_OFFSET;
import static org.apache.rocketmq.remoting.protocol.RequestCode.VIEW_MESSAGE_BY_ID;

import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.broker.ClientRegistration;
import io.rmqgw.gateway.broker.NameCheckedHandler;
import io.rmqgw.gateway.broker.PullHandler;
import io.rmqgw.gateway.broker.SendHandler;
import io.rmqgw.gateway.broker.ServedGroupFilter;
import io.rmqgw.gateway.clients.ServedGroups;
import io.rmqgw.gateway.coalesce.Coalescing;
import io.rmqgw.gateway.namesrv.RouteShaper;
import java.util.function.Supplier;
import io.rmqgw.gateway.broker.StoreHostRequests;
import io.rmqgw.gateway.broker.StoredRecordsHandler;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.edge.NameGuard;
import io.rmqgw.gateway.fanout.AnsweredSuccess;
import io.rmqgw.gateway.fanout.Fanout;
import io.rmqgw.gateway.fanout.FanoutRouteHandler;
import io.rmqgw.gateway.namesrv.RouteAnswerHandler;
import io.rmqgw.gateway.relay.HandlerTable;
import io.rmqgw.gateway.relay.RequestHandler;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.RouteCache;

/**
 * Where each request code is handled: the one place that says it. Every code not listed here goes to the
 * table's fallback: on the name-server and broker ports the admin-request policy, then relayed as an opaque
 * slice (re-encoded only when an edge needs another header encoding), and never decoded; what the gateway
 * decodes follows from these registrations.
 */
public final class HandlerTables {

    private HandlerTables() {
    }

    /** The name-server role (the gateway's main port), without fan-out. */
    public static HandlerTable namesrv(BrokerListeners brokers, RouteCache routes, ClusterView cluster,
                                       GatewayMetrics metrics) {
        return namesrv(brokers, routes, cluster, metrics, null);
    }

    /** The name-server role (the gateway's main port); {@code fanout} (may be null) answers the fan-out topic's route. */
    public static HandlerTable namesrv(BrokerListeners brokers, RouteCache routes, ClusterView cluster,
                                       GatewayMetrics metrics, Fanout fanout) {
        return namesrv(brokers, routes, cluster, metrics, fanout, RouteShaper.NONE);
    }

    /**
     * The name-server role (the gateway's main port); {@code fanout} (may be null) answers the fan-out topic's
     * route, {@code shaper} changes routes last (virtual-queue topics get the gateway's own broker).
     */
    public static HandlerTable namesrv(BrokerListeners brokers, RouteCache routes, ClusterView cluster,
                                       GatewayMetrics metrics, Fanout fanout, RouteShaper shaper) {
        return namesrv(brokers, routes, cluster, metrics, fanout, shaper, RequestHandler.PASS_THROUGH);
    }

    /**
     * The name-server role; {@code unregistered} treats every code not registered here (pass-through behind the
     * admin-request policy, built by the gateway).
     */
    public static HandlerTable namesrv(BrokerListeners brokers, RouteCache routes, ClusterView cluster,
                                       GatewayMetrics metrics, Fanout fanout, RouteShaper shaper,
                                       RequestHandler unregistered) {
        RouteAnswerHandler routeAnswers = new RouteAnswerHandler(brokers, routes, cluster, metrics, shaper);
        RequestHandler routeQueries = fanout == null ? routeAnswers : new FanoutRouteHandler(fanout, routeAnswers);
        return HandlerTable.builder("namesrv")
            // the topic checked as sends check it; broker addresses in the answer become the gateway's
            // listeners; routes cached for outages; the ClusterView learns brokers and queues; the fan-out
            // topic's route is the gateway's own
            .request(new NameCheckedHandler(NameGuard::checkTopicField, routeQueries), GET_ROUTEINFO_BY_TOPIC)
            .request(routeAnswers, GET_BROKER_CLUSTER_INFO)
            // a topic named to the name servers: checked, then relayed as it is (DELETE_TOPIC_IN_NAMESRV is
            // not: a topic created with a bad name before the checks must stay removable)
            .request(new NameCheckedHandler(NameGuard::checkTopicField), REGISTER_TOPIC_IN_NAMESRV)
            .fallback(unregistered)
            .build();
    }

    /**
     * The fan-out broker (served by the gateway, no upstream): sends to the fan-out topic are written to
     * their destinations by {@code sends}; registrations answered; every other code REQUEST_CODE_NOT_SUPPORTED.
     */
    public static HandlerTable fanout(RequestHandler sends) {
        return HandlerTable.builder("broker")
            .request(sends, SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE)
            // producers heartbeat every broker of their routes
            .request(AnsweredSuccess.INSTANCE, HEART_BEAT, UNREGISTER_CLIENT)
            .fallback(RequestHandler.NOT_SERVED)
            .build();
    }

    /**
     * The virtual-queue broker (served by the gateway, no upstream): consumers of the opted-in groups pull,
     * commit and register there, all answered by {@code consumers}, and other groups of those topics bypass to the
     * real queues; every other code REQUEST_CODE_NOT_SUPPORTED.
     */
    public static HandlerTable virtualBroker(RequestHandler consumers) {
        return HandlerTable.builder("broker")
            // leases on virtual queues (long polls held by the gateway), commits acknowledging them; other groups'
            // requests sent on to the real queue behind the virtual one; LITE_PULL_MESSAGE (5.x lite pull
            // consumers) served as PULL_MESSAGE
            .request(consumers, PULL_MESSAGE, LITE_PULL_MESSAGE, UPDATE_CONSUMER_OFFSET, QUERY_CONSUMER_OFFSET,
                GET_MAX_OFFSET, GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME,
                CONSUMER_SEND_MSG_BACK)
            // the group's members as the gateway knows them; every client heartbeats every broker of its routes
            .request(consumers, HEART_BEAT, UNREGISTER_CLIENT, GET_CONSUMER_LIST_BY_GROUP)
            // orderly groups lock the real queues (the served group is refused with a reason)
            .request(consumers, LOCK_BATCH_MQ, UNLOCK_BATCH_MQ)
            .fallback(RequestHandler.NOT_SERVED)
            .build();
    }

    /**
     * The broker role (the gateway ports of the broker at {@code brokerAddress}); {@code storeHosts}
     * maps store hosts to the gateway, {@code clients} learns which client is on which connection.
     */
    public static HandlerTable broker(String brokerAddress, StoreHostMapper storeHosts, ClientRegistry clients) {
        return broker(brokerAddress, storeHosts, clients, () -> ServedGroups.NONE);
    }

    /**
     * The broker role; {@code served} names the groups the gateway stands for on the brokers (virtual queues):
     * their registrations stop at the gateway and their member lists are the gateway's.
     */
    public static HandlerTable broker(String brokerAddress, StoreHostMapper storeHosts, ClientRegistry clients,
                                      Supplier<ServedGroups> served) {
        return broker(brokerAddress, storeHosts, clients, served, () -> null);
    }

    /**
     * The broker role; {@code coalescing} (its value may be null) takes single sends to coalescing topics into
     * batches the gateway sends itself.
     */
    public static HandlerTable broker(String brokerAddress, StoreHostMapper storeHosts, ClientRegistry clients,
                                      Supplier<ServedGroups> served, Supplier<Coalescing> coalescing) {
        return broker(brokerAddress, storeHosts, clients, served, coalescing, RequestHandler.PASS_THROUGH);
    }

    /**
     * The broker role; {@code unregistered} treats every code not registered here (pass-through behind the
     * admin-request policy, built by the gateway).
     */
    public static HandlerTable broker(String brokerAddress, StoreHostMapper storeHosts, ClientRegistry clients,
                                      Supplier<ServedGroups> served, Supplier<Coalescing> coalescing,
                                      RequestHandler unregistered) {
        StoreHostRequests recordsToClients = new StoreHostRequests(storeHosts);
        ClientRegistration registration = new ClientRegistration(brokerAddress, clients);
        RequestHandler consumerLists = new NameCheckedHandler(NameGuard::checkConsumerGroup);
        return HandlerTable.builder("broker")
            // names checked on the typed header; offsetMsgIds in the answer point at the gateway; single sends to
            // coalescing topics taken into the gateway's own batches
            .request(new SendHandler(storeHosts, brokerAddress, coalescing), SEND_MESSAGE, SEND_MESSAGE_V2,
                SEND_BATCH_MESSAGE)
            .request(new SendHandler(storeHosts, false), SEND_REPLY_MESSAGE, SEND_REPLY_MESSAGE_V2)
            // names checked on the typed header; long polls; store hosts in the records point at the gateway
            .request(new PullHandler(storeHosts), PULL_MESSAGE, LITE_PULL_MESSAGE)
            .request(new StoredRecordsHandler(storeHosts, true), POP_MESSAGE)
            .request(new StoredRecordsHandler(storeHosts, false), QUERY_MESSAGE, VIEW_MESSAGE_BY_ID)
            // names checked, then relayed as they are
            .request(new NameCheckedHandler(NameGuard::checkOffsetRequest), QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET)
            .request(new NameCheckedHandler(NameGuard::checkSendBack), CONSUMER_SEND_MSG_BACK)
            // a served group's member list is the gateway's (ServedGroupFilter)
            .request(new ServedGroupFilter(served, registration, consumerLists), GET_CONSUMER_LIST_BY_GROUP)
            .request(new NameCheckedHandler(NameGuard::checkBody), LOCK_BATCH_MQ, UNLOCK_BATCH_MQ)
            // names checked; the client's groups recorded (ClientRegistry), then relayed as they are
            // served groups (virtual queues) taken out of heartbeats first: brokers see the gateway as their member
            .request(new ServedGroupFilter(served, registration, consumerLists), HEART_BEAT, UNREGISTER_CLIENT)
            // requests the broker sends to a client: records and ids point at the gateway
            .upstreamRequest(recordsToClients::checkBack, CHECK_TRANSACTION_STATE)
            .upstreamRequest(recordsToClients::consumeDirectly, CONSUME_MESSAGE_DIRECTLY)
            .fallback(unregistered)
            .build();
    }
}
