package io.rmqgw.routing;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One route out of the routes several clusters gave for the same topic (a logical topic): their queues and brokers
 * side by side, queue ids as they are. Broker names stay unique across the union: a name an earlier cluster already
 * uses is shown as {@code CLUSTER-NAME} (and numbered if that is taken too), in the queues, the brokers, the order
 * configuration and the static-topic mappings alike; {@link Broker} tells each shown name's real one. The union is
 * written as standard JSON (quoted integer keys), which every remoting client parses, fastjson ones included.
 */
public final class RouteUnion {

    private static final ObjectMapper JSON = JsonMapper.builder()
        .enable(JsonReadFeature.ALLOW_UNQUOTED_FIELD_NAMES) // fastjson's {0:"ip:port"}
        .enable(JsonParser.Feature.ALLOW_SINGLE_QUOTES)
        .build();

    /** One cluster's answer: its key (the gateway's name for the cluster) and the route body its name server wrote. */
    public record Part(String cluster, byte[] body) {
    }

    /** A broker of the union: where it came from, the name clients see and its own. */
    public record Broker(String cluster, String shownName, String realName, Map<Long, String> addresses,
                         int writeQueueNums, int readQueueNums, int perm) {

        /** The master's address (broker id 0), or null when the route names none. */
        public String master() {
            return addresses.get(0L);
        }

        /** Whether producers may send to it (PERM_WRITE, as RocketMQ's PermName). */
        public boolean writable() {
            return (perm & 2) != 0 && writeQueueNums > 0;
        }
    }

    /** The union's body and its brokers, in the order of the parts. */
    public record Result(byte[] body, List<Broker> brokers) {
    }

    /**
     * The name clients see for the broker {@code realName} of {@code cluster}: the same for every union a gateway
     * makes (and for every gateway configured alike), so a client's broker-name-to-address table never has one name
     * for two brokers.
     */
    @FunctionalInterface
    public interface Naming {
        String shown(String cluster, String realName);
    }

    private RouteUnion() {
    }

    /**
     * The union of {@code parts} (at least one), a name taken by an earlier part shown as {@code CLUSTER-NAME}.
     * Throws {@link MalformedRouteBodyException} when a body is not a route.
     */
    public static Result of(List<Part> parts) {
        return of(parts, null);
    }

    /**
     * The union of {@code parts}, brokers named by {@code naming} (null: a name taken by an earlier part is shown as
     * {@code CLUSTER-NAME}); a name {@code naming} gives twice is numbered, so the union's names stay unique.
     */
    public static Result of(List<Part> parts, Naming naming) {
        if (parts.isEmpty()) {
            throw new IllegalArgumentException("a union needs at least one route");
        }
        ObjectNode union = JSON.createObjectNode();
        ArrayNode queues = union.putArray("queueDatas");
        ArrayNode brokers = union.putArray("brokerDatas");
        ObjectNode filterServers = union.putObject("filterServerTable");
        ObjectNode mappings = null;
        List<String> orderConf = new ArrayList<>();
        Set<String> taken = new HashSet<>();
        List<Broker> described = new ArrayList<>();
        for (Part part : parts) {
            JsonNode route = read(part);
            Map<String, String> shown = new LinkedHashMap<>();
            for (JsonNode broker : route.path("brokerDatas")) {
                String real = broker.path("brokerName").asText();
                shown.computeIfAbsent(real, r -> name(naming, part.cluster(), r, taken));
            }
            for (JsonNode queue : route.path("queueDatas")) {
                String real = queue.path("brokerName").asText();
                shown.computeIfAbsent(real, r -> name(naming, part.cluster(), r, taken));
            }
            Map<String, JsonNode> queueOf = new LinkedHashMap<>();
            for (JsonNode queue : route.path("queueDatas")) {
                ObjectNode copy = ((ObjectNode) queue).deepCopy();
                String real = queue.path("brokerName").asText();
                copy.put("brokerName", shown.get(real));
                queues.add(copy);
                queueOf.put(real, queue);
            }
            for (JsonNode broker : route.path("brokerDatas")) {
                ObjectNode copy = ((ObjectNode) broker).deepCopy();
                String real = broker.path("brokerName").asText();
                copy.put("brokerName", shown.get(real));
                brokers.add(copy);
                Map<Long, String> addresses = new LinkedHashMap<>();
                Iterator<Map.Entry<String, JsonNode>> it = broker.path("brokerAddrs").fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    try {
                        addresses.put(Long.parseLong(e.getKey().trim()), e.getValue().asText());
                    } catch (NumberFormatException nfe) {
                        throw new MalformedRouteBodyException("broker id '" + e.getKey() + "' of " + real + " in the"
                            + " route of cluster " + part.cluster() + " is not a number");
                    }
                }
                JsonNode queue = queueOf.get(real);
                described.add(new Broker(part.cluster(), shown.get(real), real, Map.copyOf(addresses),
                    queue == null ? 0 : queue.path("writeQueueNums").asInt(), queue == null ? 0
                        : queue.path("readQueueNums").asInt(), queue == null ? 0 : queue.path("perm").asInt()));
            }
            Iterator<Map.Entry<String, JsonNode>> servers = route.path("filterServerTable").fields();
            while (servers.hasNext()) {
                Map.Entry<String, JsonNode> e = servers.next();
                filterServers.set(e.getKey(), e.getValue());
            }
            String order = route.path("orderTopicConf").asText("");
            for (String entry : order.split(";")) {
                int colon = entry.indexOf(':');
                if (colon > 0) {
                    String real = entry.substring(0, colon).trim();
                    orderConf.add(shown.getOrDefault(real, real) + entry.substring(colon));
                }
            }
            JsonNode mapping = route.get("topicQueueMappingByBroker");
            if (mapping != null && mapping.isObject()) {
                mappings = mappings == null ? JSON.createObjectNode() : mappings;
                Iterator<Map.Entry<String, JsonNode>> it = mapping.fields();
                while (it.hasNext()) {
                    Map.Entry<String, JsonNode> e = it.next();
                    mappings.set(shown.getOrDefault(e.getKey(), e.getKey()), e.getValue());
                }
            }
        }
        if (!orderConf.isEmpty()) {
            union.put("orderTopicConf", String.join(";", orderConf));
        }
        if (mappings != null) {
            union.set("topicQueueMappingByBroker", mappings);
        }
        try {
            return new Result(JSON.writeValueAsBytes(union), List.copyOf(described));
        } catch (IOException e) {
            throw new IllegalStateException("writing a route union failed", e);
        }
    }

    /**
     * {@code union} (a body {@link #of} wrote) without the brokers named {@code shownNames}: their queues, broker
     * entries and order configuration; the other names stay as they were, so clients see the same brokers.
     */
    public static byte[] without(byte[] union, Set<String> shownNames) {
        if (shownNames.isEmpty()) {
            return union;
        }
        ObjectNode route = (ObjectNode) read(new Part("union", union));
        for (String field : List.of("queueDatas", "brokerDatas")) {
            Iterator<JsonNode> entries = route.get(field).elements();
            while (entries.hasNext()) {
                if (shownNames.contains(entries.next().path("brokerName").asText())) {
                    entries.remove();
                }
            }
        }
        JsonNode order = route.get("orderTopicConf");
        if (order != null) {
            List<String> kept = new ArrayList<>();
            for (String entry : order.asText("").split(";")) {
                int colon = entry.indexOf(':');
                if (colon > 0 && !shownNames.contains(entry.substring(0, colon).trim())) {
                    kept.add(entry);
                }
            }
            route.put("orderTopicConf", String.join(";", kept));
        }
        try {
            return JSON.writeValueAsBytes(route);
        } catch (IOException e) {
            throw new IllegalStateException("writing a route union failed", e);
        }
    }

    private static JsonNode read(Part part) {
        JsonNode route;
        try {
            route = JSON.readTree(part.body());
        } catch (IOException e) {
            throw new MalformedRouteBodyException("the route of cluster " + part.cluster() + " is not JSON: "
                + e.getMessage());
        }
        if (route == null || !route.isObject() || !route.path("brokerDatas").isArray()
            || !route.path("queueDatas").isArray()) {
            throw new MalformedRouteBodyException("the route of cluster " + part.cluster() + " has no brokerDatas"
                + " and queueDatas");
        }
        return route;
    }

    private static String name(Naming naming, String cluster, String real, Set<String> taken) {
        if (naming == null) {
            return unique(cluster, real, taken);
        }
        String given = naming.shown(cluster, real);
        if (taken.add(given)) {
            return given;
        }
        String candidate = given;
        for (int n = 2; !taken.add(candidate); n++) {
            candidate = given + "-" + n;
        }
        return candidate;
    }

    /** {@code real} when no earlier broker took it, else {@code cluster-real} (numbered while that is taken). */
    private static String unique(String cluster, String real, Set<String> taken) {
        if (taken.add(real)) {
            return real;
        }
        String candidate = cluster + "-" + real;
        for (int n = 2; !taken.add(candidate); n++) {
            candidate = cluster + "-" + real + "-" + n;
        }
        return candidate;
    }

    /**
     * The union of GET_BROKER_CLUSTER_INFO answers: every cluster's brokers ({@code brokerAddrTable}) under the names
     * {@code naming} gives, and its cluster names ({@code clusterAddrTable}), a cluster name an earlier part uses
     * shown as {@code CLUSTER-NAME}. Throws {@link MalformedRouteBodyException} when a body is not a cluster info.
     */
    public static byte[] clusterInfo(List<Part> parts, Naming naming) {
        ObjectNode union = JSON.createObjectNode();
        ObjectNode brokers = union.putObject("brokerAddrTable");
        ObjectNode clusters = union.putObject("clusterAddrTable");
        Set<String> taken = new HashSet<>();
        for (Part part : parts) {
            JsonNode info = readClusterInfo(part);
            Map<String, String> clusterShown = new LinkedHashMap<>();
            Iterator<Map.Entry<String, JsonNode>> cs = info.path("clusterAddrTable").fields();
            while (cs.hasNext()) {
                String real = cs.next().getKey();
                clusterShown.put(real, clusters.has(real) ? part.cluster() + "-" + real : real);
            }
            Map<String, String> brokerShown = new LinkedHashMap<>();
            Iterator<Map.Entry<String, JsonNode>> bs = info.path("brokerAddrTable").fields();
            while (bs.hasNext()) {
                Map.Entry<String, JsonNode> e = bs.next();
                String shown = name(naming, part.cluster(), e.getKey(), taken);
                brokerShown.put(e.getKey(), shown);
                ObjectNode copy = ((ObjectNode) e.getValue()).deepCopy();
                copy.put("brokerName", shown);
                String cluster = copy.path("cluster").asText(null);
                if (cluster != null) {
                    copy.put("cluster", clusterShown.getOrDefault(cluster, cluster));
                }
                brokers.set(shown, copy);
            }
            cs = info.path("clusterAddrTable").fields();
            while (cs.hasNext()) {
                Map.Entry<String, JsonNode> e = cs.next();
                ArrayNode names = clusters.putArray(clusterShown.get(e.getKey()));
                for (JsonNode n : e.getValue()) {
                    names.add(brokerShown.getOrDefault(n.asText(), n.asText()));
                }
            }
        }
        try {
            return JSON.writeValueAsBytes(union);
        } catch (IOException e) {
            throw new IllegalStateException("writing a cluster info union failed", e);
        }
    }

    /** The addresses of each broker of a GET_BROKER_CLUSTER_INFO answer, by broker name. */
    public static Map<String, List<String>> brokerAddresses(byte[] clusterInfo) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        Iterator<Map.Entry<String, JsonNode>> bs = readClusterInfo(new Part("", clusterInfo)).path("brokerAddrTable")
            .fields();
        while (bs.hasNext()) {
            Map.Entry<String, JsonNode> e = bs.next();
            List<String> addresses = new ArrayList<>();
            e.getValue().path("brokerAddrs").forEach(a -> addresses.add(a.asText()));
            out.put(e.getKey(), List.copyOf(addresses));
        }
        return out;
    }

    /**
     * {@code body} with every {@code "brokerName":"REAL"} made {@code "brokerName":"SHOWN"}: for broker answers that
     * name their broker (consume and topic stats, whose map keys are JSON objects no JSON reader takes), as they are
     * otherwise. Returns {@code body} itself when nothing matched.
     */
    public static byte[] renameBroker(byte[] body, String real, String shown) {
        byte[] from = ("\"brokerName\":\"" + real + "\"").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] to = ("\"brokerName\":\"" + shown + "\"").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        java.io.ByteArrayOutputStream out = null;
        int copied = 0;
        for (int i = 0; i <= body.length - from.length; i++) {
            if (matches(body, i, from)) {
                if (out == null) {
                    out = new java.io.ByteArrayOutputStream(body.length + 64);
                }
                out.write(body, copied, i - copied);
                out.writeBytes(to);
                copied = i + from.length;
                i = copied - 1;
            }
        }
        if (out == null) {
            return body;
        }
        out.write(body, copied, body.length - copied);
        return out.toByteArray();
    }

    private static boolean matches(byte[] body, int at, byte[] what) {
        for (int j = 0; j < what.length; j++) {
            if (body[at + j] != what[j]) {
                return false;
            }
        }
        return true;
    }

    /** The broker names of a GET_BROKER_CLUSTER_INFO answer (its {@code brokerAddrTable} keys). */
    public static Set<String> brokerNames(byte[] clusterInfo) {
        Set<String> names = new java.util.LinkedHashSet<>();
        readClusterInfo(new Part("", clusterInfo)).path("brokerAddrTable").fieldNames().forEachRemaining(names::add);
        return names;
    }

    private static JsonNode readClusterInfo(Part part) {
        JsonNode info;
        try {
            info = JSON.readTree(part.body());
        } catch (IOException e) {
            throw new MalformedRouteBodyException("the cluster info of cluster " + part.cluster() + " is not JSON: "
                + e.getMessage());
        }
        if (info == null || !info.isObject() || !info.path("brokerAddrTable").isObject()) {
            throw new MalformedRouteBodyException("the cluster info of cluster " + part.cluster()
                + " has no brokerAddrTable");
        }
        return info;
    }
}
