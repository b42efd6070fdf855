package io.rmqgw.codec.header;

import io.netty.util.internal.ObjectPool;

/** The response header of a pull (PullMessageResponseHeader). */
public final class PullResponseHeader extends CommandHeader {

    static final int SUGGEST_WHICH_BROKER_ID = 0;
    static final int NEXT_BEGIN_OFFSET = 1;
    static final int MIN_OFFSET = 2;
    static final int MAX_OFFSET = 3;
    static final int OFFSET_DELTA = 4;
    static final int TOPIC_SYS_FLAG = 5;
    static final int GROUP_SYS_FLAG = 6;
    static final int FORBIDDEN_TYPE = 7;

    PullResponseHeader(ObjectPool.Handle<CommandHeader> handle) {
        super(HeaderKind.PULL_RESPONSE, handle);
    }

    public long suggestWhichBrokerId() {
        return longValue(SUGGEST_WHICH_BROKER_ID);
    }

    public long nextBeginOffset() {
        return longValue(NEXT_BEGIN_OFFSET);
    }

    public long minOffset() {
        return longValue(MIN_OFFSET);
    }

    public long maxOffset() {
        return longValue(MAX_OFFSET);
    }

    public long offsetDelta() {
        return longValue(OFFSET_DELTA);
    }

    public int topicSysFlag() {
        return intValue(TOPIC_SYS_FLAG);
    }

    public int groupSysFlag() {
        return intValue(GROUP_SYS_FLAG);
    }

    public int forbiddenType() {
        return intValue(FORBIDDEN_TYPE);
    }

    public PullResponseHeader setSuggestWhichBrokerId(long brokerId) {
        putSlot(SUGGEST_WHICH_BROKER_ID, brokerId);
        return this;
    }

    public PullResponseHeader setNextBeginOffset(long offset) {
        putSlot(NEXT_BEGIN_OFFSET, offset);
        return this;
    }

    public PullResponseHeader setMinOffset(long offset) {
        putSlot(MIN_OFFSET, offset);
        return this;
    }

    public PullResponseHeader setMaxOffset(long offset) {
        putSlot(MAX_OFFSET, offset);
        return this;
    }
}
