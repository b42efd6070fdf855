package io.rmqgw.codec.header;

import io.netty.util.internal.ObjectPool;
import org.apache.rocketmq.remoting.protocol.RequestCode;

/**
 * Which typed view a header gets. Request headers are typed by their own code; a response header
 * by the code of the request it answers (a response carries only its response code).
 */
public enum HeaderKind {
    /** SEND_MESSAGE (10): SendMessageRequestHeader, long field names. */
    SEND_V1(new KeyTable("producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums", "queueId", "sysFlag",
        "bornTimestamp", "flag", "properties", "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch",
        null, "bname", "ns", "nsd", "oway", "lo")),
    /** SEND_MESSAGE_V2 (310) and SEND_BATCH_MESSAGE (320): SendMessageRequestHeaderV2, fields a..n. */
    SEND_V2(new KeyTable("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n",
        "bname", "ns", "nsd", "oway", "lo")),
    /** PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361): PullMessageRequestHeader. */
    PULL(new KeyTable("consumerGroup", "topic", "queueId", "queueOffset", "maxMsgNums", "sysFlag", "commitOffset",
        "suspendTimeoutMillis", "subscription", "subVersion", "expressionType", "maxMsgBytes", "requestSource",
        "proxyFrowardClientId", "bname", "ns", "nsd", "oway", "lo")),
    /** The response to a send: SendMessageResponseHeader. */
    SEND_RESPONSE(new KeyTable("msgId", "queueId", "queueOffset", "transactionId", "batchUniqId", "recallHandle")),
    /** The response to a pull: PullMessageResponseHeader. */
    PULL_RESPONSE(new KeyTable("suggestWhichBrokerId", "nextBeginOffset", "minOffset", "maxOffset", "offsetDelta",
        "topicSysFlag", "groupSysFlag", "forbiddenType")),
    /** Every other code: extFields carried as they are, no typed fields. */
    GENERIC(KeyTable.EMPTY);

    final KeyTable keys;
    /** Released headers of this kind, reused (a Netty recycler: per thread, released from any thread). */
    private final ObjectPool<CommandHeader> pool;

    HeaderKind(KeyTable keys) {
        this.keys = keys;
        this.pool = ObjectPool.newPool(this::create);
    }

    /** The view for a request with {@code code}. */
    public static HeaderKind forRequest(int code) {
        return switch (code) {
            case RequestCode.SEND_MESSAGE -> SEND_V1;
            case RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE -> SEND_V2;
            case RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE -> PULL;
            default -> GENERIC;
        };
    }

    /** The view for a response to a request with {@code requestCode}. */
    public static HeaderKind forResponse(int requestCode) {
        return switch (requestCode) {
            case RequestCode.SEND_MESSAGE, RequestCode.SEND_MESSAGE_V2, RequestCode.SEND_BATCH_MESSAGE -> SEND_RESPONSE;
            case RequestCode.PULL_MESSAGE, RequestCode.LITE_PULL_MESSAGE -> PULL_RESPONSE;
            default -> GENERIC;
        };
    }

    /** The extFields key of a typed slot in this kind, or null when this kind has none for it. */
    public String key(int slot) {
        return keys.name(slot);
    }

    /** A header of this kind, from the pool, with one reference. */
    CommandHeader newHeader() {
        return pool.get().reuse();
    }

    /** A header of this kind, from the thread's {@code spares} first, with one reference; released, it goes back there. */
    CommandHeader newHeader(SpareHeaders spares) {
        CommandHeader h = spares.take(this);
        if (h == null) {
            h = pool.get();
        }
        h.home = spares;
        return h.reuse();
    }

    private CommandHeader create(ObjectPool.Handle<CommandHeader> handle) {
        return switch (this) {
            case SEND_V1, SEND_V2 -> new SendRequestHeader(this, handle);
            case PULL -> new PullRequestHeader(handle);
            case SEND_RESPONSE -> new SendResponseHeader(handle);
            case PULL_RESPONSE -> new PullResponseHeader(handle);
            case GENERIC -> new GenericHeader(handle);
        };
    }
}
