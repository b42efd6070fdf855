package io.rmqgw.codec.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.DefaultByteBufHolder;
import io.rmqgw.codec.json.ThreadScratch;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * One remoting frame as it arrived: the whole frame bytes (length prefix included) plus the
 * envelope fields read from its header. Forwarding it unchanged means writing {@link #content()}
 * as is; nothing is copied. The header's remark and extFields are decoded only on demand
 * ({@link HeaderCodec#decodeHeader(RemotingFrame)}).
 *
 * <p>Reference counted like any {@link io.netty.buffer.ByteBufHolder}: whoever holds it releases it
 * or passes it on.
 */
public final class RemotingFrame extends DefaultByteBufHolder {

    /** Bytes before the header: int32 total length + int32 serialize type and header length. */
    public static final int PREFIX_LENGTH = 8;

    private static final int RESPONSE_BIT = 1;
    private static final int ONEWAY_BIT = 1 << 1;

    private final SerializeType encoding;
    private final int headerLength;
    private final int code;
    private final LanguageCode language;
    private final int version;
    private final int opaque;
    private final int flag;
    private final int streamedBodyLength;
    /**
     * The thread's transcoder that read this frame's header (a {@code JsonToBinary} for a JSON header, a
     * {@code BinaryToJson} for a binary one) and the stamp of that result: while the transcoder still holds it
     * ({@link ThreadScratch#holds}), a later step reuses it instead of reading the header again. Set by the
     * thread handling the frame (the frame decoder's, or whichever reads the header later).
     */
    private ThreadScratch scan;
    private long scanStamp;

    RemotingFrame(ByteBuf frame, SerializeType encoding, int headerLength, int code, LanguageCode language,
                  int version, int opaque, int flag) {
        this(frame, encoding, headerLength, code, language, version, opaque, flag, 0);
    }

    private RemotingFrame(ByteBuf frame, SerializeType encoding, int headerLength, int code, LanguageCode language,
                          int version, int opaque, int flag, int streamedBodyLength) {
        super(frame);
        this.streamedBodyLength = streamedBodyLength;
        this.encoding = encoding;
        this.headerLength = headerLength;
        this.code = code;
        this.language = language;
        this.version = version;
        this.opaque = opaque;
        this.flag = flag;
    }

    public SerializeType encoding() {
        return encoding;
    }

    public int code() {
        return code;
    }

    public LanguageCode language() {
        return language;
    }

    public int version() {
        return version;
    }

    public int opaque() {
        return opaque;
    }

    public int flag() {
        return flag;
    }

    public boolean isResponse() {
        return (flag & RESPONSE_BIT) != 0;
    }

    public boolean isOneway() {
        return (flag & ONEWAY_BIT) != 0;
    }

    /**
     * For the head of a frame that streams through: the body bytes that follow it as {@link BodyChunk}s (its
     * content then holds the length prefix, still the whole frame's, and the header only). 0 for a whole frame.
     */
    public int streamedBodyLength() {
        return streamedBodyLength;
    }

    /** This frame's head, announcing {@code bodyLength} body bytes to follow as chunks. */
    RemotingFrame asHead(int bodyLength) {
        RemotingFrame head = new RemotingFrame(content(), encoding, headerLength, code, language, version, opaque, flag,
            bodyLength);
        // the header's scan stays the head's: its decode does not read the header again
        head.scan = scan;
        head.scanStamp = scanStamp;
        return head;
    }

    /** Notes {@code transcoder}'s current result as this frame's header, read. */
    void noteScan(ThreadScratch transcoder) {
        scan = transcoder;
        scanStamp = transcoder.stamp();
    }

    /** The transcoder noted by {@link #noteScan} if it still holds this frame's header (on this thread), else null. */
    ThreadScratch scan() {
        ThreadScratch t = scan;
        return t != null && t.holds(scanStamp) ? t : null;
    }

    public int headerLength() {
        return headerLength;
    }

    public int bodyLength() {
        return content().readableBytes() - PREFIX_LENGTH - headerLength;
    }

    /** The header bytes, not retained: valid while this frame is. */
    public ByteBuf headerSlice() {
        ByteBuf frame = content();
        return frame.slice(frame.readerIndex() + PREFIX_LENGTH, headerLength);
    }

    /** The body bytes, not retained: valid while this frame is. Writes go through to the frame. */
    public ByteBuf bodySlice() {
        ByteBuf frame = content();
        return frame.slice(frame.readerIndex() + PREFIX_LENGTH + headerLength, bodyLength());
    }

    /** The body as a retained slice, for a rebuilt frame that keeps the original body bytes. */
    public ByteBuf retainedBody() {
        ByteBuf frame = content();
        return frame.retainedSlice(frame.readerIndex() + PREFIX_LENGTH + headerLength, bodyLength());
    }

    @Override
    public RemotingFrame replace(ByteBuf content) {
        return new RemotingFrame(content, encoding, headerLength, code, language, version, opaque, flag,
            streamedBodyLength);
    }

    @Override
    public RemotingFrame retain() {
        super.retain();
        return this;
    }

    @Override
    public RemotingFrame retain(int increment) {
        super.retain(increment);
        return this;
    }

    @Override
    public RemotingFrame touch(Object hint) {
        super.touch(hint);
        return this;
    }

    @Override
    public String toString() {
        return (isResponse() ? "response" : "request") + "{code=" + code + ", opaque=" + opaque + ", flag=" + flag
            + ", encoding=" + encoding + ", header=" + headerLength + "B, body="
            + (streamedBodyLength > 0 ? streamedBodyLength + "B streamed" : bodyLength() + "B") + "}";
    }
}
