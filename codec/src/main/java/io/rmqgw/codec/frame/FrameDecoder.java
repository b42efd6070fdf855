package io.rmqgw.codec.frame;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.CorruptedFrameException;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.codec.TooLongFrameException;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Splits a byte stream into {@link RemotingFrame}s. Each frame is a retained slice of the
 * cumulation buffer (no copy) whose envelope has been read; anything that cannot be a remoting
 * frame raises a {@link MalformedFrameException} naming the reason, and the pipeline closes the
 * connection.
 */
public final class FrameDecoder extends LengthFieldBasedFrameDecoder {

    public static final int DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

    private final int maxFrameLength;

    public FrameDecoder(int maxFrameLength) {
        // length field at 0, 4 bytes, counts what follows it; the frame keeps its prefix so an
        // unchanged frame is forwarded byte for byte
        super(maxFrameLength, 0, 4, 0, 0, true);
        this.maxFrameLength = maxFrameLength;
    }

    @Override
    protected Object decode(ChannelHandlerContext ctx, ByteBuf in) throws Exception {
        ByteBuf frame;
        try {
            frame = (ByteBuf) super.decode(ctx, in);
        } catch (TooLongFrameException e) {
            throw new MalformedFrameException(MalformedReason.FRAME_TOO_LONG,
                "frame exceeds the limit of " + maxFrameLength + " bytes", e);
        } catch (CorruptedFrameException e) {
            throw new MalformedFrameException(MalformedReason.BAD_LENGTH, e.getMessage(), e);
        }
        if (frame == null) {
            return null;
        }
        try {
            return parse(frame);
        } catch (RuntimeException e) {
            frame.release();
            throw e;
        }
    }

    /** Reads the envelope of a whole frame (length prefix included); takes ownership of {@code frame}. */
    public static RemotingFrame parse(ByteBuf frame) {
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
        HeaderCodec.Envelope e = HeaderCodec.decodeEnvelope(type,
            frame.slice(base + RemotingFrame.PREFIX_LENGTH, headerLength));
        return new RemotingFrame(frame, type, headerLength, e.code(), e.language(), e.version(), e.opaque(), e.flag());
    }
}
