package io.rmqgw.codec.header;

import io.netty.util.internal.ObjectPool;

/** The response header of a send (SendMessageResponseHeader). */
public final class SendResponseHeader extends CommandHeader {

    static final int MSG_ID = 0;
    static final int QUEUE_ID = 1;
    static final int QUEUE_OFFSET = 2;
    static final int TRANSACTION_ID = 3;
    static final int BATCH_UNIQ_ID = 4;
    static final int RECALL_HANDLE = 5;

    SendResponseHeader(ObjectPool.Handle<CommandHeader> handle) {
        super(HeaderKind.SEND_RESPONSE, handle);
    }

    /** The offsetMsgId (store host + commit log offset, hex): it names the real broker. */
    public String msgId() {
        return string(MSG_ID);
    }

    /** Index and length of the msgId bytes in {@link #image()}, for rewriting without a String. */
    public int msgIdIndex() {
        return valueIndex(MSG_ID);
    }

    public int msgIdLength() {
        return valueLength(MSG_ID);
    }

    public int queueId() {
        return intValue(QUEUE_ID);
    }

    public long queueOffset() {
        return longValue(QUEUE_OFFSET);
    }

    public String transactionId() {
        return string(TRANSACTION_ID);
    }

    public String batchUniqId() {
        return string(BATCH_UNIQ_ID);
    }

    public String recallHandle() {
        return string(RECALL_HANDLE);
    }

    public SendResponseHeader setMsgId(String msgId) {
        putSlot(MSG_ID, msgId);
        return this;
    }

    public SendResponseHeader setQueueId(int queueId) {
        putSlot(QUEUE_ID, queueId);
        return this;
    }

    public SendResponseHeader setQueueOffset(long queueOffset) {
        putSlot(QUEUE_OFFSET, queueOffset);
        return this;
    }
}
