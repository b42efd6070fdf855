package io.rmqgw.gateway.vq;

/**
 * The commit to push to the broker for a real queue (UPDATE_CONSUMER_OFFSET for the real group): its
 * lowest unacknowledged offset, or the next offset to fetch when nothing fetched is unacknowledged.
 * Everything below it was acknowledged by a consumer or dead-lettered, so a gateway that starts again
 * from it loses nothing.
 *
 * @param queue  the real queue
 * @param offset the consume-queue offset to commit
 */
public record RealCommit(RealQueue queue, long offset) {
}
