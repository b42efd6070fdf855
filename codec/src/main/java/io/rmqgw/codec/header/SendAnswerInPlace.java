package io.rmqgw.codec.header;

import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import java.nio.charset.StandardCharsets;

/**
 * A send answer's {@code msgId} (offset ids, comma-separated for a batch) rewritten where it lies in the frame:
 * each IPv4 id gets the store host {@code mapper} maps its own to, the same number of characters, so nothing else
 * of the frame moves. The frame's bytes change; nothing is decoded, allocated or re-encoded.
 */
public final class SendAnswerInPlace {

    private static final byte[] MSG_ID = "msgId".getBytes(StandardCharsets.US_ASCII);

    private SendAnswerInPlace() {
    }

    /**
     * Rewrites the ids in {@code frame} (which must be writable) and returns true, or returns false, changing
     * nothing, when its {@code msgId} is not certainly located ({@link ExtFieldInPlace}): absent, repeated or escaped.
     */
    public static boolean rewriteMsgIds(RemotingFrame frame, StoreHostMapper mapper) {
        byte[] header = ExtFieldInPlace.headerCopy(frame);
        long found = ExtFieldInPlace.find(header, frame.headerLength(), frame.encoding(), MSG_ID);
        if (found == ExtFieldInPlace.NOT_FOUND) {
            return false;
        }
        int at = ExtFieldInPlace.index(found);
        int length = ExtFieldInPlace.length(found);
        MessageIds.rewriteListInPlace(header, at, at + length, mapper);
        frame.content().setBytes(ExtFieldInPlace.headerIndex(frame) + at, header, at, length);
        return true;
    }
}
