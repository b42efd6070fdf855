package io.rmqgw.cli;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BooleanSupplier;
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
        this.brokerBase = freeRange(9);
        int l;
        do {
            l = freeRange(1);
        } while (l >= brokerBase && l < brokerBase + 9);
        listen = l;
        int a;
        do {
            a = freeRange(1);
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

    static void await(BooleanSupplier condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + timeout.toMillis() + " ms waiting for " + what);
            }
            try {
                Thread.sleep(10);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError("interrupted waiting for " + what, e);
            }
        }
    }

    /** {@code count} consecutive ports free on 127.0.0.1 now, below the ephemeral range. */
    static int freeRange(int count) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 200; attempt++) {
            int base = random.nextInt(20000, 32000 - count);
            boolean ok = true;
            for (int p = base; p < base + count && ok; p++) {
                ok = bindable(p);
            }
            if (ok) {
                return base;
            }
        }
        throw new IllegalStateException("no " + count + " free consecutive ports found");
    }

    private static boolean bindable(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
