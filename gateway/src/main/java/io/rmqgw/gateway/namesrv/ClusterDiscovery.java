package io.rmqgw.gateway.namesrv;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.frame.RemotingHeader;
import io.rmqgw.gateway.broker.BrokerListeners;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.routing.BrokerAddressRewriter;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * At start, asks the name servers for the cluster (GET_BROKER_CLUSTER_INFO) and binds a listener
 * per broker, so the startup log shows the upstreams and the first route answers need no bind.
 * Blocking one-off exchanges, one per name server, all at once on daemon threads of their own (nothing here
 * runs on an event loop): the first good answer is used, and the caller waits about one timeout in all, not
 * one per unreachable name server.
 */
public final class ClusterDiscovery {

    private static final Logger log = LoggerFactory.getLogger(ClusterDiscovery.class);
    /** V5_0_0 and up: the name server answers standard JSON. */
    private static final int CLIENT_VERSION = 453;
    /** Past the timeout every exchange has completed (orTimeout); this only guards against a lost completion. */
    private static final long GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);

    private ClusterDiscovery() {
    }

    /**
     * Binds listeners for the brokers of the first name server to answer; true when one answered. Each
     * exchange is bounded by {@code timeout} (connect included), and so is the wait for the listeners; name
     * servers still unanswered when this returns are reported (log and metric) once they fail or time out.
     */
    public static boolean discover(List<String> namesrv, Duration timeout, BrokerListeners brokers, GatewayMetrics metrics) {
        BlockingQueue<Exchange> completed = new LinkedBlockingQueue<>();
        List<Exchange> exchanges = new ArrayList<>(namesrv.size());
        if (!namesrv.isEmpty()) {
            ExecutorService threads = Executors.newFixedThreadPool(namesrv.size(), task -> {
                Thread t = new Thread(task, "rmqgw-cluster-discovery");
                t.setDaemon(true);
                return t;
            });
            try {
                for (String address : namesrv) {
                    Exchange exchange = new Exchange(address, timeout);
                    exchanges.add(exchange);
                    exchange.answer.orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS).whenComplete((body, failure) -> {
                        exchange.report(failure, metrics);
                        completed.add(exchange);
                    });
                    threads.execute(exchange::run);
                }
            } finally {
                threads.shutdown(); // its threads end with their exchanges
            }
        }
        long deadline = System.nanoTime() + timeout.toNanos() + GRACE_NANOS;
        try {
            for (int pending = exchanges.size(); pending > 0; pending--) {
                Exchange exchange = completed.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
                if (exchange == null) {
                    break;
                }
                if (exchange.answer.isCompletedExceptionally()) {
                    continue; // reported as it completed
                }
                try {
                    Set<String> found = BrokerAddressRewriter.brokerAddresses(exchange.answer.join());
                    CompletableFuture.allOf(found.stream().map(brokers::ensure).toArray(CompletableFuture[]::new))
                        .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                    log.info("name server {} answered: {} broker(s) {}", exchange.address, found.size(), brokers.snapshot());
                    return true;
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    metrics.namesrvUp(exchange.address, false);
                    log.warn("name server {} did not give the cluster: {}", exchange.address, Addresses.describe(e));
                }
            }
        } catch (InterruptedException e) {
            exchanges.forEach(Exchange::abort);
            Thread.currentThread().interrupt();
            return false;
        }
        log.warn("no name server of {} gave the cluster within {} ms; not ready until one answers, brokers get "
            + "listeners when routes name them", namesrv, timeout.toMillis());
        return false;
    }

    /** One name server asked for the cluster on a thread of its own; closing its socket ends it early. */
    private static final class Exchange {
        private final String address;
        private final Duration timeout;
        private final Socket socket = new Socket();
        private final CompletableFuture<byte[]> answer = new CompletableFuture<>();

        private Exchange(String address, Duration timeout) {
            this.address = address;
            this.timeout = timeout;
        }

        private void run() {
            try {
                answer.complete(clusterInfo(socket, address, timeout));
            } catch (IOException | RuntimeException e) {
                answer.completeExceptionally(e);
            }
        }

        /** Once per name server, on whichever thread completed the answer. */
        private void report(Throwable failure, GatewayMetrics metrics) {
            if (failure == null) {
                metrics.namesrvUp(address, true);
                return;
            }
            metrics.namesrvUp(address, false);
            String reason = failure instanceof TimeoutException
                ? "no answer within " + timeout.toMillis() + " ms" : Addresses.describe(failure);
            log.warn("name server {} did not give the cluster: {}", address, reason);
            abort(); // after a timeout the exchange may still be connecting or reading
        }

        private void abort() {
            try {
                socket.close();
            } catch (IOException ignored) {
                // closing a socket nobody reads any more: nothing to do
            }
        }
    }

    private static byte[] clusterInfo(Socket connection, String address, Duration timeout) throws IOException {
        try (Socket socket = connection) {
            InetSocketAddress target = Addresses.parse(address);
            if (target.isUnresolved()) {
                // a host name: looked up here, on this exchange's own thread (Addresses.parse looks nothing up)
                target = new InetSocketAddress(target.getHostString(), target.getPort());
            }
            socket.connect(target, (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            RemotingHeader request = new RemotingHeader(RequestCode.GET_BROKER_CLUSTER_INFO, LanguageCode.JAVA,
                CLIENT_VERSION, 1, 0, null, null);
            ByteBuf frame = Frames.encode(ByteBufAllocator.DEFAULT, request, SerializeType.JSON, null);
            try {
                OutputStream out = socket.getOutputStream();
                out.write(ByteBufUtil.getBytes(frame));
                out.flush();
            } finally {
                frame.release();
            }
            DataInputStream in = new DataInputStream(socket.getInputStream());
            int length = in.readInt();
            if (length < 4 || length > 64 * 1024 * 1024) {
                throw new IOException("implausible frame length " + length);
            }
            byte[] whole = new byte[4 + length];
            in.readFully(whole, 4, length);
            ByteBuf buf = Unpooled.wrappedBuffer(whole).setInt(0, length);
            RemotingFrame response = FrameDecoder.parse(buf);
            try {
                if (response.code() != ResponseCode.SUCCESS) {
                    throw new IOException("answered code " + response.code());
                }
                return ByteBufUtil.getBytes(response.bodySlice());
            } finally {
                response.release();
            }
        }
    }
}
