package io.rmqgw.gateway.vq;

/**
 * A message delivered {@code max-deliveries} times without an acknowledgement, to be sent to the group's
 * DLQ by the wiring: CONSUMER_SEND_MSG_BACK to the message's broker with this commit-log offset and
 * {@code delayLevel} -1 (the broker then writes it to {@code %DLQ%group}). Until the wiring reports the
 * outcome ({@link VirtualQueueGroup#deadLettered} or {@link VirtualQueueGroup#deadLetterFailed}) the
 * message stays unacknowledged: the real commit does not pass it.
 *
 * @param queue           the real queue it was read from
 * @param queueOffset     its offset in that queue
 * @param commitLogOffset its PHYSICALOFFSET, which CONSUMER_SEND_MSG_BACK names
 * @param deliveries      how many times it was delivered
 */
public record DeadLetter(RealQueue queue, long queueOffset, long commitLogOffset, int deliveries) {
}
