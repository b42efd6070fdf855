package io.rmqgw.codec.json;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import io.netty.buffer.ByteBuf;
import io.netty.util.concurrent.FastThreadLocal;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * One blocking jackson-core parser per thread, reused from header to header. Internal to the codec
 * (the frame envelope and the header readers share it); not API.
 *
 * <p>jackson-core has no way to point a parser at new input, and a fresh parser costs some 700
 * bytes of objects per header (parser, I/O context, parsing context, text buffer, symbol table
 * child). Here the thread's parser reads an endless {@link InputStream} that serves the current
 * header's bytes straight from its {@link ByteBuf} (heap or direct, one bulk copy into the parser's
 * own buffer) and then reports end of input. Each header is the next root-level value of that
 * stream: parsed, it leaves the parser at the root with nothing buffered, ready for the next one.
 * Headers are always read as UTF-8 (as rocketmq-remoting reads them); a leading byte order mark is
 * skipped.
 * Anything that ends a header otherwise (an error, a truncated header that ran into end of input,
 * content after the root value) discards the parser: its state is unknown. The parser is also
 * renewed after {@link #RENEW_AFTER_BYTES} of input, so its field-name table cannot grow without
 * bound from unknown keys.
 *
 * <p>Use:
 * <pre>{@code
 * JsonHeaderStream in = JsonHeaderStream.get();
 * JsonParser p = in.begin(buf, index, length);
 * try {
 *     ... read one root value ...
 *     if (!in.end()) { refuse: content after the root value }
 * } finally {
 *     in.release();
 * }
 * }</pre>
 * Not reentrant: one header at a time per thread.
 */
public final class JsonHeaderStream {

    /** Input after which the parser (and its field-name table) is replaced. */
    public static final long RENEW_AFTER_BYTES = 1L << 20;

    private static final JsonFactory FACTORY = JsonFactory.builder().build();

    // per-thread scratch, not a memo: the parser and its buffers are reused header after header (see the class doc)
    private static final FastThreadLocal<JsonHeaderStream> LOCAL = new FastThreadLocal<>() {
        @Override
        protected JsonHeaderStream initialValue() {
            return new JsonHeaderStream();
        }

        @Override
        protected void onRemoval(JsonHeaderStream stream) {
            stream.discard();
        }
    };

    private final Source source = new Source();
    private final Tail tail = new Tail();
    private JsonParser parser;
    /** Stream position (bytes handed to the parser since it was made) of the current header's first byte. */
    private long base;
    /** Bytes of the current header skipped before the parser saw it (a byte order mark). */
    private int skipped;
    private long fed;
    private boolean active;
    private boolean clean;
    private int generation;

    private JsonHeaderStream() {
    }

    /** This thread's stream. */
    public static JsonHeaderStream get() {
        return LOCAL.get();
    }

    /**
     * Positions the thread's parser before the first token of the {@code length} bytes at
     * {@code index} of {@code buf}; the bytes are read as the parser asks for them and are not
     * referenced after {@link #release()}.
     */
    public JsonParser begin(ByteBuf buf, int index, int length) throws IOException {
        if (active || parser == null || fed > RENEW_AFTER_BYTES) {
            // active: the last user neither ended nor released (it cannot have left the parser clean)
            discard();
            // created on no input, so encoding detection settles on UTF-8 whatever the first header
            // holds: a header that looked like UTF-16 or UTF-32 must not get this thread a parser for that
            parser = FACTORY.createParser(source);
            source.handed = 0;
            generation++;
        }
        // the parser has consumed everything handed to it so far: this header starts there
        base = source.handed;
        skipped = 0;
        if (length >= 3 && buf.getByte(index) == (byte) 0xEF && buf.getByte(index + 1) == (byte) 0xBB
            && buf.getByte(index + 2) == (byte) 0xBF) {
            // a UTF-8 byte order mark: skipped (as a fresh parser would), whichever header it starts
            index += 3;
            length -= 3;
            skipped = 3;
        }
        source.set(buf, index, length);
        active = true;
        clean = false;
        fed += length;
        return parser;
    }

    /**
     * Call once the root value has been read: consumes what follows it in the header if that is only
     * whitespace and returns true (the parser is then kept for the next header); returns false if
     * anything else follows.
     */
    public boolean end() throws IOException {
        tail.whitespaceOnly = true;
        parser.releaseBuffered(tail); // what the parser has read ahead (consumed, if only whitespace)
        if (!tail.whitespaceOnly || !source.restIsWhitespace()) {
            return false;
        }
        clean = true;
        return true;
    }

    /** Ends the use of the parser for this header: keeps it if {@link #end()} found the header clean, else discards it. */
    public void release() {
        source.clear();
        active = false;
        if (!clean) {
            discard();
        }
        clean = false;
    }

    /** Parsers this thread has created so far (tests check reuse and renewal). */
    public int generation() {
        return generation;
    }

    private void discard() {
        source.clear();
        if (parser != null) {
            JsonParser p = parser;
            parser = null;
            try {
                p.close();
            } catch (IOException ignored) {
                // nothing is written anywhere: closing only returns buffers
            }
        }
        fed = 0;
    }

    private static boolean isWhitespace(byte b) {
        return b == ' ' || b == '\t' || b == '\n' || b == '\r';
    }

    /** The current header's bytes, then end of input (until the next header is set). */
    private static final class Source extends InputStream {

        private ByteBuf buf;
        private int pos;
        private int end;
        /** Bytes handed out since the current parser was made. */
        long handed;

        void set(ByteBuf buf, int index, int length) {
            this.buf = buf;
            this.pos = index;
            this.end = index + length;
        }

        void clear() {
            buf = null;
            pos = end = 0;
        }

        /** Whether the bytes the parser has not fetched are all whitespace; drops them. */
        boolean restIsWhitespace() {
            for (int i = pos; i < end; i++) {
                if (!isWhitespace(buf.getByte(i))) {
                    return false;
                }
            }
            pos = end;
            return true;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            int n = Math.min(end - pos, len);
            if (n <= 0) {
                return len == 0 ? 0 : -1;
            }
            buf.getBytes(pos, b, off, n);
            pos += n;
            handed += n;
            return n;
        }

        @Override
        public int read() {
            if (pos >= end) {
                return -1;
            }
            handed++;
            return buf.getByte(pos++) & 0xFF;
        }

        @Override
        public int available() {
            return end - pos;
        }

        @Override
        public void close() {
            // the stream outlives parsers: a discarded parser closing it must not end it
        }
    }

    /** Receives the bytes the parser read ahead of the root value's end and checks they are whitespace. */
    private static final class Tail extends OutputStream {

        boolean whitespaceOnly;

        @Override
        public void write(byte[] b, int off, int len) {
            for (int i = off, e = off + len; i < e; i++) {
                if (!isWhitespace(b[i])) {
                    whitespaceOnly = false;
                    return;
                }
            }
        }

        @Override
        public void write(int b) {
            if (!isWhitespace((byte) b)) {
                whitespaceOnly = false;
            }
        }
    }
}
