package io.rmqgw.gateway.pool;

import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.gateway.net.Addresses;
import io.rmqgw.routing.NamesrvAddresses;
import java.util.List;

/**
 * One dial of a pooled connection: its targets in order (a broker's one address, or the name servers in failover
 * order, each reported to {@link NamesrvAddresses} as it starts and ends), the first that connects used, every
 * failure named in the message of the requests it leaves unsent. On the connection's event loop.
 */
final class PooledDial {

    private final UpstreamConnection connection;
    private final List<String> targets;
    private final NamesrvAddresses namesrv;
    private final List<Integer> order;
    private final StringBuilder failures = new StringBuilder();

    PooledDial(UpstreamConnection connection, List<String> targets, NamesrvAddresses namesrv, List<Integer> order) {
        this.connection = connection;
        this.targets = targets;
        this.namesrv = namesrv;
        this.order = order;
    }

    /** Tries {@code targets[index]}, then the next; {@code namesrv} (null for a broker) learns which answered. */
    void next(int index) {
        if (index >= targets.size()) {
            connection.dialFailed(failures.toString());
            return;
        }
        String next = targets.get(index);
        connection.target(next);
        if (namesrv != null) {
            namesrv.dialing(order.get(index));
        }
        ChannelFuture connect;
        try {
            connect = connection.context().dialer().dial(next, connection.loop(), connection.context().upstream().connectTimeoutMillis(),
                new ChannelInitializer<>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        ch.pipeline().addLast("frames", new FrameDecoder(connection.context().maxFrameLength()));
                        ch.pipeline().addLast("pool", new PooledInbound(connection));
                    }
                });
        } catch (RuntimeException e) {
            if (namesrv != null) {
                namesrv.markFailed(order.get(index));
            }
            failures.append(failures.length() == 0 ? "" : "; ").append(next).append(": ").append(Addresses.describe(e));
            next(index + 1);
            return;
        }
        connect.addListener((ChannelFutureListener) f -> {
            if (namesrv != null) {
                if (f.isSuccess()) {
                    namesrv.markGood(order.get(index));
                } else {
                    namesrv.markFailed(order.get(index));
                }
            }
            if (!connection.connecting()) {
                f.channel().close(); // closed meanwhile
                return;
            }
            if (f.isSuccess()) {
                connection.connected(f.channel());
            } else {
                failures.append(failures.length() == 0 ? "" : "; ").append(next).append(": ")
                    .append(Addresses.describe(f.cause()));
                next(index + 1);
            }
        });
    }
}
