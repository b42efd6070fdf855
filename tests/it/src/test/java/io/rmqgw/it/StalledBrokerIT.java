package io.rmqgw.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.PoolArenaMetric;
import io.netty.buffer.PoolChunkListMetric;
import io.netty.buffer.PoolChunkMetric;
import io.netty.buffer.PooledByteBufAllocator;
import io.rmqgw.gateway.config.HeaderEncoding;
import io.rmqgw.gateway.config.UpstreamConfig;
import io.rmqgw.it.fixture.ForkedBroker;
import io.rmqgw.it.fixture.GatewayFixture;
import io.rmqgw.it.fixture.SharedCluster;
import io.rmqgw.it.fixture.SharedClusterExtension;
import io.rmqgw.it.support.Admin;
import io.rmqgw.it.support.DeliveryLedger;
import io.rmqgw.it.support.FaultLoad;
import io.rmqgw.testing.RawRemoting;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.GetMaxOffsetRequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * An upstream that stalls (issue 14, faults): the broker's JVM is stopped with SIGSTOP (its sockets stay open,
 * nothing is answered) for {@code rmqgw.it.stallSeconds} (8 s by default) under load, then continued. Every
 * request waiting for it gets the gateway's SYSTEM_BUSY after {@code upstream.request-timeout} (2 s here), not
 * silence; a client pipelining 64 MiB of requests into the stalled broker is stopped being read once the
 * upstream connection is full, so what the gateway holds stays bounded; after SIGCONT every request is answered
 * exactly once and no acknowledged send is lost.
 */
@ExtendWith(SharedClusterExtension.class)
class StalledBrokerIT {

    private static final Duration STALL = Duration.ofSeconds(Long.getLong("rmqgw.it.stallSeconds", 8));
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(2);
    private static final int PIPELINED = 2_000;
    private static final int PIPELINED_BODY = 32 * 1024;
    /** What the gateway may hold for the stalled broker, far below the 64 MiB pipelined at it. */
    private static final long DIRECT_BOUND = 8L * 1024 * 1024;

    @Test
    void stalledRequestsGetAnErrorMemoryStaysBoundedAndNothingAcknowledgedIsLost(SharedCluster shared)
        throws Exception {
        String topic = shared.topic("stall");
        DeliveryLedger ledger = new DeliveryLedger();
        try (ForkedBroker broker = ForkedBroker.create(shared.dir().resolve("forked-broker-stall"),
                shared.namesrvAddress(), "ItStallCluster", "it-stall-a").start();
             GatewayFixture gateway = GatewayFixture.startWith(shared.namesrvAddress(), HeaderEncoding.ROCKETMQ,
                 c -> c.withUpstream(new UpstreamConfig(c.upstream().namesrv(), c.upstream().connectTimeout(),
                     REQUEST_TIMEOUT, c.upstream().longPollTimeout(), c.upstream().headerEncoding())))) {
            Admin.createTopic(broker.brokerAddress(), topic, 4);
            Admin.awaitRoute(gateway.namesrvAddress(), topic, broker.brokerName(), Duration.ofSeconds(30));
            int gatewayPort = gateway.brokerPort(broker.brokerAddress());
            try (FaultLoad load = FaultLoad.start(gateway.namesrvAddress(), topic, shared.group("stall"), 2, 5,
                     Duration.ofSeconds(10), 0, ledger);
                 RawRemoting pipeline = RawRemoting.connect(gatewayPort, Duration.ofSeconds(60))) {
                load.awaitMoreAcknowledged(200, Duration.ofSeconds(30));
                // the pipelining client's connection is relayed before the stall
                assertEquals(ResponseCode.SUCCESS, pipeline.invoke(maxOffset(topic, 0), SerializeType.JSON).code());

                long directBefore = directBytesInUse();
                int failedBefore = load.failed();
                int acknowledgedBefore = load.acknowledged();
                AtomicLong inFlightPeak = new AtomicLong();
                AtomicLong directPeak = new AtomicLong(directBefore);
                AtomicBoolean sampling = new AtomicBoolean(true);
                Thread sampler = new Thread(() -> {
                    while (sampling.get()) {
                        inFlightPeak.accumulateAndGet(gateway.gateway().inFlight(), Math::max);
                        directPeak.accumulateAndGet(directBytesInUse(), Math::max);
                        try {
                            TimeUnit.MILLISECONDS.sleep(20);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "stall-sampler");
                sampler.setDaemon(true);
                sampler.start();

                Map<Integer, Integer> answersByCode = new ConcurrentHashMap<>();
                Set<Integer> answered = ConcurrentHashMap.newKeySet();
                AtomicInteger answeredTwice = new AtomicInteger();
                AtomicInteger written = new AtomicInteger();
                Thread reader = new Thread(() -> {
                    try {
                        while (answered.size() < PIPELINED) {
                            RawRemoting.Answer a = pipeline.readFrame();
                            if (!answered.add(a.command().getOpaque())) {
                                answeredTwice.incrementAndGet();
                            }
                            answersByCode.merge(a.code(), 1, Integer::sum);
                        }
                    } catch (IOException e) {
                        System.err.println("[it] pipeline reader: " + e);
                    }
                }, "stall-pipeline-reader");
                Thread writer = new Thread(() -> {
                    try {
                        for (int i = 0; i < PIPELINED; i++) {
                            RemotingCommand request = maxOffset(topic, i % 4);
                            request.setBody(new byte[PIPELINED_BODY]);
                            pipeline.write(RawRemoting.frame(request, SerializeType.JSON));
                            written.incrementAndGet();
                        }
                    } catch (IOException e) {
                        System.err.println("[it] pipeline writer: " + e);
                    }
                }, "stall-pipeline-writer");

                long pid = broker.pid();
                FaultLoad.signal("STOP", pid);
                long stoppedAt = System.nanoTime();
                try {
                    reader.start();
                    writer.start();
                    TimeUnit.NANOSECONDS.sleep(STALL.toNanos() - (System.nanoTime() - stoppedAt));
                } finally {
                    FaultLoad.signal("CONT", pid);
                }
                int writtenInStall = written.get();
                int failedInStall = load.failed() - failedBefore;
                int acknowledgedInStall = load.acknowledged() - acknowledgedBefore;
                long inFlightInStall = inFlightPeak.get();
                long directInStall = directPeak.get();

                writer.join(60_000);
                reader.join(60_000);
                load.awaitMoreAcknowledged(200, Duration.ofSeconds(60));
                load.stopSending();
                load.awaitNothingMissing(Duration.ofSeconds(60));
                sampling.set(false);
                sampler.join(5_000);

                List<FaultLoad.Failure> stallFailures = load.failures().values().stream()
                    .filter(f -> f.brokerCode() == ResponseCode.SYSTEM_BUSY && f.message().contains("did not answer"))
                    .toList();
                System.err.println("[it] FAULT broker-sigstop " + STALL.toSeconds() + " s (request-timeout "
                    + REQUEST_TIMEOUT.toSeconds() + " s): sends during the stall acknowledged " + acknowledgedInStall
                    + ", failed " + failedInStall + " (" + stallFailures.size() + " with the gateway's SYSTEM_BUSY,"
                    + " slowest " + stallFailures.stream().mapToLong(FaultLoad.Failure::elapsedMillis).max().orElse(-1)
                    + " ms); pipelined " + PIPELINED + " x " + PIPELINED_BODY / 1024 + " KiB, " + writtenInStall
                    + " taken during the stall (" + mib((long) writtenInStall * PIPELINED_BODY) + " MiB), answers by code "
                    + answersByCode + ", answered twice "
                    + answeredTwice.get() + "; gateway in flight peak " + inFlightInStall + ", pooled direct memory "
                    + mib(directBefore) + " MiB before, peak " + mib(directInStall) + " MiB in the stall, "
                    + mib(directPeak.get()) + " MiB in the whole run; in all acknowledged " + ledger.sentCount()
                    + ", failed " + load.failed() + ", lost " + ledger.missing().size() + ", duplicates "
                    + ledger.duplicates() + ", failed but stored " + ledger.receivedUnacknowledged().size());
                stallFailures.stream().limit(2).forEach(f -> System.err.println("[it]   " + f));

                assertTrue(failedInStall > 0 && stallFailures.size() > 0,
                    () -> "no send failed with the gateway's SYSTEM_BUSY during the stall: " + load.failures());
                for (FaultLoad.Failure f : stallFailures) {
                    assertTrue(f.elapsedMillis() < 10_000, () -> "answered after the client's own timeout: " + f);
                }
                assertTrue(writtenInStall < PIPELINED, "the gateway kept reading a client whose upstream was stalled");
                assertTrue(directInStall - directBefore < DIRECT_BOUND, () -> "pooled direct memory grew by "
                    + mib(directInStall - directBefore) + " MiB during the stall");
                assertEquals(PIPELINED, answered.size(), () -> "pipelined requests unanswered: " + answersByCode);
                assertEquals(0, answeredTwice.get(), "a request answered twice");
                assertEquals(Set.of(), ledger.missing(), "acknowledged sends never received");
            } finally {
                // never leave a stopped broker behind (close kills it anyway)
                if (broker.isAlive()) {
                    FaultLoad.signal("CONT", broker.pid());
                }
            }
        }
    }

    /**
     * Direct buffers in use from the pooled allocator the gateway (and the in-process shared broker, idle here)
     * allocates from: each chunk's size less its free bytes, so not the chunks reserved (16 MiB each).
     */
    private static long directBytesInUse() {
        long used = 0;
        for (PoolArenaMetric arena : PooledByteBufAllocator.DEFAULT.metric().directArenas()) {
            for (PoolChunkListMetric list : arena.chunkLists()) {
                for (PoolChunkMetric chunk : list) {
                    used += chunk.chunkSize() - chunk.freeBytes();
                }
            }
        }
        return used;
    }

    private static String mib(long bytes) {
        return String.format(java.util.Locale.ROOT, "%.1f", bytes / (1024.0 * 1024));
    }

    private static RemotingCommand maxOffset(String topic, int queueId) {
        GetMaxOffsetRequestHeader h = new GetMaxOffsetRequestHeader();
        h.setTopic(topic);
        h.setQueueId(queueId);
        return RemotingCommand.createRequestCommand(RequestCode.GET_MAX_OFFSET, h);
    }
}
