package io.rmqgw.codec.frame;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * Recognizes the protocols people point at a remoting port by mistake (a browser or curl, an HTTP
 * health check, a TLS client), whose first bytes read as an absurd frame length, so the log says
 * what happened instead of only "frame too long".
 */
final class ForeignProtocol {

    private static final List<String> HTTP_METHODS =
        List.of("GET ", "POST ", "PUT ", "HEAD ", "DELETE ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE ", "PRI * HTTP/2");
    private static final int QUOTED = 60;

    private ForeignProtocol() {
    }

    /** What the bytes from {@code start} look like if not remoting, or null. Does not move any index. */
    static String describe(ByteBuf in, int start) {
        int available = in.writerIndex() - start;
        if (available >= 3 && in.getByte(start) == 0x16 && in.getByte(start + 1) == 0x03) {
            return "a TLS handshake on a remoting port: rmqgw speaks plain TCP here";
        }
        for (String method : HTTP_METHODS) {
            if (startsWith(in, start, available, method)) {
                return "an HTTP request (\"" + firstLine(in, start, available)
                    + "\") on a remoting port: RocketMQ clients speak the remoting protocol here; HTTP is on the admin port";
            }
        }
        return null;
    }

    private static boolean startsWith(ByteBuf in, int start, int available, String ascii) {
        if (available < ascii.length()) {
            return false;
        }
        for (int i = 0; i < ascii.length(); i++) {
            if (in.getByte(start + i) != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    private static String firstLine(ByteBuf in, int start, int available) {
        int end = start;
        int limit = start + Math.min(available, QUOTED);
        while (end < limit && in.getByte(end) != '\r' && in.getByte(end) != '\n') {
            end++;
        }
        String line = in.toString(start, end - start, StandardCharsets.US_ASCII).replaceAll("[^\\x20-\\x7e]", "?");
        return end == limit && limit < start + available ? line + "..." : line;
    }
}
