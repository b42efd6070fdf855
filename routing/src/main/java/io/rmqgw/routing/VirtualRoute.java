package io.rmqgw.routing;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.Objects;

/**
 * The route of a topic whose consumption the gateway serves on virtual queues. The real brokers stay in it
 * with their read permission taken away (perm without READ: producers send to them as before, consumers find
 * nothing to read there), and the gateway's own broker is added, read-only, with the virtual queues. Every
 * other byte of meaning is kept; the JSON is written again in the dialect the client asked for (fastjson's
 * unquoted integer map keys for old clients).
 */
public final class VirtualRoute {

    /**
     * The broker the gateway serves for virtual queues.
     *
     * @param name       its broker name in routes (never one starting {@code __syslo__}, which 5.x clients special-case)
     * @param cluster    its cluster name
     * @param address    the gateway listener clients reach it at, {@code host:port}
     * @param readQueues the virtual queues clients rebalance over
     */
    public record VirtualBroker(String name, String cluster, String address, int readQueues) {
        public VirtualBroker {
            Objects.requireNonNull(name, "name");
            Objects.requireNonNull(cluster, "cluster");
            Objects.requireNonNull(address, "address");
            if (name.startsWith("__syslo__")) {
                throw new IllegalArgumentException("5.x clients treat brokers named __syslo__* specially: " + name);
            }
            if (readQueues < 0) {
                throw new IllegalArgumentException("readQueues must not be negative, was " + readQueues);
            }
        }
    }

    private VirtualRoute() {
    }

    /**
     * The route with its real queues write-only and, unless {@code broker} is null, the virtual broker added
     * (null: no consumer finds anything to read, e.g. while the gateway's broker has no listener yet).
     *
     * @throws MalformedRouteBodyException when {@code body} is not a route body
     */
    public static byte[] rewrite(byte[] body, VirtualBroker broker, RouteDialect dialect) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(body.length + 256);
        try (JsonParser p = RouteJson.utf8Parser(body, "route");
             JsonGenerator g = RouteJson.FACTORY.createGenerator(out)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new MalformedRouteBodyException("route body is not a JSON object");
            }
            Names names = new Names(g, dialect);
            g.writeStartObject();
            boolean sawBrokers = false;
            boolean sawQueues = false;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken value = p.nextToken();
                names.write(field);
                if ("brokerDatas".equals(field)) {
                    sawBrokers = true;
                    copyArrayThen(p, g, names, value, false, () -> writeBroker(g, names, broker, dialect));
                } else if ("queueDatas".equals(field)) {
                    sawQueues = true;
                    copyArrayThen(p, g, names, value, true, () -> writeQueues(g, names, broker, dialect));
                } else {
                    copy(p, g, names, false);
                }
            }
            if (!sawBrokers) {
                names.write("brokerDatas");
                copyArrayThen(p, g, names, JsonToken.VALUE_NULL, false, () -> writeBroker(g, names, broker, dialect));
            }
            if (!sawQueues) {
                names.write("queueDatas");
                copyArrayThen(p, g, names, JsonToken.VALUE_NULL, true, () -> writeQueues(g, names, broker, dialect));
            }
            g.writeEndObject();
        } catch (MalformedRouteBodyException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new MalformedRouteBodyException("route body is not readable JSON: " + e.getMessage());
        }
        return out.toByteArray();
    }

    /** The readable real queues of a route body (sum of readQueueNums of queue data with the READ permission). */
    public static int readableQueues(byte[] body) {
        int total = 0;
        try (JsonParser p = RouteJson.utf8Parser(body, "route")) {
            boolean inQueues = false;
            int depth = 0;
            int perm = 0;
            int read = 0;
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                switch (t) {
                    case START_OBJECT, START_ARRAY -> depth++;
                    case END_OBJECT, END_ARRAY -> {
                        if (inQueues && depth == 3 && t == JsonToken.END_OBJECT) {
                            total += (perm & ClusterView.PERM_READ) != 0 ? read : 0;
                            perm = 0;
                            read = 0;
                        }
                        depth--;
                        if (depth == 1) {
                            inQueues = false;
                        }
                    }
                    case FIELD_NAME -> {
                        if (depth == 1) {
                            inQueues = "queueDatas".equals(p.currentName());
                        } else if (inQueues && depth == 3) {
                            String name = p.currentName();
                            JsonToken v = p.nextToken();
                            if (v == JsonToken.VALUE_NUMBER_INT) {
                                if ("perm".equals(name)) {
                                    perm = p.getIntValue();
                                } else if ("readQueueNums".equals(name)) {
                                    read = p.getIntValue();
                                }
                            } else if (v.isStructStart()) {
                                p.skipChildren();
                            }
                        }
                    }
                    default -> {
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            throw new MalformedRouteBodyException("route body is not readable JSON: " + e.getMessage());
        }
        return total;
    }

    /** Copies an array (or null, written as an empty array) and appends what {@code extra} writes. */
    private static void copyArrayThen(JsonParser p, JsonGenerator g, Names names, JsonToken value, boolean queueDatas,
                                      IoRunnable extra) throws IOException {
        g.writeStartArray();
        if (value == JsonToken.START_ARRAY) {
            while (p.nextToken() != JsonToken.END_ARRAY) {
                copy(p, g, names, queueDatas);
            }
        } else if (value != JsonToken.VALUE_NULL) {
            throw new MalformedRouteBodyException("route body has a " + value + " where an array belongs");
        }
        extra.run();
        g.writeEndArray();
    }

    /** Copies the value at the parser's current token; in a queue data object, {@code perm} loses READ. */
    private static void copy(JsonParser p, JsonGenerator g, Names names, boolean queueData) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.START_OBJECT) {
            g.writeStartObject();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String name = p.currentName();
                JsonToken v = p.nextToken();
                names.write(name);
                if (queueData && "perm".equals(name) && v == JsonToken.VALUE_NUMBER_INT) {
                    g.writeNumber(p.getIntValue() & ~ClusterView.PERM_READ);
                } else {
                    copy(p, g, names, false);
                }
            }
            g.writeEndObject();
        } else if (t == JsonToken.START_ARRAY) {
            g.writeStartArray();
            while (p.nextToken() != JsonToken.END_ARRAY) {
                copy(p, g, names, false);
            }
            g.writeEndArray();
        } else {
            g.copyCurrentEvent(p);
        }
    }

    private static void writeBroker(JsonGenerator g, Names names, VirtualBroker broker, RouteDialect dialect)
        throws IOException {
        if (broker == null) {
            return;
        }
        g.writeStartObject();
        names.write("brokerAddrs");
        g.writeStartObject();
        names.write("0");
        g.writeString(broker.address());
        g.writeEndObject();
        names.write("brokerName");
        g.writeString(broker.name());
        names.write("cluster");
        g.writeString(broker.cluster());
        if (dialect == RouteDialect.STANDARD) {
            names.write("enableActingMaster");
            g.writeBoolean(false);
        }
        g.writeEndObject();
    }

    private static void writeQueues(JsonGenerator g, Names names, VirtualBroker broker, RouteDialect dialect)
        throws IOException {
        if (broker == null) {
            return;
        }
        g.writeStartObject();
        names.write("brokerName");
        g.writeString(broker.name());
        names.write("perm");
        g.writeNumber(ClusterView.PERM_READ);
        names.write("readQueueNums");
        g.writeNumber(broker.readQueues());
        // fastjson's default output names the field after its getter's typo, as name servers write it
        names.write(dialect == RouteDialect.STANDARD ? "topicSysFlag" : "topicSynFlag");
        g.writeNumber(0);
        names.write("writeQueueNums");
        g.writeNumber(0);
        g.writeEndObject();
    }

    /** Writes field names as the dialect does: fastjson's default leaves integer map keys unquoted. */
    private record Names(JsonGenerator g, RouteDialect dialect) {
        @SuppressWarnings("deprecation") // per-name quoting has no non-deprecated switch in jackson-core 2.x
        void write(String name) throws IOException {
            boolean unquoted = dialect == RouteDialect.FASTJSON && !name.isEmpty() && name.chars().allMatch(Character::isDigit);
            if (unquoted) {
                g.disable(JsonGenerator.Feature.QUOTE_FIELD_NAMES);
                g.writeFieldName(name);
                g.enable(JsonGenerator.Feature.QUOTE_FIELD_NAMES);
            } else {
                g.writeFieldName(name);
            }
        }
    }

    @FunctionalInterface
    private interface IoRunnable {
        void run() throws IOException;
    }
}
