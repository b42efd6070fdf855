package io.rmqgw.codec.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import java.nio.ByteOrder;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Splits a byte stream into {@link RemotingFrame}s. Each frame is a retained slice of the
 * cumulation buffer (no copy) whose envelope has been read. Reads a small frame spans are merged
 * into one buffer; the reads of a large one ({@link #LARGE_FRAME_LENGTH}) are chained in a composite
 * instead, so its bytes are copied only by the socket. Anything that cannot be a remoting
 * frame raises a {@link MalformedFrameException} naming the reason, and the pipeline closes the
 * connection. After that every further byte is discarded: framing is lost. With an
 * {@link IncompleteFrameBudget}, the memory the frame not yet whole pins is taken from it as its reads
 * arrive (the capacity of the buffers holding it, at least {@link #PARTIAL_FRAME_FLOOR}); a read that does
 * not fit raises a {@link FrameBudgetExceededException} instead of being kept. A read kept for a frame not
 * yet whole is copied into a buffer of its own size when it fills less than half of the one it arrived in
 * (the read buffer is sized by the reads before it: a trickle of single bytes would pin 32 KiB each).
 *
 * <p>With a {@link CutThrough}, a large frame may stream through instead of being stored whole: once its
 * header has arrived (and its body has not), the policy decides, once, from the head. A streamed frame is
 * emitted as its head ({@link RemotingFrame#streamedBodyLength()} &gt; 0) followed by {@link BodyChunk}s,
 * retained slices of the reads as they arrive, the last one marked. Its bytes are not held, so the budget
 * and the whole-frame limit do not apply to it; {@link #partialFrameSinceNanos()} still runs until its
 * last byte.
 */
public final class FrameDecoder extends LengthFieldBasedFrameDecoder {

    public static final int DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

    /**
     * From this frame length on, the reads a frame spans are chained, not merged: copying a 100 KiB
     * send into one buffer costs as much as the socket copy it follows, while a small frame is cheaper
     * to read from one contiguous buffer.
     */
    public static final int LARGE_FRAME_LENGTH = 32 * 1024;

    /**
     * The least a connection holding a frame not yet whole counts in the budget, whatever its buffers' capacity:
     * what the pool rounds up and the buffers' own bookkeeping, so that many connections holding a few bytes each
     * still add up to what they cost.
     */
    public static final int PARTIAL_FRAME_FLOOR = 2048;

    /**
     * A read kept for a frame not yet whole may leave this much of its buffer unused (or up to what it holds, if
     * more) before it is copied into a buffer of its size: copying a small read costs less than pinning the rest.
     */
    static final int KEPT_READ_SLACK = 1024;

    /**
     * Decides at header time whether a large frame streams through; called on the channel's event loop
     * with the frame's head (not owned: it must be neither kept nor released).
     */
    public interface CutThrough {
        boolean stream(RemotingFrame head);

        /**
         * Whether a frame arriving now could stream at all; when not, a frame too long to store whole is refused
         * as soon as its length arrives instead of waiting for its header.
         */
        default boolean open() {
            return true;
        }
    }

    private final int maxFrameLength;
    /** The longest frame stored whole; longer ones (up to {@link #maxFrameLength}) only stream through. */
    private final int maxWholeFrameLength;
    private final CutThrough cutThrough;
    private final int chainFrom;
    /** Body bytes of the frame streaming through still to come; 0 when none streams. */
    private int streamRemaining;
    /** The policy declined the frame now incomplete: it is stored whole, not asked again. */
    private boolean headDeclined;
    /** The frame now incomplete may stream once its header is all there. */
    private boolean awaitingHead;
    /** Shared by the connections whose incomplete frames it bounds; null: not counted. */
    private final IncompleteFrameBudget budget;
    /** What this decoder holds of {@link #budget} now: what its incomplete frame pins, or 0. */
    private long taken;
    private boolean corrupted;
    private boolean chainingReads;
    /** When the frame now incomplete began to arrive ({@code System.nanoTime()}), or 0 when none is. */
    private long partialSinceNanos;

    public FrameDecoder(int maxFrameLength) {
        this(maxFrameLength, LARGE_FRAME_LENGTH, null);
    }

    /** With the bytes of incomplete frames taken from {@code budget} (shared by other connections). */
    public FrameDecoder(int maxFrameLength, IncompleteFrameBudget budget) {
        this(maxFrameLength, LARGE_FRAME_LENGTH, budget);
    }

    /** With reads chained from frames of {@code chainFrom} bytes on ({@code Integer.MAX_VALUE}: never). */
    public FrameDecoder(int maxFrameLength, int chainFrom) {
        this(maxFrameLength, chainFrom, null);
    }

    /** With reads chained from {@code chainFrom} bytes on, and incomplete frames counted in {@code budget} (may be null). */
    public FrameDecoder(int maxFrameLength, int chainFrom, IncompleteFrameBudget budget) {
        this(maxFrameLength, maxFrameLength, chainFrom, budget, null);
    }

    /**
     * Frames of up to {@code maxWholeFrameLength} bytes stored whole; frames from {@code chainFrom} bytes on
     * offered to {@code cutThrough} (null: none streams), which may stream them up to {@code maxFrameLength}.
     */
    public FrameDecoder(int maxFrameLength, int maxWholeFrameLength, int chainFrom, IncompleteFrameBudget budget,
                        CutThrough cutThrough) {
        // length field at 0, 4 bytes, counts what follows it; the frame keeps its prefix so an
        // unchanged frame is forwarded byte for byte
        super(maxFrameLength, 0, 4, 0, 0, true);
        this.maxFrameLength = maxFrameLength;
        this.maxWholeFrameLength = Math.min(maxFrameLength, maxWholeFrameLength);
        this.chainFrom = chainFrom;
        this.budget = budget;
        this.cutThrough = cutThrough;
        setCumulator(merging);
    }

    /** Small frames: reads merged into one buffer, kept no larger than what it holds needs. */
    private final Cumulator merging = (alloc, cumulation, in) -> {
        if (!cumulation.isReadable()) {
            cumulation.release();
            return keptRead(alloc, cumulation, in);
        }
        ByteBuf into;
        try {
            into = compacted(alloc, cumulation, in.readableBytes());
        } catch (Throwable t) {
            in.release(); // the cumulation stays the decoder's
            throw t;
        }
        return MERGE_CUMULATOR.cumulate(alloc, into, in);
    };

    /** Large frames: reads chained in a composite, each in a buffer it fills at least half of. */
    private final Cumulator chaining = (alloc, cumulation, in) ->
        COMPOSITE_CUMULATOR.cumulate(alloc, cumulation, keptRead(alloc, cumulation, in));

    /**
     * {@code in}, or a copy of it in a buffer of its size when it is to be kept for a frame not yet whole and fills
     * less than half of its own buffer. The read a large frame begins in is kept as it is: that frame may stream
     * through (its reads then leave at once), and if it is stored whole the budget counts the buffer's capacity.
     * Takes ownership of {@code in} (released if the copy cannot be made).
     */
    private ByteBuf keptRead(ByteBufAllocator alloc, ByteBuf cumulation, ByteBuf in) {
        int readable = in.readableBytes();
        if (streamRemaining > 0 || in.capacity() - readable <= Math.max(readable, KEPT_READ_SLACK)
            || completesFrame(cumulation, in) || beginsLargeFrame(cumulation, in)) {
            return in;
        }
        try {
            return alloc.buffer(readable, readable).writeBytes(in);
        } finally {
            in.release();
        }
    }

    /**
     * {@code cumulation}, or its bytes in a buffer of the size they and {@code incoming} more bytes need when it would
     * be mostly empty (a large read buffer left holding the start of a small frame). Takes ownership of
     * {@code cumulation} when it returns another buffer; leaves it the caller's when this throws.
     */
    private static ByteBuf compacted(ByteBufAllocator alloc, ByteBuf cumulation, int incoming) {
        int needed = cumulation.readableBytes() + incoming;
        if (cumulation.capacity() - needed <= Math.max(needed, KEPT_READ_SLACK)) {
            return cumulation;
        }
        ByteBuf c = alloc.buffer(needed).writeBytes(cumulation);
        cumulation.release();
        return c;
    }

    /** Whether {@code in} begins a frame (nothing held before it) that is long enough to stream through. */
    private boolean beginsLargeFrame(ByteBuf cumulation, ByteBuf in) {
        return !cumulation.isReadable() && in.readableBytes() >= 4 && in.getInt(in.readerIndex()) >= chainFrom - 4;
    }

    /** Whether the frame at the start of {@code cumulation} then {@code in} is all there (then nothing is kept). */
    private static boolean completesFrame(ByteBuf cumulation, ByteBuf in) {
        int held = cumulation.readableBytes();
        long length;
        if (held >= 4) {
            length = cumulation.getInt(cumulation.readerIndex());
        } else if (held == 0 && in.readableBytes() >= 4) {
            length = in.getInt(in.readerIndex());
        } else {
            return false; // its length is split across the two: rare, and copying then costs a few bytes
        }
        return held + (long) in.readableBytes() >= length + 4;
    }

    /**
     * The length field as the signed int it is on the wire. Netty reads a 4-byte length unsigned, so a
     * negative length would otherwise pass as a 2-4 GiB frame and be refused as too long; read signed,
     * it is refused as a bad length.
     */
    @Override
    protected long getUnadjustedFrameLength(ByteBuf buf, int offset, int length, ByteOrder order) {
        return length == 4 ? (order == ByteOrder.LITTLE_ENDIAN ? buf.getIntLE(offset) : buf.getInt(offset))
            : super.getUnadjustedFrameLength(buf, offset, length, order);
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        if (corrupted) {
            in.skipBytes(in.readableBytes());
            return null;
        }
        try {
            if (streamRemaining > 0) {
                return nextChunk(in);
            }
            RemotingFrame head = cutThrough == null ? null : streamedHead(in);
            if (head != null) {
                giveBack();
                return head;
            }
            refuseIfTooLongToStore(in);
            // a frame that may still stream is not shown to the length decoder, which would remember its length
            ByteBuf frame = awaitingHead ? null : extractFrame(ctx, in);
            if (frame == null) {
                if (partialSinceNanos == 0) {
                    partialSinceNanos = System.nanoTime() | 1; // never 0
                }
                hold(in);
                awaitRestOf(in);
                return null;
            }
            partialSinceNanos = 0;
            headDeclined = false;
            giveBack();
            return parse(frame);
        } catch (MalformedFrameException | FrameBudgetExceededException e) {
            // framing is lost: whatever follows (more reads before the close completes, the bytes
            // decoded again when the channel goes inactive) must not be read as frames
            corrupted = true;
            in.skipBytes(in.readableBytes());
            giveBack();
            throw e;
        }
    }

    /** The next bytes of the body streaming through, as one chunk (all there is of it in {@code in}). */
    private BodyChunk nextChunk(ByteBuf in) {
        int length = Math.min(in.readableBytes(), streamRemaining);
        streamRemaining -= length;
        boolean last = streamRemaining == 0;
        if (last) {
            partialSinceNanos = 0;
        }
        return new BodyChunk(in.readRetainedSlice(length), last);
    }

    /**
     * The head of the frame at the start of {@code in} when it streams through: a large frame whose header is
     * all there and whose body is not, taken by {@link #cutThrough}. Null leaves the frame to be stored whole.
     */
    private RemotingFrame streamedHead(ByteBuf in) {
        awaitingHead = false;
        int start = in.readerIndex();
        int readable = in.readableBytes();
        if (headDeclined || readable < 4) {
            return null;
        }
        int length = in.getInt(start);
        if (length < chainFrom - 4 || length > maxFrameLength - 4 || readable >= length + 4L) {
            return null;
        }
        if (readable < RemotingFrame.PREFIX_LENGTH) {
            awaitingHead = true;
            return null;
        }
        int headerLength = in.getInt(start + 4) & 0xFFFFFF;
        if (headerLength > length - 4) {
            return null; // refused by the envelope check once whole, as any frame
        }
        if (readable < RemotingFrame.PREFIX_LENGTH + headerLength) {
            awaitingHead = true;
            return null;
        }
        // the head alone, its length prefix still the whole frame's; the body's bytes follow as chunks
        RemotingFrame whole = parse(in.retainedSlice(start, RemotingFrame.PREFIX_LENGTH + headerLength));
        boolean streams;
        try {
            streams = !whole.isResponse() && cutThrough.stream(whole);
        } catch (RuntimeException e) {
            whole.release();
            throw e;
        }
        if (!streams) {
            headDeclined = true;
            whole.release();
            return null;
        }
        in.skipBytes(RemotingFrame.PREFIX_LENGTH + headerLength);
        streamRemaining = length - 4 - headerLength;
        if (partialSinceNanos == 0) {
            partialSinceNanos = System.nanoTime() | 1;
        }
        return whole.asHead(streamRemaining);
    }

    /**
     * A frame longer than {@link #maxWholeFrameLength} that did not stream through is refused once what it
     * holds reaches that length (its header may still arrive and let it stream until then).
     */
    private void refuseIfTooLongToStore(ByteBuf in) {
        int readable = in.readableBytes();
        if (maxWholeFrameLength == maxFrameLength || readable < 4) {
            return;
        }
        long declared = in.getInt(in.readerIndex()) + 4L;
        if (declared <= maxWholeFrameLength || declared > maxFrameLength) {
            return; // stored whole, or refused on its length by the length decoder
        }
        boolean mayStillStream = cutThrough != null && cutThrough.open() && readable < maxWholeFrameLength
            && readable < RemotingFrame.PREFIX_LENGTH + (in.getInt(in.readerIndex() + 4) & 0xFFFFFFL);
        if (!mayStillStream) {
            String foreign = ForeignProtocol.describe(in, in.readerIndex());
            if (foreign != null) {
                throw new MalformedFrameException(MalformedReason.NOT_REMOTING, foreign, null);
            }
            throw new MalformedFrameException(MalformedReason.FRAME_TOO_LONG,
                "frame exceeds the limit of " + maxWholeFrameLength + " bytes (frames stored whole; this one declares "
                    + declared + ")");
        }
    }

    /** What this connection's incomplete frame pins, as taken from the budget (0 without a budget). */
    public long incompleteFrameBytes() {
        return taken;
    }

    /**
     * The memory {@code in} pins: the capacity of its buffer, or of every buffer it chains (a kept read pins the whole
     * buffer it arrived in, however few bytes it brought).
     */
    static long pinned(ByteBuf in) {
        if (in instanceof CompositeByteBuf c) {
            long sum = 0;
            for (int i = 0, n = c.numComponents(); i < n; i++) {
                sum += c.component(i).capacity();
            }
            return sum;
        }
        return in.capacity();
    }

    /** The incomplete frame at the start of {@code in} now holds all of {@code in}: the budget follows what it pins. */
    private void hold(ByteBuf in) {
        if (budget == null) {
            return;
        }
        long bytes = Math.max(pinned(in), PARTIAL_FRAME_FLOOR);
        if (bytes == taken) {
            return;
        }
        if (bytes < taken) {
            budget.giveBack(taken - bytes);
        } else if (!budget.tryTake(bytes - taken)) {
            String declared = bytes >= 4 ? " of " + (in.getInt(in.readerIndex()) + 4L) : "";
            throw new FrameBudgetExceededException("incomplete frames already hold " + budget.held() + " of the "
                + budget.limit() + " bytes they may; this connection's frame" + declared + " bytes would hold " + bytes
                + " (" + in.readableBytes() + " arrived)");
        }
        taken = bytes;
    }

    private void giveBack() {
        if (taken != 0) {
            budget.giveBack(taken);
            taken = 0;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        try {
            super.channelInactive(ctx);
        } finally {
            giveBack();
        }
    }

    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) throws Exception {
        // the cumulation is released with the handler: what it held goes back to the budget
        giveBack();
        super.handlerRemoved0(ctx);
    }

    /**
     * Since when ({@code System.nanoTime()}) the frame now incomplete has been arriving, or 0 when the
     * decoder holds no partial frame: a peer that starts a frame and never finishes it (slowloris) is
     * found by how old this gets. Read on the channel's event loop.
     */
    public long partialFrameSinceNanos() {
        return partialSinceNanos;
    }

    /**
     * Picks how the next reads join {@code in}, which now starts at a frame not yet whole: chained if
     * that frame is large, merged otherwise.
     */
    private void awaitRestOf(ByteBuf in) {
        boolean large = in.readableBytes() >= 4 && in.getInt(in.readerIndex()) >= chainFrom - 4;
        if (large != chainingReads) {
            chainingReads = large;
            setCumulator(large ? chaining : merging);
        }
    }

    private ByteBuf extractFrame(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        int start = in.readerIndex();
        try {
            return (ByteBuf) super.decode(ctx, in);
        } catch (TooLongFrameException e) {
            // the bytes are still there (skipped, not discarded): say what spoke if it was not RocketMQ
            String foreign = ForeignProtocol.describe(in, start);
            if (foreign != null) {
                throw new MalformedFrameException(MalformedReason.NOT_REMOTING, foreign, e);
            }
            throw new MalformedFrameException(MalformedReason.FRAME_TOO_LONG,
                "frame exceeds the limit of " + maxFrameLength + " bytes", e);
        } catch (CorruptedFrameException e) {
            throw new MalformedFrameException(MalformedReason.BAD_LENGTH, e.getMessage(), e);
        }
    }

    /**
     * Reads the envelope of a whole frame (length prefix included); takes ownership of {@code frame}:
     * it is released when it is not a valid frame.
     */
    public static RemotingFrame parse(ByteBuf frame) {
        try {
            return parseEnvelope(frame);
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
    }

    private static RemotingFrame parseEnvelope(ByteBuf frame) {
        int base = frame.readerIndex();
        int total = frame.readableBytes() - 4;
        if (total < 4) {
            throw new MalformedFrameException(MalformedReason.BAD_LENGTH,
                "frame length " + total + " leaves no room for the header length field");
        }
        int typeAndHeaderLength = frame.getInt(base + 4);
        int typeCode = (typeAndHeaderLength >>> 24) & 0xFF;
        int headerLength = typeAndHeaderLength & 0xFFFFFF;
        if (headerLength > total - 4) {
            throw new MalformedFrameException(MalformedReason.HEADER_PAST_FRAME,
                "header length " + headerLength + " runs past the frame (" + (total - 4) + " bytes after the length fields)");
        }
        SerializeType type;
        if (typeCode == SerializeType.JSON.getCode()) {
            type = SerializeType.JSON;
        } else if (typeCode == SerializeType.ROCKETMQ.getCode()) {
            type = SerializeType.ROCKETMQ;
        } else {
            throw new MalformedFrameException(MalformedReason.UNKNOWN_SERIALIZE_TYPE, "serialize type " + typeCode);
        }
        return HeaderCodec.frame(frame, type, base + RemotingFrame.PREFIX_LENGTH, headerLength);
    }
}
