package io.rmqgw.routing;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamReadException;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * Rewrites the broker addresses in a name server's TopicRouteData (GET_ROUTEINFO_BY_TOPIC) or
 * ClusterInfo (GET_BROKER_CLUSTER_INFO) body. Only the address strings change: every other byte,
 * including the fastjson dialect's unquoted integer keys ({@code {0:"ip:port"}}), stays as the
 * name server wrote it, so each client still gets the dialect it asked for.
 *
 * <p>Broker addresses are the values of every {@code brokerAddrs} object and the keys of
 * {@code filterServerTable} (4.x class-filter clients look filter servers up by the broker
 * address they took from the same route). Filter server addresses themselves are left alone.
 */
public final class BrokerAddressRewriter {

    static final String BROKER_ADDRS = "brokerAddrs";
    static final String FILTER_SERVER_TABLE = "filterServerTable";

    private BrokerAddressRewriter() {
    }

    /**
     * @param body          the rewritten bytes; the very input array when nothing was replaced
     * @param brokerAddresses every real broker address found, in order of first appearance
     * @param replacements  how many address strings were replaced
     */
    public record Result(byte[] body, Set<String> brokerAddresses, int replacements) {

        public boolean changed() {
            return replacements > 0;
        }
    }

    /**
     * @param gatewayAddressOf real {@code ip:port} to the gateway {@code host:port} advertised for it,
     *                         or null to leave that address as it is; called once per distinct address
     * @throws MalformedRouteBodyException when the body is not a JSON object of the expected shape
     */
    public static Result rewrite(byte[] body, Function<String, String> gatewayAddressOf) {
        Objects.requireNonNull(body, "body");
        Objects.requireNonNull(gatewayAddressOf, "gatewayAddressOf");
        return new Scan(body, gatewayAddressOf).run();
    }

    /** Reads the buffer's readable bytes without moving its indexes or releasing it. */
    public static Result rewrite(ByteBuf body, Function<String, String> gatewayAddressOf) {
        Objects.requireNonNull(body, "body");
        // Always a copy: an unchanged result hands back this array, which must not be a pooled buffer's.
        return rewrite(ByteBufUtil.getBytes(body, body.readerIndex(), body.readableBytes(), true), gatewayAddressOf);
    }

    /** The real broker addresses in the body, in order of first appearance, without rewriting. */
    public static Set<String> brokerAddresses(byte[] body) {
        return rewrite(body, address -> null).brokerAddresses();
    }

    public static Set<String> brokerAddresses(ByteBuf body) {
        return rewrite(body, address -> null).brokerAddresses();
    }

    private record Splice(int start, int end, String replacement) {
    }

    private static final class Scan {
        private final byte[] json;
        private final Function<String, String> gatewayAddressOf;
        private final Map<String, String> decided = new HashMap<>();
        private final Set<String> found = new LinkedHashSet<>();
        private final List<Splice> splices = new ArrayList<>();

        Scan(byte[] json, Function<String, String> gatewayAddressOf) {
            this.json = json;
            this.gatewayAddressOf = gatewayAddressOf;
        }

        Result run() {
            if (json.length == 0) {
                throw new MalformedRouteBodyException("route body is empty");
            }
            try (JsonParser p = RouteJson.utf8Parser(json, "route")) {
                JsonToken first = p.nextToken();
                if (first == null) {
                    throw new MalformedRouteBodyException("route body is blank");
                }
                if (first != JsonToken.START_OBJECT) {
                    throw malformed(p, "expected a JSON object, found " + first);
                }
                while (true) {
                    JsonToken t = next(p);
                    if (t == JsonToken.FIELD_NAME) {
                        String name = p.currentName();
                        if (BROKER_ADDRS.equals(name)) {
                            scanBrokerAddrs(p);
                        } else if (FILTER_SERVER_TABLE.equals(name)) {
                            scanFilterServerTable(p);
                        }
                    } else if (t == JsonToken.END_OBJECT && p.getParsingContext().inRoot()) {
                        break;
                    }
                }
                if (p.nextToken() != null) {
                    throw malformed(p, "trailing content after the JSON object");
                }
            } catch (StreamReadException e) {
                JsonLocation at = e.getLocation();
                throw new MalformedRouteBodyException("malformed route body"
                    + (at == null ? "" : " at byte " + at.getByteOffset()) + ": " + e.getOriginalMessage(), e);
            } catch (IOException e) {
                // The source is in memory, so any other read failure (e.g. bad encoding) is the body's fault too.
                throw new MalformedRouteBodyException("malformed route body: " + e.getMessage(), e);
            }
            return new Result(splices.isEmpty() ? json : splice(), Collections.unmodifiableSet(found), splices.size());
        }

        private void scanBrokerAddrs(JsonParser p) throws IOException {
            JsonToken t = next(p);
            if (t == JsonToken.VALUE_NULL) {
                return;
            }
            if (t != JsonToken.START_OBJECT) {
                throw malformed(p, "\"brokerAddrs\" must be an object, found " + t);
            }
            while ((t = next(p)) != JsonToken.END_OBJECT) {
                String brokerId = p.currentName();
                t = next(p);
                if (t == JsonToken.VALUE_STRING) {
                    address(p.getText(), tokenStart(p));
                } else if (t != JsonToken.VALUE_NULL) {
                    throw malformed(p, "\"brokerAddrs\" entry " + brokerId + " must be an address string, found " + t);
                }
            }
        }

        private void scanFilterServerTable(JsonParser p) throws IOException {
            JsonToken t = next(p);
            if (t == JsonToken.VALUE_NULL) {
                return;
            }
            if (t != JsonToken.START_OBJECT) {
                throw malformed(p, "\"filterServerTable\" must be an object, found " + t);
            }
            while (next(p) != JsonToken.END_OBJECT) {
                address(p.currentName(), tokenStart(p));
                next(p);
                p.skipChildren();
            }
        }

        private void address(String real, int start) {
            if (json[start] != '"') {
                throw new MalformedRouteBodyException("broker address " + real + " at byte " + start + " is not a quoted string");
            }
            found.add(real);
            String replacement;
            if (decided.containsKey(real)) {
                replacement = decided.get(real);
            } else {
                replacement = gatewayAddressOf.apply(real);
                decided.put(real, replacement);
            }
            if (replacement != null && !replacement.equals(real)) {
                splices.add(new Splice(start, closingQuoteEnd(start), replacement));
            }
        }

        /** Offset just past the closing quote of the string token opening at {@code start}. */
        private int closingQuoteEnd(int start) {
            // UTF-8 continuation bytes never equal '"' or '\\', so a byte scan is exact.
            for (int i = start + 1; i < json.length; i++) {
                if (json[i] == '\\') {
                    i++;
                } else if (json[i] == '"') {
                    return i + 1;
                }
            }
            throw new MalformedRouteBodyException("unterminated string at byte " + start);
        }

        private int tokenStart(JsonParser p) {
            long offset = p.currentTokenLocation().getByteOffset();
            if (offset < 0 || offset >= json.length) {
                throw new IllegalStateException("parser reported token offset " + offset + " outside the body");
            }
            return (int) offset;
        }

        private byte[] splice() {
            ByteArrayOutputStream out = new ByteArrayOutputStream(json.length + 8 * splices.size());
            int pos = 0;
            for (Splice s : splices) {
                out.write(json, pos, s.start() - pos);
                writeJsonString(out, s.replacement());
                pos = s.end();
            }
            out.write(json, pos, json.length - pos);
            return out.toByteArray();
        }

        private static JsonToken next(JsonParser p) throws IOException {
            JsonToken t = p.nextToken();
            if (t == null) {
                throw malformed(p, "unexpected end of route body");
            }
            return t;
        }

        private static MalformedRouteBodyException malformed(JsonParser p, String what) {
            return new MalformedRouteBodyException("malformed route body at byte "
                + p.currentTokenLocation().getByteOffset() + ": " + what);
        }
    }

    private static void writeJsonString(ByteArrayOutputStream out, String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                sb.append('\\').append(c);
            } else if (c < 0x20 || Character.isSurrogate(c)) {
                // surrogates escaped: an unpaired one would otherwise be written as '?' by getBytes
                sb.append(String.format("\\u%04x", (int) c));
            } else {
                sb.append(c);
            }
        }
        out.writeBytes(sb.append('"').toString().getBytes(StandardCharsets.UTF_8));
    }
}
