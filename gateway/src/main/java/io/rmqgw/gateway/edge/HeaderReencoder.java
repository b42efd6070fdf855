package io.rmqgw.gateway.edge;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.metrics.GatewayMetrics;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * Re-encodes a frame's header into the encoding its receiver should get, keeping the body bytes
 * (not copied) and every header field exactly. A frame already in that encoding leaves as the
 * bytes it arrived as. Codes too large for the binary header (POP and friends, above 32767) stay
 * JSON: the binary encoding cannot carry them.
 */
public final class HeaderReencoder {

    private HeaderReencoder() {
    }

    /**
     * The frame's bytes in {@code target} (null: unchanged). Takes ownership of {@code frame} and of
     * {@code decoded} (a header already decoded from it, or null).
     */
    public static ByteBuf reencode(ByteBufAllocator alloc, GatewayMetrics metrics, RemotingFrame frame,
                                   CommandHeader decoded, SerializeType target) {
        SerializeType source = frame.encoding();
        if (target == null || target == source) {
            if (decoded != null) {
                decoded.release();
            }
            return frame.content();
        }
        try {
            if (decoded == null) {
                // nothing typed needed: header bytes transcoded in one pass, no header object
                if (!HeaderTranscoder.canTranscode(frame, target)) {
                    return frame.content().retain();
                }
                ByteBuf out = HeaderTranscoder.transcode(alloc, frame, target);
                metrics.headerConverted(source, target);
                return out;
            }
            try {
                if (!decoded.canEncode(target)) {
                    return frame.content().retain();
                }
                ByteBuf out = HeaderTranscoder.encodeFrame(alloc, decoded, target, frame.retainedBody());
                metrics.headerConverted(source, target);
                return out;
            } finally {
                decoded.release();
            }
        } finally {
            frame.release();
        }
    }

    /**
     * The frame with {@code header} (decoded from it, then changed) written in {@code target} (null:
     * the frame's own encoding) and its body kept. Takes ownership of {@code frame} and {@code header}.
     */
    public static ByteBuf rebuild(ByteBufAllocator alloc, GatewayMetrics metrics, RemotingFrame frame,
                                  CommandHeader header, SerializeType target) {
        SerializeType source = frame.encoding();
        SerializeType encoding = target == null || !header.canEncode(target) ? source : target;
        try {
            ByteBuf out = HeaderTranscoder.encodeFrame(alloc, header, encoding, frame.retainedBody());
            if (encoding != source) {
                metrics.headerConverted(source, encoding);
            }
            return out;
        } finally {
            header.release();
            frame.release();
        }
    }
}
