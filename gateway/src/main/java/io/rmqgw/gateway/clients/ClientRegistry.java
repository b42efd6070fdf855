package io.rmqgw.gateway.clients;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.netty.channel.Channel;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Client connections by client id and by group, per broker listener, as the clients announce
 * themselves in HEART_BEAT and UNREGISTER_CLIENT requests. Lets requests that brokers send over
 * pooled connections (transaction check-back, NOTIFY_CONSUMER_IDS_CHANGED,
 * GET_CONSUMER_RUNNING_INFO) and answers the gateway composes reach the right client.
 *
 * <p>A client connection belongs to the gateway listener of one broker, so a client is keyed by
 * (broker address, client id); the same client id on another broker's listener is another entry.
 * A heartbeat carries the client's full group set (5.x "without subscription" heartbeats leave out
 * subscriptions, not groups), so each one replaces the groups recorded before. A connection is
 * forgotten when its channel closes.
 *
 * <p>Thread-safe: reads are lock-free over concurrent maps; changes (rare: a heartbeat whose client
 * or groups changed, an unregister, a close) take one lock so the indexes stay consistent.
 */
public final class ClientRegistry {

    private static final Logger log = LoggerFactory.getLogger(ClientRegistry.class);

    // Heartbeats are fastjson output; unquoted names cost nothing and match how name-server bodies are read.
    private static final JsonFactory JSON = JsonFactory.builder()
        .enable(JsonReadFeature.ALLOW_UNQUOTED_FIELD_NAMES)
        .build();

    public enum Role { PRODUCER, CONSUMER }

    /** What {@link #heartbeat} did with a body. */
    public enum Outcome {
        /** The client or its groups were new or changed. */
        RECORDED,
        /** Same connection, same groups as last time. */
        UNCHANGED,
        /** The body is not a HeartbeatData the registry can read; nothing changed (logged at debug). */
        MALFORMED
    }

    /** One client connection on one broker's listener, and the groups it last announced there. */
    public record Client(String brokerAddress, String clientId, Channel channel,
                         Set<String> producerGroups, Set<String> consumerGroups) {

        public Client {
            producerGroups = Set.copyOf(producerGroups);
            consumerGroups = Set.copyOf(consumerGroups);
        }

        public Set<String> groups(Role role) {
            return role == Role.PRODUCER ? producerGroups : consumerGroups;
        }
    }

    private record ClientKey(String brokerAddress, String clientId) {
    }

    private record GroupKey(Role role, String group) {
    }

    private final ConcurrentHashMap<ClientKey, Client> clients = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<GroupKey, Set<ClientKey>> members = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<Channel, Set<ClientKey>> byChannel = new ConcurrentHashMap<>();
    private final Object writeLock = new Object();

    /**
     * Records a HEART_BEAT request body. Does not take ownership of {@code body}: its indexes and
     * reference count are left as they were.
     *
     * @param client        the client's connection to the gateway
     * @param brokerAddress the broker whose gateway listener accepted that connection
     */
    public Outcome heartbeat(Channel client, String brokerAddress, ByteBuf body) {
        Objects.requireNonNull(client, "client");
        Objects.requireNonNull(brokerAddress, "brokerAddress");
        Heartbeat hb;
        try {
            hb = parse(body);
        } catch (IOException | RuntimeException e) {
            log.debug("heartbeat from {} for broker {} ignored: {}", client.remoteAddress(), brokerAddress, e.getMessage());
            return Outcome.MALFORMED;
        }
        ClientKey key = new ClientKey(brokerAddress, hb.clientId());
        Client next = new Client(brokerAddress, hb.clientId(), client, hb.producerGroups(), hb.consumerGroups());
        if (next.equals(clients.get(key))) {
            return Outcome.UNCHANGED;
        }
        boolean firstOnChannel;
        synchronized (writeLock) {
            Client previous = clients.put(key, next);
            if (previous != null) {
                leaveGroups(key, previous);
                if (previous.channel() != client) {
                    forgetOnChannel(previous.channel(), key);
                }
            }
            joinGroups(key, next);
            Set<ClientKey> onChannel = byChannel.get(client);
            firstOnChannel = onChannel == null;
            if (firstOnChannel) {
                onChannel = ConcurrentHashMap.newKeySet();
                byChannel.put(client, onChannel);
            }
            onChannel.add(key);
        }
        if (firstOnChannel) {
            // Outside the lock: on a channel already closed the listener runs at once.
            client.closeFuture().addListener(f -> closed(client));
        }
        return Outcome.RECORDED;
    }

    /**
     * Records an UNREGISTER_CLIENT request: the client leaves the named groups (either may be null)
     * on this connection's broker. The connection itself stays known until it closes.
     *
     * @return whether the client was in one of those groups
     */
    public boolean unregister(Channel client, String clientId, String producerGroup, String consumerGroup) {
        Objects.requireNonNull(client, "client");
        if (clientId == null) {
            return false;
        }
        synchronized (writeLock) {
            Set<ClientKey> onChannel = byChannel.get(client);
            if (onChannel == null) {
                return false;
            }
            boolean changed = false;
            for (ClientKey key : onChannel) {
                Client current = clients.get(key);
                if (!key.clientId().equals(clientId) || current == null || current.channel() != client) {
                    continue;
                }
                Set<String> producers = new HashSet<>(current.producerGroups());
                Set<String> consumers = new HashSet<>(current.consumerGroups());
                if (producers.remove(producerGroup) | consumers.remove(consumerGroup)) {
                    leaveGroups(key, current);
                    Client next = new Client(key.brokerAddress(), clientId, client, producers, consumers);
                    clients.put(key, next);
                    joinGroups(key, next);
                    changed = true;
                }
            }
            return changed;
        }
    }

    // ---- queries ----

    /** The client id the heartbeats on {@code channel} named (one of them if several clients share it), or null before any. */
    public String clientIdOf(Channel channel) {
        Set<ClientKey> keys = byChannel.get(channel);
        if (keys == null) {
            return null;
        }
        for (ClientKey key : keys) {
            return key.clientId();
        }
        return null;
    }

    /** The open connection a client heartbeats on for this broker. */
    public Optional<Channel> connection(String brokerAddress, String clientId) {
        return client(brokerAddress, clientId).map(Client::channel).filter(Channel::isActive);
    }

    public Optional<Client> client(String brokerAddress, String clientId) {
        return Optional.ofNullable(clients.get(new ClientKey(brokerAddress, clientId)));
    }

    /** Ids of the clients in the group with this role, on any broker. */
    public Set<String> clientsOfGroup(Role role, String group) {
        Set<String> ids = new HashSet<>();
        for (ClientKey key : members.getOrDefault(new GroupKey(role, group), Set.of())) {
            ids.add(key.clientId());
        }
        return ids;
    }

    /** Ids of the clients in the group as producers or consumers, on any broker. */
    public Set<String> clientsOfGroup(String group) {
        Set<String> ids = clientsOfGroup(Role.PRODUCER, group);
        ids.addAll(clientsOfGroup(Role.CONSUMER, group));
        return ids;
    }

    /** Open connections of the group's clients with this role on this broker's listener. */
    public List<Channel> connectionsOfGroup(Role role, String group, String brokerAddress) {
        List<Channel> out = new ArrayList<>();
        for (ClientKey key : members.getOrDefault(new GroupKey(role, group), Set.of())) {
            Client c = key.brokerAddress().equals(brokerAddress) ? clients.get(key) : null;
            if (c != null && c.channel().isActive() && !out.contains(c.channel())) {
                out.add(c.channel());
            }
        }
        return out;
    }

    /** Open connections of the group's producers and consumers on this broker's listener. */
    public List<Channel> connectionsOfGroup(String group, String brokerAddress) {
        List<Channel> out = connectionsOfGroup(Role.PRODUCER, group, brokerAddress);
        for (Channel ch : connectionsOfGroup(Role.CONSUMER, group, brokerAddress)) {
            if (!out.contains(ch)) {
                out.add(ch);
            }
        }
        return out;
    }

    /** Known client connections, one per (broker, client id). */
    public int size() {
        return clients.size();
    }

    // ---- index upkeep, under writeLock ----

    private void closed(Channel channel) {
        synchronized (writeLock) {
            Set<ClientKey> onChannel = byChannel.remove(channel);
            if (onChannel == null) {
                return;
            }
            for (ClientKey key : onChannel) {
                Client current = clients.get(key);
                // The client may have moved to a newer connection already; that entry stays.
                if (current != null && current.channel() == channel) {
                    clients.remove(key);
                    leaveGroups(key, current);
                }
            }
        }
    }

    private void forgetOnChannel(Channel channel, ClientKey key) {
        Set<ClientKey> onChannel = byChannel.get(channel);
        if (onChannel != null) {
            onChannel.remove(key);
        }
    }

    private void joinGroups(ClientKey key, Client client) {
        for (Role role : Role.values()) {
            for (String group : client.groups(role)) {
                members.computeIfAbsent(new GroupKey(role, group), g -> ConcurrentHashMap.newKeySet()).add(key);
            }
        }
    }

    private void leaveGroups(ClientKey key, Client client) {
        for (Role role : Role.values()) {
            for (String group : client.groups(role)) {
                GroupKey g = new GroupKey(role, group);
                Set<ClientKey> set = members.get(g);
                if (set != null && set.remove(key) && set.isEmpty()) {
                    members.remove(g);
                }
            }
        }
    }

    // ---- HeartbeatData body ----

    private record Heartbeat(String clientId, Set<String> producerGroups, Set<String> consumerGroups) {
    }

    /** Streams the body once, keeping only the client id and group names; no tree is built. */
    private static Heartbeat parse(ByteBuf body) throws IOException {
        if (body == null || !body.isReadable()) {
            throw new IOException("empty body");
        }
        try (JsonParser p = body.hasArray()
            ? JSON.createParser(body.array(), body.arrayOffset() + body.readerIndex(), body.readableBytes())
            : JSON.createParser((InputStream) new ByteBufInputStream(body.duplicate()))) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new IOException("not a JSON object");
            }
            String clientId = null;
            Set<String> producers = new HashSet<>();
            Set<String> consumers = new HashSet<>();
            for (JsonToken t = next(p); t != JsonToken.END_OBJECT; t = next(p)) {
                String field = p.currentName();
                t = next(p);
                switch (field) {
                    case "clientID" -> {
                        if (t != JsonToken.VALUE_STRING) {
                            throw new IOException("clientID is " + t);
                        }
                        clientId = p.getText();
                    }
                    case "producerDataSet" -> groups(p, field, producers);
                    case "consumerDataSet" -> groups(p, field, consumers);
                    default -> p.skipChildren();
                }
            }
            if (clientId == null || clientId.isBlank()) {
                throw new IOException("no clientID");
            }
            return new Heartbeat(clientId, producers, consumers);
        }
    }

    /** An array of objects (or null), each naming a {@code groupName}; other fields are skipped. */
    private static void groups(JsonParser p, String field, Set<String> into) throws IOException {
        if (p.currentToken() == JsonToken.VALUE_NULL) {
            return;
        }
        if (p.currentToken() != JsonToken.START_ARRAY) {
            throw new IOException(field + " is " + p.currentToken());
        }
        for (JsonToken t = next(p); t != JsonToken.END_ARRAY; t = next(p)) {
            if (t != JsonToken.START_OBJECT) {
                throw new IOException(field + " entry is " + t);
            }
            String group = null;
            while (next(p) != JsonToken.END_OBJECT) {
                String name = p.currentName();
                JsonToken value = next(p);
                if ("groupName".equals(name) && value == JsonToken.VALUE_STRING) {
                    group = p.getText();
                } else {
                    p.skipChildren();
                }
            }
            if (group == null || group.isEmpty()) {
                throw new IOException(field + " entry without a groupName");
            }
            into.add(group);
        }
    }

    private static JsonToken next(JsonParser p) throws IOException {
        JsonToken t = p.nextToken();
        if (t == null) {
            throw new IOException("body ends early");
        }
        return t;
    }
}
