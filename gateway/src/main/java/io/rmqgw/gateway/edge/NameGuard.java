package io.rmqgw.gateway.edge;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufInputStream;
import io.rmqgw.codec.frame.HeaderCodec;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.PullRequestHeader;
import io.rmqgw.codec.header.SendRequestHeader;
import io.rmqgw.codec.name.NameCheck;
import io.rmqgw.codec.name.NameValidator;
import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

/**
 * Checks topic and group names before a request reaches a broker, as brokers check them (a
 * 128-entry bitmap and length limits), so a bad name is answered at the edge and never forwarded.
 * Sends and pulls are checked on their typed headers' raw bytes; the rarer offset, group and
 * heartbeat requests through their decoded fields or body. Which check a code gets is said where
 * the code's handler is registered (HandlerTables, in the gateway package).
 */
public final class NameGuard {

    private static final JsonFactory JSON = JsonFactory.builder().build();

    private NameGuard() {
    }

    /** A send's topic (send rules: forbidden system topics too) and producer group. */
    public static NameRefusal checkSend(SendRequestHeader header, EdgeSettings settings) {
        NameValidator names = settings.names();
        NameCheck topic = header.checkTopic(names);
        if (!topic.isValid()) {
            return topicRefusal(names, topic, header.topic(), settings);
        }
        NameCheck group = header.checkGroup(names);
        if (!group.isValid() && header.producerGroup() != null) {
            return groupRefusal(names, group, header.producerGroup(), settings);
        }
        return null;
    }

    /** A pull's topic and consumer group. */
    public static NameRefusal checkPull(PullRequestHeader header, EdgeSettings settings) {
        NameValidator names = settings.names();
        NameCheck topic = header.checkTopic(names);
        if (!topic.isValid()) {
            return topicRefusal(names, topic, header.topic(), settings);
        }
        NameCheck group = header.checkGroup(names);
        if (!group.isValid()) {
            return groupRefusal(names, group, header.consumerGroup(), settings);
        }
        return null;
    }

    /** QUERY_CONSUMER_OFFSET, UPDATE_CONSUMER_OFFSET: {@code topic} and {@code consumerGroup}. */
    public static NameRefusal checkOffsetRequest(RemotingFrame frame, EdgeSettings settings) {
        Map<String, String> ext = HeaderCodec.decodeHeader(frame).extFields();
        NameRefusal r = topic(ext, "topic", settings);
        return r != null ? r : group(ext, "consumerGroup", settings);
    }

    /**
     * GET_ROUTEINFO_BY_TOPIC, REGISTER_TOPIC_IN_NAMESRV: {@code topic}, with the topic rules (a route may
     * be asked for any topic a client uses: retry, DLQ and system topics too). A JSON number there is read
     * as its text, as RocketMQ reads extFields ({@code "topic":123} names topic {@code 123}); a missing
     * topic is left to the name server.
     */
    public static NameRefusal checkTopicField(RemotingFrame frame, EdgeSettings settings) {
        return topic(HeaderCodec.decodeHeader(frame).extFields(), "topic", settings);
    }

    /** CONSUMER_SEND_MSG_BACK: {@code group}. */
    public static NameRefusal checkSendBack(RemotingFrame frame, EdgeSettings settings) {
        return group(HeaderCodec.decodeHeader(frame).extFields(), "group", settings);
    }

    /** GET_CONSUMER_LIST_BY_GROUP: {@code consumerGroup}. */
    public static NameRefusal checkConsumerGroup(RemotingFrame frame, EdgeSettings settings) {
        return group(HeaderCodec.decodeHeader(frame).extFields(), "consumerGroup", settings);
    }

    /** UNREGISTER_CLIENT: {@code producerGroup} and {@code consumerGroup}. */
    public static NameRefusal checkUnregister(RemotingFrame frame, EdgeSettings settings) {
        Map<String, String> ext = HeaderCodec.decodeHeader(frame).extFields();
        NameRefusal r = group(ext, "producerGroup", settings);
        return r != null ? r : group(ext, "consumerGroup", settings);
    }

    /** HEART_BEAT, LOCK_BATCH_MQ, UNLOCK_BATCH_MQ: the names in the JSON body. */
    public static NameRefusal checkBody(RemotingFrame frame, EdgeSettings settings) {
        return frame.bodyLength() == 0 ? null : checkBody(frame.bodySlice(), settings);
    }

    private static NameRefusal topic(Map<String, String> ext, String key, EdgeSettings settings) {
        String name = ext == null ? null : ext.get(key);
        if (name == null) {
            return null;
        }
        NameCheck check = settings.names().checkTopic(name);
        return check.isValid() ? null : topicRefusal(settings.names(), check, name, settings);
    }

    private static NameRefusal group(Map<String, String> ext, String key, EdgeSettings settings) {
        String name = ext == null ? null : ext.get(key);
        if (name == null) {
            return null;
        }
        NameCheck check = settings.names().checkGroup(name);
        return check.isValid() ? null : groupRefusal(settings.names(), check, name, settings);
    }

    /**
     * Heartbeat and lock bodies are JSON: {@code groupName}, {@code consumerGroup} name groups and
     * {@code topic} names topics, at any depth. A body that is not JSON is left to the broker.
     */
    private static NameRefusal checkBody(ByteBuf body, EdgeSettings settings) {
        NameValidator names = settings.names();
        try (JsonParser p = JSON.createParser((InputStream) new ByteBufInputStream(body.duplicate()))) {
            for (JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
                if (t != JsonToken.FIELD_NAME) {
                    continue;
                }
                String field = p.currentName();
                boolean isGroup = "groupName".equals(field) || "consumerGroup".equals(field);
                boolean isTopic = "topic".equals(field);
                if (p.nextToken() != JsonToken.VALUE_STRING || !(isGroup || isTopic)) {
                    continue;
                }
                String name = p.getText();
                NameCheck check = isGroup ? names.checkGroup(name) : names.checkTopic(name);
                if (!check.isValid()) {
                    return isGroup ? groupRefusal(names, check, name, settings) : topicRefusal(names, check, name, settings);
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }

    private static NameRefusal topicRefusal(NameValidator names, NameCheck check, String topic, EdgeSettings settings) {
        return new NameRefusal(NameValidator.responseCode(check, settings.legacyBrokers()),
            names.topicRemark(check, topic == null ? "" : topic), check);
    }

    private static NameRefusal groupRefusal(NameValidator names, NameCheck check, String group, EdgeSettings settings) {
        return new NameRefusal(NameValidator.responseCode(check, settings.legacyBrokers()),
            names.groupRemark(check, group == null ? "" : group), check);
    }
}
