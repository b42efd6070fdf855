package io.rmqgw.codec.header;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.json.BinaryToJson;
import io.rmqgw.codec.json.JsonToBinary;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Typed header decoding and per-frame transcoding between the JSON and ROCKETMQ binary header
 * encodings. Reflection-free, regex-free, no boxing. A JSON header is read in one pass that writes its
 * binary form ({@link JsonToBinary}; the frame decoder already did it for the frame it just read, so a
 * decode right after reuses that), with jackson only for the unusual headers that pass leaves to it;
 * a binary header is read by offsets and rendered as JSON in one pass ({@link BinaryToJson}). A frame
 * re-encoded without a typed view ({@link #transcode}, {@link #writeTranscodedHead}) never becomes a
 * {@link CommandHeader}: header bytes in, header bytes out.
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
    /**
     * A re-encoded frame's body up to this size is copied behind its new head: one buffer costs less to write
     * and free than a two-part composite (its components, its nio buffers, the retained slice) until the copy
     * itself grows larger. Bigger bodies are never copied.
     */
    static final int COPY_BODY_LIMIT = 2048;

    private HeaderTranscoder() {
    }

    /**
     * Decodes {@code header} (the header bytes only, not released) in {@code type} as {@code kind}; the
     * general JSON reader's image, for a header the single pass leaves to it, comes from {@code alloc}.
     */
    public static CommandHeader decode(SerializeType type, ByteBuf header, HeaderKind kind, ByteBufAllocator alloc) {
        if (type == SerializeType.ROCKETMQ) {
            return BinaryHeaderReader.read(header, kind);
        }
        JsonToBinary t = JsonToBinary.get();
        return t.transcode(header, header.readerIndex(), header.readableBytes()) ? BinaryHeaderReader.read(t, kind)
            : JsonHeaderReader.read(header, kind, alloc);
    }

    /** Decodes the frame's header as {@code kind}. */
    public static CommandHeader decode(RemotingFrame frame, HeaderKind kind) {
        ByteBuf content = frame.content();
        int index = content.readerIndex() + RemotingFrame.PREFIX_LENGTH;
        if (frame.encoding() == SerializeType.ROCKETMQ) {
            return BinaryHeaderReader.read(content, index, frame.headerLength(), kind);
        }
        JsonToBinary t = HeaderCodec.transcoded(frame);
        return t != null ? BinaryHeaderReader.read(t, kind)
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
            return header.writeBinaryFrameHead(out, 4 + length + bodyLength, typeAndLength(type, length));
        }
        BinaryToJson json = header.renderJson();
        return writeHead(json.bytes(), json.length(), type, bodyLength, out);
    }

    /** A new buffer, exactly sized, holding the frame prefix and the header in {@code type}. */
    public static ByteBuf encodeFrameHead(ByteBufAllocator alloc, CommandHeader header, SerializeType type, int bodyLength) {
        if (type == SerializeType.ROCKETMQ) {
            header.requireEncodable(type);
            int length = header.binaryLength();
            int prefix = typeAndLength(type, length);
            ByteBuf out = alloc.buffer(RemotingFrame.PREFIX_LENGTH + length);
            header.writeBinaryFrameHead(out, 4 + length + bodyLength, prefix);
            return out;
        }
        BinaryToJson json = header.renderJson();
        int length = json.length();
        typeAndLength(type, length); // refuses an oversized header before anything is allocated
        ByteBuf out = alloc.buffer(RemotingFrame.PREFIX_LENGTH + length);
        writeHead(json.bytes(), length, type, bodyLength, out);
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
        return withBody(alloc, head, body);
    }

    /** {@code head} followed by {@code body} (may be null or empty); takes ownership of both. */
    static ByteBuf withBody(ByteBufAllocator alloc, ByteBuf head, ByteBuf body) {
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

    /**
     * Whether the frame's header can be written in {@code target}: the binary header holds code and
     * version in 16 bits, so POP_MESSAGE (200050) and friends stay JSON.
     */
    public static boolean canTranscode(RemotingFrame frame, SerializeType target) {
        return target != SerializeType.ROCKETMQ || frame.encoding() == SerializeType.ROCKETMQ
            || (frame.code() == (short) frame.code() && frame.version() == (short) frame.version());
    }

    /**
     * The frame with its header re-encoded in {@code target} and its body kept: a body of up to
     * {@link #COPY_BODY_LIMIT} bytes copied into the new head's buffer (exactly sized), a larger one not copied
     * (a retained slice of it, with the head a two-part composite). A frame already in {@code target}, or one whose header cannot be written in it (see
     * {@link #canTranscode}), comes back as it is (a retained duplicate): check the result's serialize
     * type byte if it matters. {@code frame} is not released.
     */
    public static ByteBuf transcode(ByteBufAllocator alloc, RemotingFrame frame, SerializeType target) {
        if (frame.encoding() == target || !canTranscode(frame, target)) {
            return frame.content().retainedDuplicate();
        }
        ByteBuf head;
        byte[] bytes = transcodedHeader(frame, target);
        if (bytes != null) {
            int length = transcodedLength(target);
            typeAndLength(target, length); // refuses an oversized header before anything is allocated
            int bodyLength = frame.bodyLength();
            boolean copyBody = bodyLength <= COPY_BODY_LIMIT;
            head = alloc.buffer(RemotingFrame.PREFIX_LENGTH + length + (copyBody ? bodyLength : 0));
            writeTranscodedHead(bytes, length, target, bodyLength, head);
            if (copyBody) {
                ByteBuf content = frame.content();
                return head.writeBytes(content, content.readerIndex() + RemotingFrame.PREFIX_LENGTH + frame.headerLength(),
                    bodyLength);
            }
        } else {
            CommandHeader header = decode(frame, HeaderKind.GENERIC); // the general reader's header
            try {
                head = encodeFrameHead(alloc, header, target, frame.bodyLength());
            } finally {
                header.release();
            }
        }
        return withBody(alloc, head, frame.retainedBody());
    }

    /**
     * Writes the frame prefix and the frame's header re-encoded in {@code target} to {@code out}, for
     * the frame's own body (which the caller sends after it); returns the bytes written. Throws
     * {@link IllegalStateException} when the header cannot be written in {@code target}. Neither
     * {@code frame} nor {@code out} is released.
     */
    public static int writeTranscodedHead(RemotingFrame frame, SerializeType target, ByteBuf out) {
        if (!canTranscode(frame, target)) {
            throw new IllegalStateException("code " + frame.code() + " / version " + frame.version()
                + " does not fit the binary header");
        }
        if (frame.encoding() == target) {
            ByteBuf content = frame.content();
            out.writeBytes(content, content.readerIndex(), RemotingFrame.PREFIX_LENGTH + frame.headerLength());
            return RemotingFrame.PREFIX_LENGTH + frame.headerLength();
        }
        byte[] bytes = transcodedHeader(frame, target);
        if (bytes != null) {
            return writeTranscodedHead(bytes, transcodedLength(target), target, frame.bodyLength(), out);
        }
        CommandHeader header = decode(frame, HeaderKind.GENERIC);
        try {
            return writeFrameHead(header, target, frame.bodyLength(), out);
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

    /**
     * The frame's header in {@code target} (the other encoding) in a thread's transcoder array (binary:
     * from {@link JsonToBinary#HEAD_ROOM} on; JSON: from 0), its length then given by
     * {@link #transcodedLength}; null when the header needs the general reader.
     * Throws {@link io.rmqgw.codec.frame.MalformedFrameException} for a binary header whose lengths run
     * past it.
     */
    private static byte[] transcodedHeader(RemotingFrame frame, SerializeType target) {
        if (target == SerializeType.ROCKETMQ) {
            JsonToBinary t = HeaderCodec.transcoded(frame);
            return t == null ? null : t.bytes();
        }
        BinaryToJson json = HeaderCodec.loaded(frame); // the frame decoder's copy, usually
        if (!json.renderLoaded()) {
            // the frame decoder checked every length of a binary header: only a frame built past it gets here
            throw new io.rmqgw.codec.frame.MalformedFrameException(io.rmqgw.codec.frame.MalformedReason.TRUNCATED_BINARY_FIELD,
                "binary header lengths run past the header");
        }
        return json.bytes();
    }

    private static int transcodedLength(SerializeType target) {
        return target == SerializeType.ROCKETMQ ? JsonToBinary.get().length() : BinaryToJson.get().length();
    }

    /**
     * Writes the frame prefix and a transcoder's result ({@link #transcodedHeader}) to {@code out}; returns the
     * bytes written. A binary header has room for the prefix in front of it in its array: one copy.
     */
    private static int writeTranscodedHead(byte[] header, int length, SerializeType type, int bodyLength, ByteBuf out) {
        if (type != SerializeType.ROCKETMQ) {
            return writeHead(header, length, type, bodyLength, out);
        }
        int prefix = typeAndLength(type, length);
        int n = RemotingFrame.PREFIX_LENGTH + length;
        INT.set(header, JsonToBinary.HEAD_ROOM - 8, 4 + length + bodyLength);
        INT.set(header, JsonToBinary.HEAD_ROOM - 4, prefix);
        out.writeBytes(header, JsonToBinary.HEAD_ROOM - 8, n);
        return n;
    }

    private static final java.lang.invoke.VarHandle INT =
        java.lang.invoke.MethodHandles.byteArrayViewVarHandle(int[].class, java.nio.ByteOrder.BIG_ENDIAN);

    /** Writes the frame prefix and {@code header[0, length)} in {@code type} to {@code out}; returns the bytes written. */
    private static int writeHead(byte[] header, int length, SerializeType type, int bodyLength, ByteBuf out) {
        int prefix = typeAndLength(type, length);
        out.ensureWritable(RemotingFrame.PREFIX_LENGTH + length);
        out.writeInt(4 + length + bodyLength);
        out.writeInt(prefix);
        out.writeBytes(header, 0, length);
        return RemotingFrame.PREFIX_LENGTH + length;
    }

    private static int typeAndLength(SerializeType type, int headerLength) {
        if (headerLength > MAX_HEADER_LENGTH) {
            throw new IllegalStateException("header of " + headerLength + " bytes does not fit the 24-bit header length");
        }
        return (type.getCode() << 24) | headerLength;
    }
}
