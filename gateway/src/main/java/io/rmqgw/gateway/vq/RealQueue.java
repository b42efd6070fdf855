package io.rmqgw.gateway.vq;

import java.util.Objects;

/**
 * A queue of the real cluster: the broker (by name, as routes name it) and the queue id.
 *
 * @param brokerName the broker's name ({@code brokerName} in routes), not its address: a queue keeps its identity
 *                   when its broker's master changes address
 * @param queueId    the queue id on that broker
 */
public record RealQueue(String brokerName, int queueId) {

    public RealQueue {
        Objects.requireNonNull(brokerName, "brokerName");
        if (queueId < 0) {
            throw new IllegalArgumentException("queueId must not be negative, was " + queueId);
        }
    }

    @Override
    public String toString() {
        return brokerName + "#" + queueId;
    }
}
