package io.rmqgw.gateway.vq;

/**
 * One message leased by a pull.
 *
 * @param realQueue     the real queue it was read from
 * @param realOffset    its offset there
 * @param virtualQueue  the virtual queue it was delivered on (written as its QUEUEID)
 * @param virtualOffset its offset on that virtual queue (written as its QUEUEOFFSET)
 * @param deliveries    1 for a first delivery, more for a redelivery
 * @param holder        the connection that holds the lease
 */
public record Delivery(RealQueue realQueue, long realOffset, int virtualQueue, long virtualOffset, int deliveries,
                       long holder) {
}
