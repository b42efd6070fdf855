package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.codec.header.PullResponseEncoder;
import io.rmqgw.codec.message.StoredRecords;
import io.rmqgw.gateway.config.VirtualQueueConfig;
import io.rmqgw.gateway.vq.Appended;
import io.rmqgw.gateway.vq.Pull;
import io.rmqgw.gateway.vq.RealQueue;
import io.rmqgw.gateway.vq.VirtualQueueGroup;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import org.apache.rocketmq.common.message.MessageDecoder;
import org.apache.rocketmq.common.message.MessageExt;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The gateway's own work per message on the virtual-queue delivery path, no sockets: one operation is one
 * fetch answer of {@link #BATCH} stored records of 1 KiB bodies taken into a {@link VirtualQueueGroup} window,
 * leased by one pull of {@link #BATCH} on a virtual queue (the re-addressed records built), the PULL_MESSAGE
 * answer frame encoded as {@code VirtualConsumer.answerFound} writes it for a client of {@code encoding}, then
 * released (what the socket write does), and the pull's messages committed, so the window slides. Divide by
 * {@link #BATCH} for a message ({@code CpuTime vq} does).
 *
 * <p>Left out: {@code VirtualConsumer}'s own bookkeeping around these calls (owners, held pulls, flow counters,
 * the fetch answer's header decode once per fetch, store-host rewriting when configured) and the socket writes.
 * The fetch answer's bytes are one buffer re-used: its queue offsets are moved on in place before each append,
 * as a broker's next answer would carry them (nothing of the previous answer is still held by then: the commit
 * released it), so no copy that the gateway would not make is timed.
 */
public class VirtualQueueBenchmark extends ThroughputBenchmark {

    /** Messages per fetch and per pull, as the gateway's pooled upstream fetches and the clients' default pulls. */
    public static final int BATCH = 32;
    private static final int BODY = 1024;
    private static final int PER_REAL_QUEUE = 4;
    private static final long HOLDER = 7;

    @Param({"ROCKETMQ", "JSON"})
    public SerializeType encoding;

    /** The answer's header as VirtualConsumer built it before PullResponseEncoder: a HashMap through Frames.encode. */
    @Param({"false", "true"})
    public boolean mapBuilt;

    private final PooledByteBufAllocator alloc = PooledByteBufAllocator.DEFAULT;
    private final RealQueue queue = new RealQueue("broker-a", 0);
    private VirtualQueueGroup group;
    private ByteBuf fetched;
    private int[] recordStarts;
    private long realOffset;
    private final long[] virtualOffsets = new long[PER_REAL_QUEUE];
    private int cycle;
    private int opaque;

    @Setup
    public void setUp() {
        group = new VirtualQueueGroup(new VirtualQueueConfig("GID_bench", "bench", PER_REAL_QUEUE, 256, null, 64,
            Duration.ofSeconds(30), Duration.ofSeconds(60), 16), System::nanoTime, alloc);
        group.addRealQueue(queue, 0);
        fetched = alloc.directBuffer();
        recordStarts = new int[BATCH];
        for (int i = 0; i < BATCH; i++) {
            recordStarts[i] = fetched.writerIndex();
            fetched.writeBytes(record(i));
        }
    }

    @TearDown
    public void tearDown() {
        group.close();
        fetched.release();
    }

    /** One fetch of {@link #BATCH}, one pull of them on the next virtual queue, its answer frame, the commit. */
    @Benchmark
    public long deliver() {
        for (int i = 0; i < BATCH; i++) { // the broker's next answer
            StoredRecords.setDelivery(fetched, recordStarts[i], queue.queueId(), realOffset + i, 0);
        }
        realOffset += BATCH;
        Appended appended = group.append(queue, fetched.retain(), realOffset);
        int v = cycle++ % PER_REAL_QUEUE;
        Pull p = group.pull(v, HOLDER, virtualOffsets[v], BATCH);
        if (p.status() != Pull.Status.FOUND || p.deliveries().size() != BATCH || appended.accepted() != BATCH) {
            p.release();
            throw new IllegalStateException("expected " + BATCH + " messages, pull " + p.status() + " "
                + p.deliveries().size() + ", appended " + appended);
        }
        virtualOffsets[v] = p.nextOffset();
        ByteBuf frame = answerFound(++opaque, p);
        long size = frame.readableBytes();
        frame.release(); // the socket write
        int acked = group.commit(v, HOLDER, p.nextOffset());
        if (acked != BATCH) {
            throw new IllegalStateException("acknowledged " + acked);
        }
        return size;
    }

    /** What {@code VirtualConsumer.answerFound} writes (no store-host rewriting). */
    private ByteBuf answerFound(int opaque, Pull p) {
        if (!mapBuilt) {
            return PullResponseEncoder.encode(alloc, encoding, opaque, ResponseCode.SUCCESS, null, p.nextOffset(),
                p.records());
        }
        Map<String, String> ext = new HashMap<>();
        ext.put("suggestWhichBrokerId", "0");
        ext.put("nextBeginOffset", Long.toString(p.nextOffset()));
        ext.put("minOffset", "0");
        ext.put("maxOffset", Long.toString(p.nextOffset()));
        return Frames.encode(alloc, RemotingHeader.response(opaque, ResponseCode.SUCCESS, null).withExtFields(ext),
            encoding, p.records());
    }

    /** A stored record as a broker keeps it (rocketmq-common's own encoder), queue offset set per fetch. */
    private byte[] record(int index) {
        MessageExt m = new MessageExt();
        m.setTopic("bench");
        byte[] body = new byte[BODY];
        Arrays.fill(body, (byte) ('a' + index % 26));
        m.setBody(body);
        m.setBodyCRC(0x1234);
        m.setQueueId(queue.queueId());
        m.setQueueOffset(index);
        m.setCommitLogOffset(1_000_000L + index * 1200L);
        m.setBornTimestamp(1_700_000_000_000L);
        m.setStoreTimestamp(1_700_000_000_001L);
        m.setBornHost(new InetSocketAddress("127.0.0.1", 50000));
        m.setStoreHost(new InetSocketAddress("127.0.0.1", 10911));
        m.setKeys("key-" + index);
        m.putUserProperty("origin", "bench@" + index);
        try {
            return MessageDecoder.encode(m, false);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
