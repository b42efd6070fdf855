package io.rmqgw.codec.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/** Builds outgoing frames: rebuilt headers over original bodies, and the gateway's own answers. */
public final class Frames {

    private Frames() {
    }

    /**
     * A frame with a new header and {@code body} (ownership of one reference passes to the result;
     * may be null for no body). The body is not copied: the result is a composite of the new
     * prefix+header and the body.
     */
    public static ByteBuf encode(ByteBufAllocator alloc, RemotingHeader header, SerializeType type, ByteBuf body) {
        ByteBuf head = alloc.buffer(256);
        try {
            head.writeInt(0);
            head.writeInt(0);
            int headerLength = HeaderCodec.encode(header, type, head);
            int bodyLength = body == null ? 0 : body.readableBytes();
            head.setInt(0, 4 + headerLength + bodyLength);
            head.setInt(4, (type.getCode() << 24) | (headerLength & 0xFFFFFF));
        } catch (RuntimeException e) {
            head.release();
            if (body != null) {
                body.release();
            }
            throw e;
        }
        if (body == null || !body.isReadable()) {
            if (body != null) {
                body.release();
            }
            return head;
        }
        CompositeByteBuf frame = alloc.compositeBuffer(2);
        frame.addComponent(true, head);
        frame.addComponent(true, body);
        return frame;
    }

    /** The frame with {@code header} replacing its own and the original body kept; {@code frame} is not released. */
    public static ByteBuf withHeader(ByteBufAllocator alloc, RemotingFrame frame, RemotingHeader header, SerializeType type) {
        return encode(alloc, header, type, frame.retainedBody());
    }

    /**
     * The gateway's own answer to {@code request}: a response with its opaque, in the encoding the
     * request used, so any client can read it.
     */
    public static ByteBuf errorResponse(ByteBufAllocator alloc, RemotingFrame request, int code, String remark) {
        return encode(alloc, RemotingHeader.response(request.opaque(), code, remark), request.encoding(), null);
    }

    /** The gateway's own answer to the request with {@code opaque} that was sent in {@code encoding}. */
    public static ByteBuf errorResponse(ByteBufAllocator alloc, int opaque, SerializeType encoding, int code, String remark) {
        return encode(alloc, RemotingHeader.response(opaque, code, remark), encoding, null);
    }

    /**
     * The whole request frame {@code frame} (from its length prefix, as a handler returns it for the upstream) with
     * {@code code} as its request code, everything else as it was; {@code frame} is not released or changed. A
     * ROCKETMQ binary frame is copied and the code written over its own; a JSON header is decoded and written
     * again, over {@code frame}'s body (a retained slice).
     */
    public static ByteBuf withCode(ByteBufAllocator alloc, ByteBuf frame, int code) {
        int base = frame.readerIndex();
        int typeAndLength = frame.getInt(base + 4);
        int headerLength = typeAndLength & 0xFFFFFF;
        if ((typeAndLength >>> 24) == SerializeType.ROCKETMQ.getCode()) {
            ByteBuf copy = alloc.buffer(frame.readableBytes());
            copy.writeBytes(frame, base, frame.readableBytes());
            // the binary header opens with the code, a short
            copy.setShort(RemotingFrame.PREFIX_LENGTH, code);
            return copy;
        }
        ByteBuf whole = frame.retainedSlice();
        RemotingFrame json;
        try {
            json = HeaderCodec.frame(whole, SerializeType.JSON, RemotingFrame.PREFIX_LENGTH, headerLength);
        } catch (RuntimeException e) {
            whole.release();
            throw e;
        }
        try {
            RemotingHeader h = HeaderCodec.decodeHeader(json);
            return withHeader(alloc, json, new RemotingHeader(code, h.language(), h.version(), h.opaque(), h.flag(),
                h.remark(), h.extFields()), SerializeType.JSON);
        } finally {
            json.release();
        }
    }

    /**
     * The frame with its original header bytes and {@code body} replacing its body (ownership of
     * {@code body} passes to the result); {@code frame} is not released.
     */
    public static ByteBuf withBody(ByteBufAllocator alloc, RemotingFrame frame, ByteBuf body) {
        ByteBuf prefix = alloc.buffer(RemotingFrame.PREFIX_LENGTH);
        prefix.writeInt(4 + frame.headerLength() + body.readableBytes());
        prefix.writeInt(frame.content().getInt(frame.content().readerIndex() + 4));
        CompositeByteBuf out = alloc.compositeBuffer(3);
        out.addComponent(true, prefix);
        out.addComponent(true, frame.headerSlice().retain());
        out.addComponent(true, body);
        return out;
    }
}
