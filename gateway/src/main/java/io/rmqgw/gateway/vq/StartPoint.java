package io.rmqgw.gateway.vq;

import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.RequestCode;

/**
 * Where a real queue's consumption starts when the real group never committed on it, as the group's clients
 * ask in their heartbeats ({@code consumeFromWhere}): the gateway starts the way the clients would have
 * started on the brokers themselves.
 */
enum StartPoint {
    /** CONSUME_FROM_LAST_OFFSET (the clients' default): the queue's end. */
    LAST(RequestCode.GET_MAX_OFFSET, "CONSUME_FROM_LAST_OFFSET"),
    /** CONSUME_FROM_FIRST_OFFSET: the queue's first message still stored. */
    FIRST(RequestCode.GET_MIN_OFFSET, "CONSUME_FROM_FIRST_OFFSET"),
    /**
     * CONSUME_FROM_TIMESTAMP: the first message stored at or after half an hour ago, the clients' default
     * {@code consumeTimestamp} (a heartbeat does not carry the one a client set).
     */
    TIMESTAMP(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, "CONSUME_FROM_TIMESTAMP");

    private static final long DEFAULT_TIMESTAMP_AGO_MILLIS = TimeUnit.MINUTES.toMillis(30);

    /** The request that finds the offset on the queue's broker. */
    final int requestCode;
    /** Its name in a ConsumerData, which the gateway's own heartbeats carry. */
    final String consumeFromWhere;

    StartPoint(int requestCode, String consumeFromWhere) {
        this.requestCode = requestCode;
        this.consumeFromWhere = consumeFromWhere;
    }

    /** The timestamp a TIMESTAMP start searches for, from the wall clock {@code nowMillis}. */
    static long timestamp(long nowMillis) {
        return nowMillis - DEFAULT_TIMESTAMP_AGO_MILLIS;
    }

    /**
     * The start point a ConsumerData's {@code consumeFromWhere} names; LAST for the deprecated and unknown
     * values, as RocketMQ clients treat them.
     */
    static StartPoint of(String consumeFromWhere) {
        if (consumeFromWhere == null) {
            return LAST;
        }
        for (StartPoint p : values()) {
            if (p.consumeFromWhere.equals(consumeFromWhere)) {
                return p;
            }
        }
        return LAST;
    }
}
