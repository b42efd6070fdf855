package io.rmqgw.gateway.coalesce;

import io.netty.buffer.ByteBuf;
import io.rmqgw.gateway.core.Exchange;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * One client's single send, taken for coalescing: the message as a batch entry (flag, body and the
 * client's properties string, byte for byte), whom to answer, and the header fields a batch it opens is
 * sent with.
 *
 * @param entry owned by this send until its batch is written (then by the batch body)
 */
record CoalescedSend(Exchange exchange, int opaque, int requestCode, SerializeType answerEncoding, ByteBuf entry,
                     long arrivalNanos, BatchFields fields, long bornTimestamp) {

    /**
     * Header fields of a SEND_MESSAGE(_V2) that a batch takes from its first message, besides its born
     * timestamp: usually the same for every send of a queue, so a queue's batch headers share them.
     */
    record BatchFields(String producerGroup, String defaultTopic, int defaultTopicQueueNums, int flag,
                       String brokerName) {
    }

    int bytes() {
        return entry.readableBytes();
    }
}
