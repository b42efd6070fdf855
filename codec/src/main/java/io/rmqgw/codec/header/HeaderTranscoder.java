package io.rmqgw.codec.header;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Typed header decoding and per-frame transcoding between the JSON and ROCKETMQ binary header
 * encodings. Reflection-free, regex-free, no boxing; a JSON header is streamed by jackson-core from
 * the frame's memory and a binary header is read by offsets.
 *
 * <p>The output is what rocketmq-remoting's {@code RemotingCommand} writes for the same command
 * (binary: byte for byte, entries in the order they arrived rather than HashMap order; JSON: the same
 * fields, decoded by {@code RemotingCommand.decode} to the same command). Every output buffer is
 * allocated at its exact size.
 *
 * <p>Ownership: {@code decode*} return a header the caller releases; the frame passed in is never
 * released here. A header decoded from a binary frame holds a retained slice of it.
 */
public final class HeaderTranscoder {

    private static final int MAX_HEADER_LENGTH = 0xFFFFFF;

    private HeaderTranscoder() {
    }

    /** Decodes {@code header} (the header bytes only) in {@code type} as {@code kind}; the JSON image comes from {@code alloc}. */
    public static CommandHeader decode(SerializeType type, ByteBuf header, HeaderKind kind, ByteBufAllocator alloc) {
        return type == SerializeType.ROCKETMQ ? BinaryHeaderReader.read(header, kind) : JsonHeaderReader.read(header, kind, alloc);
    }

    /** Decodes the frame's header as {@code kind}. */
    public static CommandHeader decode(RemotingFrame frame, HeaderKind kind) {
        ByteBuf content = frame.content();
        int index = content.readerIndex() + RemotingFrame.PREFIX_LENGTH;
        if (frame.encoding() == SerializeType.ROCKETMQ) {
            return BinaryHeaderReader.read(content, index, frame.headerLength(), kind);
        }
        int ext = frame.jsonExtFieldsOffset();
        // the envelope has read and checked the whole header: where it could, it noted where extFields
        // starts, and only that object is read again
        return ext >= 0
            ? JsonHeaderReader.readExtFields(frame, content, index + ext, frame.headerLength() - ext, kind, content.alloc())
            : JsonHeaderReader.read(content, index, frame.headerLength(), kind, content.alloc());
    }

    /** Decodes a request frame's header, typed by its code (GENERIC for codes without a typed view). */
    public static CommandHeader decodeRequest(RemotingFrame frame) {
        return decode(frame, HeaderKind.forRequest(frame.code()));
    }

    /** Decodes a response frame's header, typed by the code of the request it answers. */
    public static CommandHeader decodeResponse(RemotingFrame frame, int requestCode) {
        return decode(frame, HeaderKind.forResponse(requestCode));
    }

    /**
     * Writes the frame prefix (total length, serialize type and header length) and the header in
     * {@code type} to {@code out}, for a frame whose body of {@code bodyLength} bytes follows.
     * Returns the bytes written.
     */
    public static int writeFrameHead(CommandHeader header, SerializeType type, int bodyLength, ByteBuf out) {
        if (type == SerializeType.ROCKETMQ) {
            header.requireEncodable(type);
            int length = header.binaryLength();
            out.ensureWritable(RemotingFrame.PREFIX_LENGTH + length);
            out.writeInt(4 + length + bodyLength);
            out.writeInt(typeAndLength(type, length));
            header.writeBinary(out);
            return RemotingFrame.PREFIX_LENGTH + length;
        }
        Scratch scratch = Scratch.get();
        int length = header.renderJson(scratch);
        out.ensureWritable(RemotingFrame.PREFIX_LENGTH + length);
        out.writeInt(4 + length + bodyLength);
        out.writeInt(typeAndLength(type, length));
        out.writeBytes(scratch.lastOut, 0, length);
        return RemotingFrame.PREFIX_LENGTH + length;
    }

    /** A new buffer, exactly sized, holding the frame prefix and the header in {@code type}. */
    public static ByteBuf encodeFrameHead(ByteBufAllocator alloc, CommandHeader header, SerializeType type, int bodyLength) {
        if (type == SerializeType.ROCKETMQ) {
            header.requireEncodable(type);
            int length = header.binaryLength();
            ByteBuf out = alloc.buffer(RemotingFrame.PREFIX_LENGTH + length);
            out.writeInt(4 + length + bodyLength);
            out.writeInt(typeAndLength(type, length));
            header.writeBinary(out);
            return out;
        }
        Scratch scratch = Scratch.get();
        int length = header.renderJson(scratch);
        int prefix = typeAndLength(type, length);
        ByteBuf out = alloc.buffer(RemotingFrame.PREFIX_LENGTH + length);
        out.writeInt(4 + length + bodyLength);
        out.writeInt(prefix);
        out.writeBytes(scratch.lastOut, 0, length);
        return out;
    }

    /**
     * A whole frame: prefix and header in {@code type}, then {@code body} (one reference passes to the
     * result; may be null). The body is not copied: with a body the result is a two-part composite.
     */
    public static ByteBuf encodeFrame(ByteBufAllocator alloc, CommandHeader header, SerializeType type, ByteBuf body) {
        int bodyLength = body == null ? 0 : body.readableBytes();
        ByteBuf head;
        try {
            head = encodeFrameHead(alloc, header, type, bodyLength);
        } catch (RuntimeException e) {
            if (body != null) {
                body.release();
            }
            throw e;
        }
        if (bodyLength == 0) {
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

    /**
     * The frame with its header re-encoded in {@code target} and its body kept (not copied). A frame
     * already in {@code target}, or one whose header cannot be written in it (see
     * {@link CommandHeader#canEncode}), comes back as it is (a retained duplicate): check the result's
     * serialize type byte if it matters. {@code frame} is not released.
     */
    public static ByteBuf transcode(ByteBufAllocator alloc, RemotingFrame frame, SerializeType target) {
        if (frame.encoding() == target) {
            return frame.content().retainedDuplicate();
        }
        CommandHeader header = decode(frame, HeaderKind.GENERIC);
        try {
            if (!header.canEncode(target)) {
                return frame.content().retainedDuplicate();
            }
            return encodeFrame(alloc, header, target, frame.retainedBody());
        } finally {
            header.release();
        }
    }

    /**
     * Writes only the header bytes of {@code frame}, re-encoded in {@code target}, to {@code out} (made
     * writable for their exact size); returns their length. Throws {@link IllegalStateException} when
     * the header cannot be written in {@code target}.
     */
    public static int transcodeHeader(RemotingFrame frame, SerializeType target, ByteBuf out) {
        CommandHeader header = decode(frame, HeaderKind.GENERIC);
        try {
            return header.encode(target, out);
        } finally {
            header.release();
        }
    }

    private static int typeAndLength(SerializeType type, int headerLength) {
        if (headerLength > MAX_HEADER_LENGTH) {
            throw new IllegalStateException("header of " + headerLength + " bytes does not fit the 24-bit header length");
        }
        return (type.getCode() << 24) | headerLength;
    }
}
