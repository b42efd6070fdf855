package io.rmqgw.codec.header;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.rmqgw.codec.frame.FrameChecks;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.MalformedFrameException;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.testing.fuzz.BoundedFuzz;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the two header encodings directly: the input is one selector byte (low bit: 0 JSON,
 * 1 ROCKETMQ binary) and the header bytes, wrapped here in a frame prefix that matches them, so every
 * mutation reaches the header readers instead of breaking the frame length first. Each frame the
 * envelope accepts goes through {@link FrameChecks} (the generic decoder, every typed view, both
 * transcodings and their round trips); the only exception allowed is {@link MalformedFrameException}
 * and every buffer is released (the allocator's live memory is back to 0).
 */
class HeaderFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void header(byte[] input) {
        decodeHeader(input);
    }

    @Test
    @Timeout(120)
    void boundedRun() {
        BoundedFuzz.run(HeaderFuzzTest.class, "header", 0x4EADE5L, 20_000, HeaderFuzzTest::decodeHeader);
    }

    static void decodeHeader(byte[] input) {
        if (input.length == 0) {
            return;
        }
        SerializeType type = (input[0] & 1) == 0 ? SerializeType.JSON : SerializeType.ROCKETMQ;
        int headerLength = input.length - 1;
        UnpooledByteBufAllocator alloc = new UnpooledByteBufAllocator(false, true);
        ByteBuf frame = alloc.heapBuffer(RemotingFrame.PREFIX_LENGTH + headerLength);
        frame.writeInt(4 + headerLength);
        frame.writeInt(type.getCode() << 24 | headerLength);
        frame.writeBytes(input, 1, headerLength);
        RemotingFrame parsed;
        try {
            parsed = FrameDecoder.parse(frame);
        } catch (MalformedFrameException expected) {
            parsed = null;
        }
        if (parsed != null) {
            try {
                FrameChecks.exercise(parsed, alloc);
            } finally {
                parsed.release();
            }
        }
        long held = alloc.metric().usedHeapMemory();
        if (held != 0) {
            throw new AssertionError(held + " bytes still held after the header");
        }
    }
}
