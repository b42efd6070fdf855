package io.rmqgw.codec.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderKind;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.PullRequestHeader;
import io.rmqgw.codec.header.PullResponseHeader;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.header.SendResponseHeader;
import io.rmqgw.codec.name.NameValidator;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * What the fuzz targets do with every frame a decoder accepts: read its header with every reader the
 * gateway has (the generic decoder, each typed view, both transcodings) and check that what the
 * codec writes it reads back. The only exception a reader may throw is {@link MalformedFrameException};
 * whatever it allocates is released here. The frame is not released.
 */
public final class FrameChecks {

    private static final NameValidator NAMES = new NameValidator(127, 255, 255);
    private static final SerializeType[] ENCODINGS = {SerializeType.JSON, SerializeType.ROCKETMQ};

    private FrameChecks() {
    }

    public static void exercise(RemotingFrame frame, ByteBufAllocator alloc) {
        check(frame.refCnt() >= 1, "a decoded frame is alive");
        check(frame.content().readableBytes() == RemotingFrame.PREFIX_LENGTH + frame.headerLength() + frame.bodyLength(),
            "prefix, header and body add up to the frame");
        try {
            RemotingHeader header = HeaderCodec.decodeHeader(frame);
            check(header.code() == frame.code() && header.opaque() == frame.opaque() && header.flag() == frame.flag(),
                "the decoded header agrees with the envelope");
        } catch (MalformedFrameException expected) {
            // a header the envelope accepted may still hold a non-scalar remark or extFields value
        }
        for (HeaderKind kind : HeaderKind.values()) {
            CommandHeader h;
            try {
                h = HeaderTranscoder.decode(frame, kind);
            } catch (MalformedFrameException expected) {
                continue;
            }
            try {
                readEverything(h);
                check(h.code() == frame.code() && h.opaque() == frame.opaque() && h.flag() == frame.flag(),
                    "a typed header agrees with the envelope");
                for (SerializeType target : ENCODINGS) {
                    if (h.canEncode(target)) {
                        roundTrip(h, target, alloc);
                    }
                }
            } finally {
                h.release();
            }
        }
        for (SerializeType target : ENCODINGS) {
            ByteBuf out;
            try {
                out = HeaderTranscoder.transcode(alloc, frame, target);
            } catch (MalformedFrameException expected) {
                continue;
            }
            RemotingFrame again = FrameDecoder.parse(out);
            try {
                check(again.code() == frame.code() && again.opaque() == frame.opaque() && again.flag() == frame.flag(),
                    "a transcoded frame keeps its envelope");
                check(again.bodyLength() == frame.bodyLength(), "a transcoded frame keeps its body");
            } finally {
                again.release();
            }
        }
    }

    /** Encodes {@code h} in {@code target} as a whole frame and checks the codec reads it back the same. */
    private static void roundTrip(CommandHeader h, SerializeType target, ByteBufAllocator alloc) {
        ByteBuf frame = HeaderTranscoder.encodeFrame(alloc, h, target, null);
        RemotingFrame again = FrameDecoder.parse(frame);
        try {
            check(again.encoding() == target, "encoded in the encoding asked for");
            check(again.code() == h.code() && again.opaque() == h.opaque() && again.flag() == h.flag(),
                "an encoded header keeps its envelope");
            CommandHeader back = HeaderTranscoder.decode(again, h.kind());
            try {
                if (target == h.sourceEncoding()) {
                    check(Objects.equals(back.toRemotingHeader(), asWritten(h.toRemotingHeader())),
                        "re-encoding a header in its own encoding keeps it whole");
                }
            } finally {
                back.release();
            }
        } finally {
            again.release();
        }
    }

    /** The header as UTF-8 can carry it: an unpaired surrogate is written as '?' (String.getBytes does the same). */
    private static RemotingHeader asWritten(RemotingHeader h) {
        Map<String, String> ext = null;
        if (h.extFields() != null) {
            ext = new LinkedHashMap<>();
            for (Map.Entry<String, String> e : h.extFields().entrySet()) {
                ext.put(utf8(e.getKey()), utf8(e.getValue()));
            }
        }
        return new RemotingHeader(h.code(), h.language(), h.version(), h.opaque(), h.flag(), utf8(h.remark()), ext);
    }

    private static String utf8(String s) {
        return s == null ? null : new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
    }

    private static void readEverything(CommandHeader h) {
        h.toRemotingHeader();
        h.language();
        for (int i = 0; i < h.entryCount(); i++) {
            h.key(i);
            h.value(i);
        }
        h.get("topic");
        h.contains("bname");
        if (h instanceof SendRequestHeader s) {
            s.producerGroup();
            s.topic();
            s.defaultTopic();
            s.queueId();
            s.sysFlag();
            s.bornTimestamp();
            s.properties();
            s.batch();
            s.brokerName();
            s.checkTopic(NAMES);
            s.checkGroup(NAMES);
        } else if (h instanceof PullRequestHeader p) {
            p.consumerGroup();
            p.topic();
            p.queueId();
            p.queueOffset();
            p.maxMsgNums();
            p.subscription();
            p.suspendTimeoutMillis();
            p.checkTopic(NAMES);
            p.checkGroup(NAMES);
        } else if (h instanceof SendResponseHeader r) {
            r.msgId();
            r.queueId();
            r.queueOffset();
            r.transactionId();
        } else if (h instanceof PullResponseHeader r) {
            r.suggestWhichBrokerId();
            r.nextBeginOffset();
        }
    }

    static void check(boolean condition, String property) {
        if (!condition) {
            throw new AssertionError(property);
        }
    }
}
