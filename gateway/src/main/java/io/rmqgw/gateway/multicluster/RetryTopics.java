package io.rmqgw.gateway.multicluster;

/**
 * Retry and dead-letter topics of consumer groups ({@code %RETRY%GROUP}, {@code %DLQ%GROUP}): a group that consumes
 * a logical topic sends messages back to the broker of each message, so its retry topic has queues in every cluster
 * the logical topic spans; its consumers subscribe to it by name, so its route is the union of every cluster.
 */
final class RetryTopics {

    static final String RETRY_PREFIX = "%RETRY%";
    static final String DLQ_PREFIX = "%DLQ%";

    private RetryTopics() {
    }

    static boolean spansClusters(String topic) {
        return topic != null && (topic.startsWith(RETRY_PREFIX) || topic.startsWith(DLQ_PREFIX));
    }
}
