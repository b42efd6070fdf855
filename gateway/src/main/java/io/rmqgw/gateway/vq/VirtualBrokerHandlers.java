package io.rmqgw.gateway.vq;

import io.rmqgw.gateway.core.RequestHandler;

/**
 * The virtual broker's request handlers, one per request family (or code where the answers differ), for the
 * assembly to register in the virtual broker's table: every one answers itself, for a served group on its virtual
 * queues and for any other group on the real queue behind the virtual one ({@link Bypass}).
 *
 * @param pulls           PULL_MESSAGE, LITE_PULL_MESSAGE
 * @param commits         UPDATE_CONSUMER_OFFSET
 * @param offsetQueries   QUERY_CONSUMER_OFFSET
 * @param maxOffsets      GET_MAX_OFFSET
 * @param minOffsets      GET_MIN_OFFSET
 * @param offsetSearches  SEARCH_OFFSET_BY_TIMESTAMP
 * @param storeTimes      GET_EARLIEST_MSG_STORETIME
 * @param heartbeats      HEART_BEAT
 * @param unregistrations UNREGISTER_CLIENT
 * @param members         GET_CONSUMER_LIST_BY_GROUP
 * @param locks           LOCK_BATCH_MQ, UNLOCK_BATCH_MQ
 * @param sendBacks       CONSUMER_SEND_MSG_BACK
 */
public record VirtualBrokerHandlers(RequestHandler pulls, RequestHandler commits, RequestHandler offsetQueries,
                                    RequestHandler maxOffsets, RequestHandler minOffsets,
                                    RequestHandler offsetSearches, RequestHandler storeTimes,
                                    RequestHandler heartbeats, RequestHandler unregistrations,
                                    RequestHandler members, RequestHandler locks, RequestHandler sendBacks) {

    static VirtualBrokerHandlers of(VirtualQueues queues, Bypass bypass) {
        return new VirtualBrokerHandlers(new VirtualPulls(queues, bypass),
            new VirtualOffsets.Commits(queues, bypass), new VirtualOffsets.Queries(queues, bypass),
            VirtualOffsets.max(queues, bypass), VirtualOffsets.min(queues, bypass),
            VirtualOffsets.search(queues, bypass), VirtualOffsets.storeTimes(queues, bypass),
            new VirtualMembership.Heartbeats(queues, bypass), new VirtualMembership.Unregistrations(queues, bypass),
            new VirtualMembership.Members(queues, bypass), new VirtualLocks(queues, bypass),
            new VirtualSendBacks(queues, bypass));
    }

    /** Every family treated by {@code handler} (tests of the table's codes). */
    public static VirtualBrokerHandlers all(RequestHandler handler) {
        return new VirtualBrokerHandlers(handler, handler, handler, handler, handler, handler, handler, handler,
            handler, handler, handler, handler);
    }
}
