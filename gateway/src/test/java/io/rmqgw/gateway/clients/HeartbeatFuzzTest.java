package io.rmqgw.gateway.clients;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.config.ResponseEncoding;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.edge.NameGuard;
import io.rmqgw.gateway.edge.NameRefusal;
import io.rmqgw.testing.fuzz.BoundedFuzz;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes heartbeat parsing: {@link NameGuard#checkBody} (HEART_BEAT, LOCK_BATCH_MQ, UNLOCK_BATCH_MQ
 * bodies) and {@link ClientRegistry#heartbeat}, on a heap and on a direct body. Properties: nothing
 * throws (a body they cannot read is MALFORMED / left to the broker); the body's indexes and
 * reference count are as they were; a recorded heartbeat is found again and the same body again is
 * UNCHANGED; a closed connection leaves nothing in the registry; every buffer is released.
 * Seeds: {@code HeartbeatFuzzTestInputs/} (HeartbeatData and LockBatchRequestBody as rocketmq-remoting 5.4.0 encodes them).
 */
class HeartbeatFuzzTest {

    private static final EdgeSettings SETTINGS =
        new EdgeSettings(SerializeType.ROCKETMQ, ResponseEncoding.MIRROR, new NameValidator(127, 255, 255), false);

    @FuzzTest(maxDuration = "5m")
    void heartbeat(byte[] input) {
        parseHeartbeat(input);
    }

    @Test
    @Timeout(120)
    void boundedRun() {
        BoundedFuzz.run(HeartbeatFuzzTest.class, "heartbeat", 0x4EA27L, 20_000, HeartbeatFuzzTest::parseHeartbeat);
    }

    static void parseHeartbeat(byte[] input) {
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(false, true);
        for (boolean direct : new boolean[] {false, true}) {
            ByteBuf frame = direct ? alloc.directBuffer() : alloc.heapBuffer();
            frame.writeInt(4 + 21 + input.length).writeInt(SerializeType.ROCKETMQ.getCode() << 24 | 21)
                .writeShort(34).writeByte(0).writeShort(453).writeInt(1).writeInt(0).writeInt(0).writeInt(0)
                .writeBytes(input);
            RemotingFrame request = FrameDecoder.parse(frame);
            EmbeddedChannel client = new EmbeddedChannel();
            try {
                ByteBuf body = request.bodySlice();
                int reader = body.readerIndex();
                int writer = body.writerIndex();
                NameRefusal refusal = NameGuard.checkBody(request, SETTINGS);
                check(refusal == null || refusal.remark() != null, "a refusal says why");
                ClientRegistry registry = new ClientRegistry();
                ClientRegistry.Outcome outcome = registry.heartbeat(client, "10.0.0.1:10911", body);
                check(body.readerIndex() == reader && body.writerIndex() == writer, "the body's indexes are untouched");
                check(request.refCnt() == 1, "the body's reference count is untouched");
                if (outcome == ClientRegistry.Outcome.RECORDED) {
                    check(registry.size() == 1, "one client recorded");
                    check(registry.heartbeat(client, "10.0.0.1:10911", body) == ClientRegistry.Outcome.UNCHANGED,
                        "the same heartbeat again changes nothing");
                } else {
                    check(outcome == ClientRegistry.Outcome.MALFORMED && registry.size() == 0, "nothing recorded");
                }
                client.close();
                check(registry.size() == 0, "a closed connection is forgotten");
            } finally {
                request.release();
                client.finishAndReleaseAll();
            }
        }
        check(alloc.metric().usedHeapMemory() == 0 && alloc.metric().usedDirectMemory() == 0, "nothing held");
    }

    private static void check(boolean condition, String property) {
        if (!condition) {
            throw new AssertionError(property);
        }
    }
}
