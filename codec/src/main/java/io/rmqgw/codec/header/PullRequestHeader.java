package io.rmqgw.codec.header;

import io.netty.util.internal.ObjectPool;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;

/** PULL_MESSAGE and LITE_PULL_MESSAGE request headers (PullMessageRequestHeader). */
public final class PullRequestHeader extends CommandHeader {

    static final int CONSUMER_GROUP = 0;
    static final int TOPIC = 1;
    static final int QUEUE_ID = 2;
    static final int QUEUE_OFFSET = 3;
    static final int MAX_MSG_NUMS = 4;
    static final int SYS_FLAG = 5;
    static final int COMMIT_OFFSET = 6;
    static final int SUSPEND_TIMEOUT_MILLIS = 7;
    static final int SUBSCRIPTION = 8;
    static final int SUB_VERSION = 9;
    static final int EXPRESSION_TYPE = 10;
    static final int MAX_MSG_BYTES = 11;
    static final int REQUEST_SOURCE = 12;
    static final int PROXY_FORWARD_CLIENT_ID = 13;
    static final int BNAME = 14;
    static final int NAMESPACE = 15;
    static final int NAMESPACED = 16;
    static final int ONEWAY = 17;
    static final int LOGICAL = 18;

    PullRequestHeader(ObjectPool.Handle<CommandHeader> handle) {
        super(HeaderKind.PULL, handle);
    }

    public String consumerGroup() {
        return string(CONSUMER_GROUP);
    }

    public String topic() {
        return string(TOPIC);
    }

    public int queueId() {
        return intValue(QUEUE_ID);
    }

    public long queueOffset() {
        return longValue(QUEUE_OFFSET);
    }

    public int maxMsgNums() {
        return intValue(MAX_MSG_NUMS);
    }

    public int sysFlag() {
        return intValue(SYS_FLAG);
    }

    public long commitOffset() {
        return longValue(COMMIT_OFFSET);
    }

    public long suspendTimeoutMillis() {
        return longValue(SUSPEND_TIMEOUT_MILLIS);
    }

    public String subscription() {
        return string(SUBSCRIPTION);
    }

    public long subVersion() {
        return longValue(SUB_VERSION);
    }

    public String expressionType() {
        return string(EXPRESSION_TYPE);
    }

    public int maxMsgBytes() {
        return intValue(MAX_MSG_BYTES);
    }

    /** The RPC header's {@code bname} (5.x and 4.9.5+ clients), or null. */
    public String brokerName() {
        return string(BNAME);
    }

    public String namespace() {
        return string(NAMESPACE);
    }

    public NameCheck checkTopic(NameValidator validator) {
        return checkTopic(TOPIC, validator, false);
    }

    public NameCheck checkGroup(NameValidator validator) {
        return checkGroup(CONSUMER_GROUP, validator);
    }

    public PullRequestHeader setQueueId(int queueId) {
        putSlot(QUEUE_ID, queueId);
        return this;
    }

    public PullRequestHeader setQueueOffset(long queueOffset) {
        putSlot(QUEUE_OFFSET, queueOffset);
        return this;
    }

    public PullRequestHeader setCommitOffset(long commitOffset) {
        putSlot(COMMIT_OFFSET, commitOffset);
        return this;
    }

    public PullRequestHeader setSysFlag(int sysFlag) {
        putSlot(SYS_FLAG, sysFlag);
        return this;
    }

    public PullRequestHeader setMaxMsgNums(int maxMsgNums) {
        putSlot(MAX_MSG_NUMS, maxMsgNums);
        return this;
    }

    public PullRequestHeader setSuspendTimeoutMillis(long millis) {
        putSlot(SUSPEND_TIMEOUT_MILLIS, millis);
        return this;
    }
}
