package io.rmqgw.it.support;

import io.rmqgw.testing.Await;
import java.io.DataInputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.rocketmq.common.TopicFilterType;
import org.apache.rocketmq.common.constant.PermName;
import org.apache.rocketmq.remoting.CommandCustomHeader;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.header.CreateTopicRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.namesrv.GetRouteInfoRequestHeader;
import org.apache.rocketmq.remoting.protocol.route.TopicRouteData;

/**
 * A few admin requests over a plain blocking socket (one connection per call; no client threads
 * to shut down): create a topic on one broker, read a topic's route.
 */
public final class Admin {

    private Admin() {
    }

    /** Sends {@code request} to {@code address} (host:port) and returns the response. */
    public static RemotingCommand invoke(String address, RemotingCommand request, Duration timeout) throws Exception {
        int colon = address.lastIndexOf(':');
        InetSocketAddress target = new InetSocketAddress(address.substring(0, colon),
            Integer.parseInt(address.substring(colon + 1)));
        try (Socket socket = new Socket()) {
            socket.connect(target, (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            ByteBuffer frame = request.encode();
            byte[] bytes = new byte[frame.remaining()];
            frame.get(bytes);
            socket.getOutputStream().write(bytes);
            DataInputStream in = new DataInputStream(socket.getInputStream());
            while (true) {
                int length = in.readInt();
                if (length < 4 || length > 16 * 1024 * 1024) {
                    throw new IOException("bad frame length " + length + " from " + address);
                }
                byte[] body = new byte[length];
                in.readFully(body);
                RemotingCommand response = RemotingCommand.decode(body);
                if (response.isResponseType() && response.getOpaque() == request.getOpaque()) {
                    return response;
                }
            }
        }
    }

    private static RemotingCommand request(int code, CommandCustomHeader header) {
        return RemotingCommand.createRequestCommand(code, header);
    }

    /** Creates (or updates) {@code topic} with {@code queues} read and write queues on the broker at {@code brokerAddress}. */
    public static void createTopic(String brokerAddress, String topic, int queues) throws Exception {
        createTopic(brokerAddress, topic, queues, null);
    }

    /** As {@link #createTopic(String, String, int)}, the request passed through {@code hook} (null: none; ACL signing). */
    public static void createTopic(String brokerAddress, String topic, int queues,
                                   org.apache.rocketmq.remoting.RPCHook hook) throws Exception {
        CreateTopicRequestHeader h = new CreateTopicRequestHeader();
        h.setTopic(topic);
        h.setDefaultTopic("TBW102");
        h.setReadQueueNums(queues);
        h.setWriteQueueNums(queues);
        h.setPerm(PermName.PERM_READ | PermName.PERM_WRITE);
        h.setTopicFilterType(TopicFilterType.SINGLE_TAG.name());
        h.setTopicSysFlag(0);
        h.setOrder(false);
        RemotingCommand create = request(RequestCode.UPDATE_AND_CREATE_TOPIC, h);
        if (hook != null) {
            hook.doBeforeRequest(brokerAddress, create);
        }
        RemotingCommand response = invoke(brokerAddress, create, Duration.ofSeconds(10));
        if (response.getCode() != ResponseCode.SUCCESS) {
            throw new IllegalStateException("create topic " + topic + " on " + brokerAddress + ": code "
                + response.getCode() + " " + response.getRemark());
        }
    }

    /** The route the name server answers for {@code topic}, or {@code null} if it has none. */
    public static TopicRouteData route(String namesrvAddress, String topic) throws Exception {
        GetRouteInfoRequestHeader h = new GetRouteInfoRequestHeader();
        h.setTopic(topic);
        h.setAcceptStandardJsonOnly(true);
        RemotingCommand response = invoke(namesrvAddress, request(RequestCode.GET_ROUTEINFO_BY_TOPIC, h),
            Duration.ofSeconds(5));
        if (response.getCode() != ResponseCode.SUCCESS || response.getBody() == null) {
            return null;
        }
        return TopicRouteData.decode(response.getBody(), TopicRouteData.class);
    }

    /** Waits until the name server routes {@code topic} to {@code brokerName}. */
    public static void awaitRoute(String namesrvAddress, String topic, String brokerName, Duration timeout)
        throws InterruptedException {
        Await.until("route of " + topic + " to " + brokerName + " at " + namesrvAddress, timeout, () -> {
            TopicRouteData route = route(namesrvAddress, topic);
            return route != null && route.getQueueDatas() != null
                && route.getQueueDatas().stream().anyMatch(q -> brokerName.equals(q.getBrokerName()));
        });
    }
}
