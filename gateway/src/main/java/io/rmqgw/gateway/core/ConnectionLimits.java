package io.rmqgw.gateway.core;

import io.netty.channel.Channel;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Counts the client connections of every listener, in total and per source address, so an accept
 * past {@code downstream.max-connections} or {@code max-connections-per-address} is refused.
 * Called from every event loop: counters are atomic, an address's entry goes when its count does.
 */
final class ConnectionLimits {

    /** Why an accept was refused, or null when admitted. */
    enum Refusal { TOTAL, PER_ADDRESS }

    private final AtomicInteger total = new AtomicInteger();
    private final ConcurrentHashMap<InetAddress, AtomicInteger> byAddress = new ConcurrentHashMap<>();

    /** Counts {@code client} in, until it closes; or refuses it (it is then not counted). */
    Refusal admit(Channel client, int maxTotal, int maxPerAddress) {
        if (total.incrementAndGet() > maxTotal && maxTotal > 0) {
            total.decrementAndGet();
            return Refusal.TOTAL;
        }
        InetAddress address = client.remoteAddress() instanceof InetSocketAddress inet ? inet.getAddress() : null;
        if (address != null) {
            AtomicInteger count = byAddress.compute(address, (a, c) -> {
                AtomicInteger n = c == null ? new AtomicInteger() : c;
                n.incrementAndGet();
                return n;
            });
            if (maxPerAddress > 0 && count.get() > maxPerAddress) {
                release(address);
                total.decrementAndGet();
                return Refusal.PER_ADDRESS;
            }
        }
        client.closeFuture().addListener(f -> {
            total.decrementAndGet();
            if (address != null) {
                release(address);
            }
        });
        return null;
    }

    private void release(InetAddress address) {
        byAddress.computeIfPresent(address, (a, c) -> c.decrementAndGet() == 0 ? null : c);
    }

    int total() {
        return total.get();
    }

    int from(InetAddress address) {
        AtomicInteger c = byAddress.get(address);
        return c == null ? 0 : c.get();
    }
}
