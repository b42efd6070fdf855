package io.rmqgw.routing;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.exc.StreamReadException;
import io.rmqgw.routing.ClusterView.Broker;
import io.rmqgw.routing.ClusterView.Queues;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads the parts of TopicRouteData and ClusterInfo bodies the {@link ClusterView} keeps, in both
 * dialects (standard JSON and fastjson's unquoted integer keys), with the same streaming parser
 * configuration as {@link BrokerAddressRewriter}. Fields it does not keep are skipped unread.
 */
final class RouteBodyReader {

    /** {@code cluster} is null when a BrokerData did not name one. */
    record Route(List<Queues> queues, List<Broker> brokers) {
    }

    /** @param clusters cluster name to the broker names clusterAddrTable lists for it */
    record Cluster(List<Broker> brokers, Map<String, Set<String>> clusters) {
    }

    private RouteBodyReader() {
    }

    /** @throws MalformedRouteBodyException when the body is not a TopicRouteData JSON object */
    static Route readRoute(byte[] body) {
        List<Queues> queues = new ArrayList<>();
        List<Broker> brokers = new ArrayList<>();
        readObject(body, "route", (p, field) -> {
            switch (field) {
                case "queueDatas" -> readArray(p, field, () -> queues.add(readQueues(p)));
                case "brokerDatas" -> readArray(p, field, () -> brokers.add(readBroker(p)));
                default -> p.skipChildren();
            }
        });
        return new Route(queues, brokers);
    }

    /** @throws MalformedRouteBodyException when the body is not a ClusterInfo JSON object */
    static Cluster readClusterInfo(byte[] body) {
        List<Broker> brokers = new ArrayList<>();
        Map<String, Set<String>> clusters = new LinkedHashMap<>();
        readObject(body, "cluster info", (p, field) -> {
            switch (field) {
                case "brokerAddrTable" -> readMap(p, field, name -> {
                    Broker broker = readBroker(p);
                    if (!name.equals(broker.name())) {
                        throw malformed(p, "brokerAddrTable entry " + name + " holds broker " + broker.name());
                    }
                    brokers.add(broker);
                });
                case "clusterAddrTable" -> readMap(p, field, cluster -> {
                    Set<String> names = new LinkedHashSet<>();
                    readArray(p, "clusterAddrTable." + cluster, () -> names.add(string(p, "broker name")));
                    clusters.put(cluster, names);
                });
                default -> p.skipChildren();
            }
        });
        return new Cluster(brokers, clusters);
    }

    private static Queues readQueues(JsonParser p) throws IOException {
        expect(p, JsonToken.START_OBJECT, "queue data");
        String brokerName = null;
        int read = 0;
        int write = 0;
        int perm = 0;
        int sysFlag = 0;
        while (next(p) != JsonToken.END_OBJECT) {
            String field = p.currentName();
            next(p);
            switch (field) {
                case "brokerName" -> brokerName = string(p, field);
                case "readQueueNums" -> read = count(p, field);
                case "writeQueueNums" -> write = count(p, field);
                case "perm" -> perm = integer(p, field);
                case "topicSysFlag" -> sysFlag = integer(p, field);
                default -> p.skipChildren();
            }
        }
        if (brokerName == null) {
            throw malformed(p, "queue data without a brokerName");
        }
        return new Queues(brokerName, read, write, perm, sysFlag);
    }

    private static Broker readBroker(JsonParser p) throws IOException {
        expect(p, JsonToken.START_OBJECT, "broker data");
        String cluster = null;
        String name = null;
        Map<Long, String> addresses = new LinkedHashMap<>();
        while (next(p) != JsonToken.END_OBJECT) {
            String field = p.currentName();
            next(p);
            switch (field) {
                case "cluster" -> cluster = p.currentToken() == JsonToken.VALUE_NULL ? null : string(p, field);
                case "brokerName" -> name = string(p, field);
                case "brokerAddrs" -> readMap(p, field, id -> {
                    long brokerId;
                    try {
                        brokerId = Long.parseLong(id);
                    } catch (NumberFormatException e) {
                        throw malformed(p, "\"brokerAddrs\" key " + id + " is not a broker id");
                    }
                    if (p.currentToken() != JsonToken.VALUE_NULL) {
                        addresses.put(brokerId, string(p, "\"brokerAddrs\" entry " + id));
                    }
                });
                default -> p.skipChildren();
            }
        }
        if (name == null) {
            throw malformed(p, "broker data without a brokerName");
        }
        return new Broker(name, cluster, addresses);
    }

    private interface FieldReader {
        void read(JsonParser p, String field) throws IOException;
    }

    private interface EntryReader {
        void read(String key) throws IOException;
    }

    private interface ElementReader {
        void read() throws IOException;
    }

    private static void readObject(byte[] body, String what, FieldReader fields) {
        if (body.length == 0) {
            throw new MalformedRouteBodyException(what + " body is empty");
        }
        try (JsonParser p = RouteJson.utf8Parser(body, what)) {
            JsonToken first = p.nextToken();
            if (first != JsonToken.START_OBJECT) {
                throw first == null ? new MalformedRouteBodyException(what + " body is blank")
                    : malformed(p, what + " body must be a JSON object, found " + first);
            }
            while (next(p) != JsonToken.END_OBJECT) {
                String field = p.currentName();
                next(p);
                fields.read(p, field);
            }
            if (p.nextToken() != null) {
                throw malformed(p, "trailing content after the " + what + " object");
            }
        } catch (StreamReadException e) {
            JsonLocation at = e.getLocation();
            throw new MalformedRouteBodyException("malformed " + what + " body"
                + (at == null ? "" : " at byte " + at.getByteOffset()) + ": " + e.getOriginalMessage(), e);
        } catch (IOException e) {
            throw new MalformedRouteBodyException("malformed " + what + " body: " + e.getMessage(), e);
        }
    }

    /** Current token opens an array (or is null: nothing); reads each element. */
    private static void readArray(JsonParser p, String what, ElementReader element) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return;
        }
        expect(p, JsonToken.START_ARRAY, '"' + what + '"');
        while (next(p) != JsonToken.END_ARRAY) {
            element.read();
        }
    }

    /** Current token opens an object (or is null: nothing); reads each value after its key. */
    private static void readMap(JsonParser p, String what, EntryReader entry) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return;
        }
        expect(p, JsonToken.START_OBJECT, '"' + what + '"');
        while (next(p) != JsonToken.END_OBJECT) {
            String key = p.currentName();
            next(p);
            entry.read(key);
        }
    }

    private static String string(JsonParser p, String what) throws IOException {
        expect(p, JsonToken.VALUE_STRING, what);
        return p.getText();
    }

    private static int integer(JsonParser p, String what) throws IOException {
        expect(p, JsonToken.VALUE_NUMBER_INT, what);
        if (p.getNumberType() != JsonParser.NumberType.INT) {
            throw malformed(p, what + " " + p.getText() + " is out of range");
        }
        return p.getIntValue();
    }

    private static int count(JsonParser p, String what) throws IOException {
        int n = integer(p, what);
        if (n < 0) {
            throw malformed(p, what + " must not be negative, was " + n);
        }
        return n;
    }

    private static void expect(JsonParser p, JsonToken expected, String what) {
        if (p.currentToken() != expected) {
            throw malformed(p, what + " must be " + describe(expected) + ", found " + p.currentToken());
        }
    }

    private static String describe(JsonToken t) {
        return switch (t) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            default -> t.toString();
        };
    }

    private static JsonToken next(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == null) {
            throw malformed(p, "unexpected end of body");
        }
        return t;
    }

    private static MalformedRouteBodyException malformed(JsonParser p, String what) {
        return new MalformedRouteBodyException("malformed body at byte " + p.currentTokenLocation().getByteOffset() + ": " + what);
    }
}
