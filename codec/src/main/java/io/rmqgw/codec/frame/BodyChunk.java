package io.rmqgw.codec.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;

/**
 * Bytes of the body of a frame that streams through ({@link FrameDecoder.CutThrough}): a retained slice
 * of what the socket read, emitted after the frame's head ({@link RemotingFrame#streamedBodyLength()} &gt; 0)
 * and in order, until {@link #last()}. Whoever receives one releases it or passes it on.
 */
public final class BodyChunk extends DefaultByteBufHolder {

    private final boolean last;

    BodyChunk(ByteBuf bytes, boolean last) {
        super(bytes);
        this.last = last;
    }

    /** Whether this chunk completes its frame's body. */
    public boolean last() {
        return last;
    }

    @Override
    public String toString() {
        return "body chunk{" + content().readableBytes() + "B" + (last ? ", last" : "") + "}";
    }
}
