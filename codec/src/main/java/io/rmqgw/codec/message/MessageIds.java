package io.rmqgw.codec.message;

import io.netty.util.AsciiString;

/**
 * RocketMQ offset message ids ({@code offsetMsgId}, the {@code msgId} of a send response, what
 * clients compute for every pulled message): uppercase hex of the store host address bytes (4 for
 * IPv4, 16 for IPv6), the store host port (4 bytes) and the commit log offset (8 bytes). An IPv4 id
 * therefore has 32 hex characters: {@code IIIIIIII PPPPPPPP OOOOOOOOOOOOOOOO}; an IPv6 one 56.
 *
 * <p>An offset id names the broker that stored the message; VIEW_MESSAGE_BY_ID and the admin tools
 * decode it to find that broker. A gateway rewrites the address part so clients see the gateway's
 * address and maps it back on the way in. Parsing accepts both hex cases (RocketMQ's own decoder
 * does); ids written here are uppercase, as RocketMQ writes them.
 */
public final class MessageIds {

    /** Hex characters of an IPv4 offset id. */
    public static final int IPV4_ID_LENGTH = 32;
    /** Hex characters of an IPv6 offset id. */
    public static final int IPV6_ID_LENGTH = 56;

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();
    private static final char SEPARATOR = ',';

    private MessageIds() {
    }

    /** Whether {@code id} is an IPv4 offset id: 32 hex characters. */
    public static boolean isIpv4OffsetId(CharSequence id) {
        return id != null && id.length() == IPV4_ID_LENGTH && allHex(id, 0, IPV4_ID_LENGTH);
    }

    /**
     * The store host of an IPv4 offset id as {@link StoreHostMapper#pack packed} address, or
     * {@link StoreHostMapper#UNKNOWN} when {@code id} is not an IPv4 offset id.
     */
    public static long storeHost(CharSequence id) {
        if (!isIpv4OffsetId(id)) {
            return StoreHostMapper.UNKNOWN;
        }
        return StoreHostMapper.pack((int) hex(id, 0, 8), (int) hex(id, 8, 16));
    }

    /**
     * The commit log offset of an offset id (IPv4 or IPv6).
     *
     * @throws IllegalArgumentException when {@code id} is not an offset id
     */
    public static long commitLogOffset(CharSequence id) {
        if (id == null || (id.length() != IPV4_ID_LENGTH && id.length() != IPV6_ID_LENGTH)
            || !allHex(id, 0, id.length())) {
            throw new IllegalArgumentException("not an offset message id: " + id);
        }
        return hex(id, id.length() - 16, id.length());
    }

    /** The IPv4 offset id of the message at {@code commitLogOffset} stored by {@code ip:port}. */
    public static String create(int ip, int port, long commitLogOffset) {
        char[] out = new char[IPV4_ID_LENGTH];
        writeHex(out, 0, ip & 0xFFFFFFFFL, 8);
        writeHex(out, 8, port & 0xFFFFFFFFL, 8);
        writeHex(out, 16, commitLogOffset, 16);
        return new String(out);
    }

    /**
     * {@code offsetMsgId} with its store host replaced by what {@code mapper} maps it to, the commit
     * log offset kept. Returned unchanged (the same instance) when it is not an IPv4 offset id (IPv6
     * ids included), when the mapper does not know the address, or when the mapping is the identity.
     */
    public static String rewrite(String offsetMsgId, StoreHostMapper mapper) {
        if (!isIpv4OffsetId(offsetMsgId)) {
            return offsetMsgId;
        }
        char[] out = rewritten(offsetMsgId, 0, mapper);
        return out == null ? offsetMsgId : new String(out);
    }

    /**
     * {@link #rewrite} applied to every id of a comma-separated list (a batch send response's
     * {@code msgId} is {@code "id1,id2,..."}); separators and anything that is not an IPv4 offset id
     * are kept as they are. Returns {@code ids} itself when nothing changed.
     */
    public static String rewriteList(String ids, StoreHostMapper mapper) {
        if (ids == null) {
            return null;
        }
        if (ids.indexOf(SEPARATOR) < 0) {
            return rewrite(ids, mapper);
        }
        StringBuilder result = null;
        int length = ids.length();
        int start = 0;
        while (start <= length) {
            int end = ids.indexOf(SEPARATOR, start);
            if (end < 0) {
                end = length;
            }
            char[] replaced = end - start == IPV4_ID_LENGTH && allHex(ids, start, end) ? rewritten(ids, start, mapper) : null;
            if (replaced != null && result == null) {
                result = new StringBuilder(length).append(ids, 0, start);
            }
            if (result != null) {
                if (replaced != null) {
                    result.append(replaced);
                } else {
                    result.append(ids, start, end);
                }
                if (end < length) {
                    result.append(SEPARATOR);
                }
            }
            start = end + 1;
        }
        return result == null ? ids : result.toString();
    }

    /**
     * {@link #rewriteList} done in place on the ASCII bytes {@code ids[from, to)}: each IPv4 offset id of the
     * comma-separated list gets the store host {@code mapper} maps its own to (same length: only the first 16
     * hex characters change); everything else is kept. No String is made.
     */
    public static void rewriteListInPlace(byte[] ids, int from, int to, StoreHostMapper mapper) {
        AsciiString view = new AsciiString(ids, false);
        int start = from;
        while (start < to) {
            int end = start;
            while (end < to && ids[end] != SEPARATOR) {
                end++;
            }
            if (end - start == IPV4_ID_LENGTH && allHex(view, start, end)) {
                int ip = (int) hex(view, start, start + 8);
                int port = (int) hex(view, start + 8, start + 16);
                long mapped = mapper.map(ip, port);
                if (mapped != StoreHostMapper.UNKNOWN && mapped != StoreHostMapper.pack(ip, port)) {
                    writeHex(ids, start, StoreHostMapper.ip(mapped) & 0xFFFFFFFFL, 8);
                    writeHex(ids, start + 8, StoreHostMapper.port(mapped) & 0xFFFFFFFFL, 8);
                }
            }
            start = end + 1;
        }
    }

    /** The rewritten 32 characters of the valid IPv4 id at {@code from}, or null to keep it. */
    private static char[] rewritten(CharSequence id, int from, StoreHostMapper mapper) {
        int ip = (int) hex(id, from, from + 8);
        int port = (int) hex(id, from + 8, from + 16);
        long mapped = mapper.map(ip, port);
        if (mapped == StoreHostMapper.UNKNOWN || mapped == StoreHostMapper.pack(ip, port)) {
            return null;
        }
        char[] out = new char[IPV4_ID_LENGTH];
        writeHex(out, 0, StoreHostMapper.ip(mapped) & 0xFFFFFFFFL, 8);
        writeHex(out, 8, StoreHostMapper.port(mapped) & 0xFFFFFFFFL, 8);
        for (int i = 16; i < IPV4_ID_LENGTH; i++) {
            out[i] = id.charAt(from + i);
        }
        return out;
    }

    private static boolean allHex(CharSequence s, int from, int to) {
        for (int i = from; i < to; i++) {
            if (digit(s.charAt(i)) < 0) {
                return false;
            }
        }
        return true;
    }

    /** Up to 16 hex characters (already validated) as an unsigned value. */
    private static long hex(CharSequence s, int from, int to) {
        long value = 0;
        for (int i = from; i < to; i++) {
            value = (value << 4) | digit(s.charAt(i));
        }
        return value;
    }

    private static int digit(char c) {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        return -1;
    }

    private static void writeHex(byte[] out, int at, long value, int digits) {
        for (int i = digits - 1; i >= 0; i--) {
            out[at + i] = (byte) HEX[(int) (value & 0xF)];
            value >>>= 4;
        }
    }

    private static void writeHex(char[] out, int at, long value, int digits) {
        for (int i = digits - 1; i >= 0; i--) {
            out[at + i] = HEX[(int) (value & 0xF)];
            value >>>= 4;
        }
    }
}
