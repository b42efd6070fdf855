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
import java.net.Socket;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * At start, asks the name servers for the cluster (GET_BROKER_CLUSTER_INFO) and binds a listener
 * per broker, so the startup log shows the upstreams and the first route answers need no bind.
 * A blocking one-off exchange on the starting thread: nothing here runs on an event loop.
 */
public final class ClusterDiscovery {

    private static final Logger log = LoggerFactory.getLogger(ClusterDiscovery.class);
    /** V5_0_0 and up: the name server answers standard JSON. */
    private static final int CLIENT_VERSION = 453;

    private ClusterDiscovery() {
    }

    /** Binds listeners for the brokers found; true when a name server answered. */
    public static boolean discover(List<String> namesrv, Duration timeout, BrokerListeners brokers, GatewayMetrics metrics) {
        for (String address : namesrv) {
            try {
                byte[] body = clusterInfo(address, timeout);
                metrics.namesrvUp(address, true);
                Set<String> found = BrokerAddressRewriter.brokerAddresses(body);
                CompletableFuture.allOf(found.stream().map(brokers::ensure).toArray(CompletableFuture[]::new))
                    .get(timeout.toMillis(), TimeUnit.MILLISECONDS);
                log.info("name server {} answered: {} broker(s) {}", address, found.size(), brokers.snapshot());
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (Exception e) {
                metrics.namesrvUp(address, false);
                log.warn("name server {} did not give the cluster: {}", address, Addresses.describe(e));
            }
        }
        log.warn("no name server of {} answered at start; brokers get listeners when routes name them", namesrv);
        return false;
    }

    private static byte[] clusterInfo(String address, Duration timeout) throws IOException {
        try (Socket socket = new Socket()) {
            socket.connect(Addresses.parse(address), (int) timeout.toMillis());
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
