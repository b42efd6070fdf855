package io.rmqgw.codec.header;

import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.json.JsonToBinary;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import java.nio.charset.StandardCharsets;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * A send answer's {@code msgId} (offset ids, comma-separated for a batch) rewritten where it lies in the frame:
 * each IPv4 id gets the store host {@code mapper} maps its own to, the same number of characters, so nothing else
 * of the frame moves. The frame's bytes change; nothing is decoded, allocated or re-encoded.
 *
 * <p>A JSON answer's ids are where the frame decoder's scan of its header noted them
 * ({@link JsonToBinary#locatedValue()}), and are rewritten in that scan's copy of the header; a binary one's (or a
 * JSON one the scan left to the general reader) are searched for ({@link ExtFieldInPlace}).
 */
public final class SendAnswerInPlace {

    private static final byte[] MSG_ID = "msgId".getBytes(StandardCharsets.US_ASCII);

    private SendAnswerInPlace() {
    }

    /**
     * Rewrites the ids in {@code frame} (which must be writable) and returns true, or returns false, changing
     * nothing, when its {@code msgId} is not certainly located: absent, repeated or escaped.
     */
    public static boolean rewriteMsgIds(RemotingFrame frame, StoreHostMapper mapper) {
        JsonToBinary scan = scanOf(frame);
        byte[] header = scan != null ? scan.input() : ExtFieldInPlace.headerCopy(frame);
        long found = find(frame, scan, header);
        if (found == ExtFieldInPlace.NOT_FOUND) {
            return false;
        }
        int at = ExtFieldInPlace.index(found);
        int length = ExtFieldInPlace.length(found);
        MessageIds.rewriteListInPlace(header, at, at + length, mapper);
        frame.content().setBytes(ExtFieldInPlace.headerIndex(frame) + at, header, at, length);
        if (scan != null) {
            scan.forget(); // its binary header still holds the old ids
        }
        return true;
    }

    /**
     * Where {@link #rewriteMsgIds} finds {@code frame}'s {@code msgId} value, as an index into {@code frame.content()}
     * and a length, packed as {@link ExtFieldInPlace#find} packs them; or {@link ExtFieldInPlace#NOT_FOUND}.
     */
    static long locate(RemotingFrame frame) {
        JsonToBinary scan = scanOf(frame);
        long found = find(frame, scan, scan != null ? scan.input() : ExtFieldInPlace.headerCopy(frame));
        return found == ExtFieldInPlace.NOT_FOUND ? found
            : ExtFieldInPlace.pack(ExtFieldInPlace.headerIndex(frame) + ExtFieldInPlace.index(found),
                ExtFieldInPlace.length(found));
    }

    /** The thread's scan of a JSON frame's header (the frame decoder's, usually), or null. */
    private static JsonToBinary scanOf(RemotingFrame frame) {
        return frame.encoding() == SerializeType.JSON ? HeaderCodec.transcoded(frame) : null;
    }

    /** The value in {@code header} (the scan's input, or a copy of the frame's header): index and length, packed. */
    private static long find(RemotingFrame frame, JsonToBinary scan, byte[] header) {
        // NOT_LOCATED and NOT_FOUND are both -1, and both pack index and length alike
        return scan != null ? scan.locatedValue()
            : ExtFieldInPlace.find(header, frame.headerLength(), frame.encoding(), MSG_ID);
    }
}
