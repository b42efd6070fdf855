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

import io.rmqgw.codec.header.PullRequestHeader;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.message.StoreHostMapper;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.brokerrequests.StoreHostRequests;
import io.rmqgw.gateway.clients.ClientRegistry;
import io.rmqgw.gateway.core.Feature;
import io.rmqgw.gateway.core.HandlerTable;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.gateway.core.RequestHandler;
import io.rmqgw.gateway.core.Role;
import io.rmqgw.gateway.edge.NameGuard;
import io.rmqgw.gateway.fanout.AnsweredSuccess;
import io.rmqgw.gateway.filters.NameChecks;
import io.rmqgw.gateway.filters.RateLimitFilters;
import io.rmqgw.gateway.filters.TopicLabels;
import io.rmqgw.gateway.limits.RateLimits;
import io.rmqgw.gateway.pull.LitePullHandler;
import io.rmqgw.gateway.pull.PullHandler;
import io.rmqgw.gateway.pull.StoredRecordsHandler;
import io.rmqgw.gateway.registration.ClientRegistration;
import io.rmqgw.gateway.route.RouteAnswerHandler;
import io.rmqgw.gateway.route.RouteShaper;
import io.rmqgw.gateway.send.SendHandler;
import io.rmqgw.gateway.vq.VirtualBrokerHandlers;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.routing.RouteCache;
import java.util.List;

/**
 * Where each request code is handled: the one place that says it, with the filters each code passes first, in
 * order (topic labels, names, limits, then the features'). Every code not listed here goes, past the admin-request
 * policy, to the table's fallback: relayed as an opaque slice (re-encoded only when an edge needs another header
 * encoding), and never decoded; what the gateway decodes follows from these registrations.
 */
public final class HandlerTables {

    private HandlerTables() {
    }

    /**
     * The name-server role (the gateway's main port): route answers carry the gateway's listeners, {@code shaper}
     * changes routes last (virtual-queue topics get the gateway's own broker); {@code unregistered} (the admin
     * policy) filters every code not registered here.
     */
    public static HandlerTable namesrv(BrokerListeners brokers, RouteCache routes, ClusterView cluster,
                                       GatewayMetrics metrics, RouteShaper shaper, RequestFilter unregistered,
                                       List<Feature> features) {
        RouteAnswerHandler routeAnswers = new RouteAnswerHandler(brokers, routes, cluster, metrics, shaper);
        HandlerTable.Builder table = HandlerTable.builder(Role.NAMESRV)
            // the topic checked as sends check it (REGISTER_TOPIC_IN_NAMESRV too; DELETE_TOPIC_IN_NAMESRV is not: a
            // topic created with a bad name before the checks must stay removable)
            .filter(NameChecks.on(NameGuard::checkTopicField), GET_ROUTEINFO_BY_TOPIC, REGISTER_TOPIC_IN_NAMESRV)
            .unregisteredFilter(unregistered);
        features.forEach(f -> f.register(Role.NAMESRV, null, table));
        return table
            // broker addresses in the answer become the gateway's listeners; routes cached for outages; the
            // ClusterView learns brokers and queues
            .request(routeAnswers, GET_ROUTEINFO_BY_TOPIC, GET_BROKER_CLUSTER_INFO)
            .request(RequestHandler.PASS_THROUGH, REGISTER_TOPIC_IN_NAMESRV)
            .build();
    }

    /**
     * The fan-out broker (served by the gateway, no upstream): sends to the fan-out topic are written to
     * their destinations by {@code sends}; registrations answered; every other code REQUEST_CODE_NOT_SUPPORTED.
     */
    public static HandlerTable fanout(RequestHandler sends) {
        return HandlerTable.builder(Role.BROKER)
            .request(sends, SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE)
            // producers heartbeat every broker of their routes
            .request(AnsweredSuccess.INSTANCE, HEART_BEAT, UNREGISTER_CLIENT)
            .fallback(RequestHandler.NOT_SERVED)
            .build();
    }

    /**
     * The virtual-queue broker (served by the gateway, no upstream): consumers of the opted-in groups pull,
     * commit and register there, each family answered by its handler of {@code vq}, and other groups of those topics
     * bypass to the real queues; every other code REQUEST_CODE_NOT_SUPPORTED.
     */
    public static HandlerTable virtualBroker(VirtualBrokerHandlers vq) {
        return HandlerTable.builder(Role.BROKER)
            // leases on virtual queues (long polls held by the gateway); LITE_PULL_MESSAGE (5.x lite pull consumers)
            // served as PULL_MESSAGE; other groups' requests sent on to the real queue behind the virtual one
            .request(vq.pulls(), PULL_MESSAGE, LITE_PULL_MESSAGE)
            // commits acknowledging leases; a query starts a client on a virtual queue
            .request(vq.commits(), UPDATE_CONSUMER_OFFSET)
            .request(vq.offsetQueries(), QUERY_CONSUMER_OFFSET)
            // the virtual queues' own offsets
            .request(vq.maxOffsets(), GET_MAX_OFFSET)
            .request(vq.minOffsets(), GET_MIN_OFFSET)
            .request(vq.offsetSearches(), SEARCH_OFFSET_BY_TIMESTAMP)
            .request(vq.storeTimes(), GET_EARLIEST_MSG_STORETIME)
            // every client heartbeats every broker of its routes; the group's members as the gateway knows them
            .request(vq.heartbeats(), HEART_BEAT)
            .request(vq.unregistrations(), UNREGISTER_CLIENT)
            .request(vq.members(), GET_CONSUMER_LIST_BY_GROUP)
            // orderly groups lock the real queues (the served group is refused with a reason)
            .request(vq.locks(), LOCK_BATCH_MQ, UNLOCK_BATCH_MQ)
            .request(vq.sendBacks(), CONSUMER_SEND_MSG_BACK)
            .fallback(RequestHandler.NOT_SERVED)
            .build();
    }

    /**
     * The broker role (the gateway ports of the broker at {@code brokerAddress}); {@code storeHosts} maps store
     * hosts to the gateway, {@code clients} learns which client is on which connection, {@code limits} are the
     * rate limits, {@code unregistered} (the admin policy) filters every code not registered here, and each of
     * {@code features} adds its filters after the role's own.
     */
    public static HandlerTable broker(String brokerAddress, StoreHostMapper storeHosts, ClientRegistry clients,
                                      GatewayMetrics metrics, RateLimits limits, RequestFilter unregistered,
                                      List<Feature> features) {
        StoreHostRequests recordsToClients = new StoreHostRequests(storeHosts);
        HandlerTable.Builder table = HandlerTable.builder(Role.BROKER)
            // per-client and per-address request rates: every code but heartbeats
            .filter(RateLimitFilters.requests(limits))
            .unregisteredFilter(unregistered)
            // sends and pulls: one typed decode serves the topic label, the names, the limits and the forward
            .filter(TopicLabels.of(SendRequestHeader.class, SendRequestHeader::topic), SEND_MESSAGE, SEND_MESSAGE_V2,
                SEND_BATCH_MESSAGE)
            .filter(NameChecks.typed(SendRequestHeader.class, NameGuard::checkSend,
                SendRequestHeader::namesValidInFrame), SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE)
            .filter(RateLimitFilters.sends(limits), SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE)
            .filter(TopicLabels.of(PullRequestHeader.class, PullRequestHeader::topic), PULL_MESSAGE, LITE_PULL_MESSAGE)
            .filter(NameChecks.typed(PullRequestHeader.class, NameGuard::checkPull, null), PULL_MESSAGE,
                LITE_PULL_MESSAGE)
            .filter(RateLimitFilters.pulls(limits), PULL_MESSAGE, LITE_PULL_MESSAGE)
            // names in the extFields or body
            .filter(NameChecks.on(NameGuard::checkOffsetRequest), QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET)
            .filter(NameChecks.on(NameGuard::checkSendBack), CONSUMER_SEND_MSG_BACK)
            .filter(NameChecks.on(NameGuard::checkConsumerGroup), GET_CONSUMER_LIST_BY_GROUP)
            .filter(NameChecks.on(NameGuard::checkBody), LOCK_BATCH_MQ, UNLOCK_BATCH_MQ, HEART_BEAT)
            .filter(NameChecks.on(NameGuard::checkUnregister), UNREGISTER_CLIENT);
        features.forEach(f -> f.register(Role.BROKER, brokerAddress, table));
        ClientRegistration registration = new ClientRegistration(brokerAddress, clients);
        return table
            // offsetMsgIds in the answer point at the gateway
            .request(new SendHandler(storeHosts), SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE,
                SEND_REPLY_MESSAGE, SEND_REPLY_MESSAGE_V2)
            // long polls; store hosts in the records point at the gateway; 361 as 11 to brokers before 5.0.0
            .request(new PullHandler(storeHosts), PULL_MESSAGE)
            .request(new LitePullHandler(storeHosts), LITE_PULL_MESSAGE)
            .request(new StoredRecordsHandler(storeHosts, true), POP_MESSAGE)
            .request(new StoredRecordsHandler(storeHosts, false), QUERY_MESSAGE, VIEW_MESSAGE_BY_ID)
            // relayed as they are, once their names passed
            .request(RequestHandler.PASS_THROUGH, QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET, CONSUMER_SEND_MSG_BACK,
                GET_CONSUMER_LIST_BY_GROUP, LOCK_BATCH_MQ, UNLOCK_BATCH_MQ)
            // the client's groups recorded (ClientRegistry), then relayed as they are
            .request(registration, HEART_BEAT, UNREGISTER_CLIENT)
            // requests the broker sends to a client: records and ids point at the gateway
            .upstreamRequest(recordsToClients::checkBack, CHECK_TRANSACTION_STATE)
            .upstreamRequest(recordsToClients::consumeDirectly, CONSUME_MESSAGE_DIRECTLY)
            .build();
    }
}
