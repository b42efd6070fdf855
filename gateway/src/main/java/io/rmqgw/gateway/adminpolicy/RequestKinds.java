package io.rmqgw.gateway.adminpolicy;

import static io.rmqgw.gateway.adminpolicy.RequestKind.ADMIN_READ;
import static io.rmqgw.gateway.adminpolicy.RequestKind.ADMIN_WRITE;
import static io.rmqgw.gateway.adminpolicy.RequestKind.CLIENT;
import static io.rmqgw.gateway.adminpolicy.RequestKind.CLUSTER_INTERNAL;
import static io.rmqgw.gateway.adminpolicy.RequestKind.CONFIG_READ;
import static io.rmqgw.gateway.adminpolicy.RequestKind.DESTRUCTIVE;
import static io.rmqgw.gateway.adminpolicy.RequestKind.SERVER_TO_CLIENT;

import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every request code of rocketmq-remoting 5.4.0 ({@code org.apache.rocketmq.remoting.protocol.RequestCode}) and
 * 4.9.7 ({@code org.apache.rocketmq.common.protocol.RequestCode}) and what it does (docs/ADMIN-REQUESTS.md is
 * this table with the reasons; {@code RequestKindsTest} fails when either version has a code missing here). The
 * two versions never give one number two meanings; 50-54 (ACL 1.0) exist in 4.9.7 only.
 */
public final class RequestKinds {

    /** A classified code: its constant's name and kind. */
    public record Entry(int code, String name, RequestKind kind) {
    }

    private static final IntObjectMap<Entry> TABLE = new IntObjectHashMap<>();

    static {
        // clients' normal traffic (MQClientAPIImpl of 4.9.7 and 5.4.0, rocketmq-client-go v2)
        c(CLIENT, 10, "SEND_MESSAGE");
        c(CLIENT, 11, "PULL_MESSAGE");
        c(CLIENT, 12, "QUERY_MESSAGE");
        c(CLIENT, 14, "QUERY_CONSUMER_OFFSET");
        c(CLIENT, 15, "UPDATE_CONSUMER_OFFSET");
        c(CLIENT, 29, "SEARCH_OFFSET_BY_TIMESTAMP");
        c(CLIENT, 30, "GET_MAX_OFFSET");
        c(CLIENT, 31, "GET_MIN_OFFSET");
        c(CLIENT, 32, "GET_EARLIEST_MSG_STORETIME");
        c(CLIENT, 33, "VIEW_MESSAGE_BY_ID");
        c(CLIENT, 34, "HEART_BEAT");
        c(CLIENT, 35, "UNREGISTER_CLIENT");
        c(CLIENT, 36, "CONSUMER_SEND_MSG_BACK");
        c(CLIENT, 37, "END_TRANSACTION");
        c(CLIENT, 38, "GET_CONSUMER_LIST_BY_GROUP");
        c(CLIENT, 41, "LOCK_BATCH_MQ");
        c(CLIENT, 42, "UNLOCK_BATCH_MQ");
        c(CLIENT, 46, "CHECK_CLIENT_CONFIG");
        c(CLIENT, 101, "GET_KV_CONFIG");
        c(CLIENT, 105, "GET_ROUTEINFO_BY_TOPIC");
        c(CLIENT, 106, "GET_BROKER_CLUSTER_INFO");
        c(CLIENT, 219, "GET_KVLIST_BY_NAMESPACE");
        c(CLIENT, 310, "SEND_MESSAGE_V2");
        c(CLIENT, 320, "SEND_BATCH_MESSAGE");
        c(CLIENT, 324, "SEND_REPLY_MESSAGE");
        c(CLIENT, 325, "SEND_REPLY_MESSAGE_V2");
        c(CLIENT, 361, "LITE_PULL_MESSAGE");
        // a producer recalls its own delayed message with the handle its send answer gave it (5.3+ producers)
        c(CLIENT, 370, "RECALL_MESSAGE");
        c(CLIENT, 400, "QUERY_ASSIGNMENT");
        c(CLIENT, 200050, "POP_MESSAGE");
        c(CLIENT, 200051, "ACK_MESSAGE");
        c(CLIENT, 200053, "CHANGE_MESSAGE_INVISIBLETIME");
        c(CLIENT, 200054, "NOTIFICATION");
        c(CLIENT, 200055, "POLLING_INFO");
        c(CLIENT, 200151, "BATCH_ACK_MESSAGE");

        // what brokers send to clients (relayed on the client's connection, never checked here)
        c(SERVER_TO_CLIENT, 39, "CHECK_TRANSACTION_STATE");
        c(SERVER_TO_CLIENT, 40, "NOTIFY_CONSUMER_IDS_CHANGED");
        c(SERVER_TO_CLIENT, 220, "RESET_CONSUMER_CLIENT_OFFSET");
        c(SERVER_TO_CLIENT, 221, "GET_CONSUMER_STATUS_FROM_CLIENT");
        c(SERVER_TO_CLIENT, 326, "PUSH_REPLY_MESSAGE_TO_CLIENT");

        // admin reads: mqadmin clusterList, topicList, topicRoute, topicStatus, consumerProgress, brokerStatus,
        // consumerConnection, producerConnection, queryMsgById, statistics, dashboards
        c(ADMIN_READ, 13, "QUERY_BROKER_OFFSET");
        c(ADMIN_READ, 21, "GET_ALL_TOPIC_CONFIG");
        c(ADMIN_READ, 22, "GET_TOPIC_CONFIG_LIST");
        c(ADMIN_READ, 23, "GET_TOPIC_NAME_LIST");
        c(ADMIN_READ, 28, "GET_BROKER_RUNTIME_INFO");
        c(ADMIN_READ, 43, "GET_ALL_CONSUMER_OFFSET");
        c(ADMIN_READ, 45, "GET_ALL_DELAY_OFFSET");
        c(ADMIN_READ, 52, "GET_BROKER_CLUSTER_ACL_INFO");
        c(ADMIN_READ, 60, "GET_TIMER_CHECK_POINT");
        c(ADMIN_READ, 61, "GET_TIMER_METRICS");
        c(ADMIN_READ, 201, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG");
        c(ADMIN_READ, 202, "GET_TOPIC_STATS_INFO");
        c(ADMIN_READ, 203, "GET_CONSUMER_CONNECTION_LIST");
        c(ADMIN_READ, 204, "GET_PRODUCER_CONNECTION_LIST");
        c(ADMIN_READ, 206, "GET_ALL_TOPIC_LIST_FROM_NAMESERVER");
        c(ADMIN_READ, 208, "GET_CONSUME_STATS");
        c(ADMIN_READ, 214, "WHO_CONSUME_THE_MESSAGE");
        c(ADMIN_READ, 223, "INVOKE_BROKER_TO_GET_CONSUMER_STATUS");
        c(ADMIN_READ, 224, "GET_TOPICS_BY_CLUSTER");
        c(ADMIN_READ, 300, "QUERY_TOPIC_CONSUME_BY_WHO");
        c(ADMIN_READ, 303, "QUERY_CONSUME_TIME_SPAN");
        c(ADMIN_READ, 304, "GET_SYSTEM_TOPIC_LIST_FROM_NS");
        c(ADMIN_READ, 305, "GET_SYSTEM_TOPIC_LIST_FROM_BROKER");
        c(ADMIN_READ, 307, "GET_CONSUMER_RUNNING_INFO");
        c(ADMIN_READ, 308, "QUERY_CORRECTION_OFFSET");
        c(ADMIN_READ, 311, "GET_UNIT_TOPIC_LIST");
        c(ADMIN_READ, 312, "GET_HAS_UNIT_SUB_TOPIC_LIST");
        c(ADMIN_READ, 313, "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST");
        c(ADMIN_READ, 315, "VIEW_BROKER_STATS_DATA");
        c(ADMIN_READ, 317, "GET_BROKER_CONSUME_STATS");
        c(ADMIN_READ, 321, "QUERY_CONSUME_QUEUE");
        c(ADMIN_READ, 322, "QUERY_DATA_VERSION");
        c(ADMIN_READ, 328, "GET_ALL_PRODUCER_INFO");
        c(ADMIN_READ, 343, "QUERY_TOPICS_BY_CONSUMER");
        c(ADMIN_READ, 345, "QUERY_SUBSCRIPTION_BY_CONSUMER");
        c(ADMIN_READ, 351, "GET_TOPIC_CONFIG");
        c(ADMIN_READ, 352, "GET_SUBSCRIPTIONGROUP_CONFIG");
        c(ADMIN_READ, 354, "CHECK_ROCKSDB_CQ_WRITE_PROGRESS");
        c(ADMIN_READ, 402, "GET_ALL_MESSAGE_REQUEST_MODE");
        c(ADMIN_READ, 901, "GET_BROKER_MEMBER_GROUP");
        c(ADMIN_READ, 907, "GET_BROKER_HA_STATUS");
        c(ADMIN_READ, 1004, "CONTROLLER_GET_REPLICA_INFO");
        c(ADMIN_READ, 1005, "CONTROLLER_GET_METADATA_INFO");
        c(ADMIN_READ, 1006, "CONTROLLER_GET_SYNC_STATE_DATA");
        c(ADMIN_READ, 1007, "GET_BROKER_EPOCH_CACHE");
        c(ADMIN_READ, 2003, "GET_COLD_DATA_FLOW_CTR_INFO");
        c(ADMIN_READ, 200052, "PEEK_MESSAGE");

        // admin creates and updates (mqadmin updateTopic, updateSubGroup, ...) and actions that lose nothing
        c(ADMIN_WRITE, 17, "UPDATE_AND_CREATE_TOPIC");
        c(ADMIN_WRITE, 18, "UPDATE_AND_CREATE_TOPIC_LIST");
        c(ADMIN_WRITE, 200, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP");
        c(ADMIN_WRITE, 210, "RESUME_CONSUMER");
        c(ADMIN_WRITE, 217, "REGISTER_TOPIC_IN_NAMESRV");
        c(ADMIN_WRITE, 225, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST");
        c(ADMIN_WRITE, 309, "CONSUME_MESSAGE_DIRECTLY");
        c(ADMIN_WRITE, 323, "RESUME_CHECK_HALF_MESSAGE");
        c(ADMIN_WRITE, 401, "SET_MESSAGE_REQUEST_MODE");
        c(ADMIN_WRITE, 513, "UPDATE_AND_CREATE_STATIC_TOPIC");

        // reads of configuration: broker, name server, controller, client config, ACL accounts (secret keys)
        c(CONFIG_READ, 26, "GET_BROKER_CONFIG");
        c(CONFIG_READ, 47, "GET_CLIENT_CONFIG");
        c(CONFIG_READ, 54, "GET_BROKER_CLUSTER_ACL_CONFIG");
        c(CONFIG_READ, 319, "GET_NAMESRV_CONFIG");
        c(CONFIG_READ, 1010, "GET_CONTROLLER_CONFIG");
        c(CONFIG_READ, 3004, "AUTH_GET_USER");
        c(CONFIG_READ, 3005, "AUTH_LIST_USER");
        c(CONFIG_READ, 3009, "AUTH_GET_ACL");
        c(CONFIG_READ, 3010, "AUTH_LIST_ACL");

        // deleting, disabling, resetting, reconfiguring
        c(DESTRUCTIVE, 25, "UPDATE_BROKER_CONFIG");
        c(DESTRUCTIVE, 27, "TRIGGER_DELETE_FILES");
        c(DESTRUCTIVE, 50, "UPDATE_AND_CREATE_ACL_CONFIG");
        c(DESTRUCTIVE, 51, "DELETE_ACL_CONFIG");
        c(DESTRUCTIVE, 53, "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG");
        c(DESTRUCTIVE, 100, "PUT_KV_CONFIG");
        c(DESTRUCTIVE, 102, "DELETE_KV_CONFIG");
        c(DESTRUCTIVE, 205, "WIPE_WRITE_PERM_OF_BROKER");
        c(DESTRUCTIVE, 207, "DELETE_SUBSCRIPTIONGROUP");
        c(DESTRUCTIVE, 209, "SUSPEND_CONSUMER");
        c(DESTRUCTIVE, 211, "RESET_CONSUMER_OFFSET_IN_CONSUMER");
        c(DESTRUCTIVE, 212, "RESET_CONSUMER_OFFSET_IN_BROKER");
        c(DESTRUCTIVE, 213, "ADJUST_CONSUMER_THREAD_POOL");
        c(DESTRUCTIVE, 215, "DELETE_TOPIC_IN_BROKER");
        c(DESTRUCTIVE, 216, "DELETE_TOPIC_IN_NAMESRV");
        c(DESTRUCTIVE, 222, "INVOKE_BROKER_TO_RESET_OFFSET");
        c(DESTRUCTIVE, 302, "REGISTER_MESSAGE_FILTER_CLASS");
        c(DESTRUCTIVE, 306, "CLEAN_EXPIRED_CONSUMEQUEUE");
        c(DESTRUCTIVE, 314, "CLONE_GROUP_OFFSET");
        c(DESTRUCTIVE, 316, "CLEAN_UNUSED_TOPIC");
        c(DESTRUCTIVE, 318, "UPDATE_NAMESRV_CONFIG");
        c(DESTRUCTIVE, 327, "ADD_WRITE_PERM_OF_BROKER");
        c(DESTRUCTIVE, 329, "DELETE_EXPIRED_COMMITLOG");
        c(DESTRUCTIVE, 353, "UPDATE_AND_GET_GROUP_FORBIDDEN");
        c(DESTRUCTIVE, 355, "EXPORT_ROCKSDB_CONFIG_TO_JSON");
        c(DESTRUCTIVE, 908, "RESET_MASTER_FLUSH_OFFSET");
        c(DESTRUCTIVE, 1009, "UPDATE_CONTROLLER_CONFIG");
        c(DESTRUCTIVE, 1011, "CLEAN_BROKER_DATA");
        c(DESTRUCTIVE, 2001, "UPDATE_COLD_DATA_FLOW_CTR_CONFIG");
        c(DESTRUCTIVE, 2002, "REMOVE_COLD_DATA_FLOW_CTR_CONFIG");
        c(DESTRUCTIVE, 2004, "SET_COMMITLOG_READ_MODE");
        c(DESTRUCTIVE, 3001, "AUTH_CREATE_USER");
        c(DESTRUCTIVE, 3002, "AUTH_UPDATE_USER");
        c(DESTRUCTIVE, 3003, "AUTH_DELETE_USER");
        c(DESTRUCTIVE, 3006, "AUTH_CREATE_ACL");
        c(DESTRUCTIVE, 3007, "AUTH_UPDATE_ACL");
        c(DESTRUCTIVE, 3008, "AUTH_DELETE_ACL");
        c(DESTRUCTIVE, 5001, "SWITCH_TIMER_ENGINE");
        // rolls back pops (messages popped become visible again); mqadmin exportPopRecord sends it
        c(DESTRUCTIVE, 200056, "POP_ROLLBACK");

        // brokers, name servers and controllers among themselves
        c(CLUSTER_INTERNAL, 103, "REGISTER_BROKER");
        c(CLUSTER_INTERNAL, 104, "UNREGISTER_BROKER");
        c(CLUSTER_INTERNAL, 301, "REGISTER_FILTER_SERVER");
        c(CLUSTER_INTERNAL, 902, "ADD_BROKER");
        c(CLUSTER_INTERNAL, 903, "REMOVE_BROKER");
        c(CLUSTER_INTERNAL, 904, "BROKER_HEARTBEAT");
        c(CLUSTER_INTERNAL, 905, "NOTIFY_MIN_BROKER_ID_CHANGE");
        c(CLUSTER_INTERNAL, 906, "EXCHANGE_BROKER_HA_INFO");
        c(CLUSTER_INTERNAL, 1001, "CONTROLLER_ALTER_SYNC_STATE_SET");
        c(CLUSTER_INTERNAL, 1002, "CONTROLLER_ELECT_MASTER");
        c(CLUSTER_INTERNAL, 1003, "CONTROLLER_REGISTER_BROKER");
        c(CLUSTER_INTERNAL, 1008, "NOTIFY_BROKER_ROLE_CHANGED");
        c(CLUSTER_INTERNAL, 1012, "CONTROLLER_GET_NEXT_BROKER_ID");
        c(CLUSTER_INTERNAL, 1013, "CONTROLLER_APPLY_BROKER_ID");
    }

    private RequestKinds() {
    }

    private static void c(RequestKind kind, int code, String name) {
        if (TABLE.put(code, new Entry(code, name, kind)) != null) {
            throw new IllegalStateException("request code " + code + " classified twice");
        }
    }

    /** What {@code code} does; {@link RequestKind#UNKNOWN} for a code neither version defines. Allocates nothing. */
    public static RequestKind of(int code) {
        Entry e = TABLE.get(code);
        return e == null ? RequestKind.UNKNOWN : e.kind();
    }

    /** The classified code, or null. */
    public static Entry entry(int code) {
        return TABLE.get(code);
    }

    /** Every classified code, by code. */
    public static Map<Integer, Entry> all() {
        return Collections.unmodifiableMap(new TreeMap<>(TABLE));
    }
}
