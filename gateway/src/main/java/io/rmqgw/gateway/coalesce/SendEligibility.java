package io.rmqgw.gateway.coalesce;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.message.MessageProperties;
import io.rmqgw.codec.name.NameValidator;
import java.util.List;

/**
 * Whether a single send may travel in a coalesced batch, and if not, why (the reasons of
 * {@code rmqgw_coalesce_passed_through_total}). A batch shares one header (sysFlag, born timestamp,
 * reconsume times, batch properties), and brokers treat batches differently from single sends: they
 * refuse batches with a delay level and batches to retry topics, ignore per-message delays, and do not
 * give batch messages a unique key. A send that could come out differently is left alone.
 */
final class SendEligibility {

    /** Entry bytes besides body and properties: TOTALSIZE, MAGICCODE, BODYCRC, FLAG, BODYLENGTH, PROPERTIESLENGTH. */
    static final int ENTRY_OVERHEAD = 22;
    /** Brokers read a batch entry's properties length as a signed short. */
    static final int MAX_ENTRY_PROPERTIES = Short.MAX_VALUE;
    /** Delays and timers a broker honours on single sends only. */
    private static final List<String> DELAY_PROPERTIES =
        List.of("DELAY", "TIMER_DELIVER_MS", "TIMER_DELAY_SEC", "TIMER_DELAY_MS", "__STARTDELIVERTIME");
    /** MessageSysFlag transaction bits (prepared, commit, rollback). */
    private static final int TRANSACTION_BITS = 0x3 << 2;
    /** The extField an ACL-signing client adds; the gateway's own requests are not signed. */
    private static final String ACCESS_KEY = "AccessKey";

    private SendEligibility() {
    }

    /**
     * Null when the send may be coalesced, else the reason it goes on its own.
     *
     * @param properties the send's properties string as UTF-8 bytes
     */
    static String passReason(boolean oneway, boolean batch, SendRequestHeader header, ByteBuf properties,
                             int bodyLength, int maxBytes) {
        if (oneway) {
            return "oneway";
        }
        if (batch) {
            return "batch";
        }
        String topic = header.topic();
        if (topic == null || topic.startsWith(NameValidator.RETRY_PREFIX) || topic.startsWith(NameValidator.DLQ_PREFIX)) {
            return "retry_topic";
        }
        int sysFlag = orZero(header.sysFlag());
        if ((sysFlag & TRANSACTION_BITS) != 0 || "true".equals(property(properties, "TRAN_MSG"))) {
            return "transactional";
        }
        for (String delay : DELAY_PROPERTIES) {
            String v = property(properties, delay);
            if (v != null && !v.isEmpty() && !"0".equals(v)) {
                return "delayed";
            }
        }
        if (orZero(header.reconsumeTimes()) != 0 || header.unitMode()) {
            return "reconsume";
        }
        if (sysFlag != 0) {
            // compressed bodies and other flags: the batch has one sysFlag for every message
            return "sys_flag";
        }
        if ("false".equals(property(properties, "WAIT"))) {
            return "no_wait_store";
        }
        String uniqueKey = property(properties, "UNIQ_KEY");
        if (uniqueKey == null || uniqueKey.isEmpty()) {
            return "no_unique_key";
        }
        int queueId = header.queueId();
        if (queueId == CommandHeader.ABSENT_INT || queueId < 0) {
            return "no_queue";
        }
        if (header.contains(ACCESS_KEY)) {
            return "signed";
        }
        int props = properties.readableBytes();
        if (props > MAX_ENTRY_PROPERTIES || (long) ENTRY_OVERHEAD + bodyLength + props > maxBytes) {
            return "too_large";
        }
        return null;
    }

    /** The properties string's bytes (an empty buffer for none). */
    static ByteBuf propertiesBytes(String properties) {
        return properties == null || properties.isEmpty() ? Unpooled.EMPTY_BUFFER
            : Unpooled.wrappedBuffer(properties.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static String property(ByteBuf properties, String key) {
        return MessageProperties.value(properties, properties.readerIndex(), properties.readableBytes(), key);
    }

    static int orZero(int value) {
        return value == CommandHeader.ABSENT_INT ? 0 : value;
    }
}
