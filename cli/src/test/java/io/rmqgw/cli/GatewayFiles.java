package io.rmqgw.cli;

import io.rmqgw.testing.FreePorts;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeaderV2;

/**
 * A gateway configuration file on free 127.0.0.1 ports (listen, broker ports, admin), rewritten by tests with
 * other reloadable values while every port stays; and the small helpers the reload tests share.
 */
final class GatewayFiles {

    final Path file;
    final int listen;
    final int brokerBase;
    final int admin;
    /** Lines inside the {@code upstream:} block (two-space indent, newline-terminated). */
    String upstream;

    GatewayFiles(Path dir, String upstream) {
        this.file = dir.resolve("gateway.yaml");
        this.upstream = upstream;
        this.brokerBase = FreePorts.range(9);
        int l;
        do {
            l = FreePorts.port();
        } while (l >= brokerBase && l < brokerBase + 9);
        listen = l;
        int a;
        do {
            a = FreePorts.port();
        } while ((a >= brokerBase && a < brokerBase + 9) || a == listen);
        admin = a;
    }

    String yaml(String requestTimeout, int topicMaxLength, String extra) {
        return "listen: 127.0.0.1:" + listen + "\n"
            + "broker-ports: " + brokerBase + "-" + (brokerBase + 8) + "\n"
            + "drain-timeout: 0s\n"
            + "embedded:\n  enabled: false\n"
            + "upstream:\n" + upstream
            + "  connect-timeout: 1s\n"
            + "  request-timeout: " + requestTimeout + "\n"
            + "  header-encoding: preserve\n"
            + "names:\n  check: true\n  topic-max-length: " + topicMaxLength + "\n"
            + "admin:\n  listen: 127.0.0.1:" + admin + "\n"
            + extra;
    }

    void write(String text) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, text);
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** A SEND_MESSAGE_V2 request for {@code topic}, as a 4.x/5.x producer sends it. */
    static RemotingCommand send(String topic) {
        SendMessageRequestHeader h = new SendMessageRequestHeader();
        h.setProducerGroup("pg");
        h.setTopic(topic);
        h.setDefaultTopic("TBW102");
        h.setDefaultTopicQueueNums(4);
        h.setQueueId(0);
        h.setSysFlag(0);
        h.setBornTimestamp(System.currentTimeMillis());
        h.setFlag(0);
        h.setProperties("WAIT\u0001true\u0002");
        h.setReconsumeTimes(0);
        h.setUnitMode(false);
        h.setBatch(false);
        RemotingCommand r = RemotingCommand.createRequestCommand(RequestCode.SEND_MESSAGE_V2,
            SendMessageRequestHeaderV2.createSendMessageRequestHeaderV2(h));
        r.setBody("payload".getBytes());
        return r;
    }
}
