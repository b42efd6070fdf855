package io.rmqgw.routing;

import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * Gateway ports for real broker addresses, in blocks of three taken from an inclusive range:
 * {@code p} is the VIP port, {@code p+1} is unused, {@code p+2} is the main port advertised in
 * routes. Clients with vipChannelEnabled dial advertised port - 2, which lands on {@code p}.
 *
 * <p>A broker keeps its block for the life of the process unless {@link #reassign} moves it
 * (its ports could not be bound). Lookups are lock-free; allocation is serialized.
 */
public final class BrokerPortMap {

    static final int BLOCK_SIZE = 3;

    private final int from;
    private final int to;
    private final int blocks;
    private final AtomicReferenceArray<String> ownerOfBlock;
    // Blocks whose bind failed: used again only when no other block is free.
    private final boolean[] failed;
    private final Map<String, BrokerPorts> portsOfBroker = new ConcurrentHashMap<>();

    /** The ports of one broker. */
    public record BrokerPorts(String realAddress, int vipPort, int mainPort) {

        public int sparePort() {
            return vipPort + 1;
        }
    }

    /** Whose gateway port this is, and whether it is that broker's VIP port. */
    public record PortOwner(String realAddress, boolean vip) {
    }

    public BrokerPortMap(int from, int to) {
        if (from < 1 || to > 65535 || from > to) {
            throw new IllegalArgumentException("broker port range must be FROM-TO within 1-65535, was " + from + "-" + to);
        }
        if (to - from + 1 < BLOCK_SIZE) {
            throw new IllegalArgumentException("broker port range " + from + "-" + to
                + " needs at least " + BLOCK_SIZE + " ports (one broker)");
        }
        this.from = from;
        this.to = to;
        this.blocks = (to - from + 1) / BLOCK_SIZE;
        this.ownerOfBlock = new AtomicReferenceArray<>(blocks);
        this.failed = new boolean[blocks];
    }

    /** How many brokers the range can hold. */
    public int capacity() {
        return blocks;
    }

    /**
     * The broker's ports, allocating the lowest free block on first sight.
     *
     * @throws PortRangeExhaustedException when every block is taken
     */
    public BrokerPorts allocate(String realAddress) {
        requireAddress(realAddress);
        BrokerPorts known = portsOfBroker.get(realAddress);
        if (known != null) {
            return known;
        }
        synchronized (this) {
            known = portsOfBroker.get(realAddress);
            if (known != null) {
                return known;
            }
            int block = findFreeBlock(0, -1);
            if (block < 0) {
                throw exhausted(realAddress);
            }
            return assign(realAddress, block);
        }
    }

    /**
     * Moves the broker to the next free block after its current one, because its ports could not be
     * bound. The abandoned block is only handed out again once no other block is free.
     *
     * @throws IllegalArgumentException    when the broker has no ports yet
     * @throws PortRangeExhaustedException when no other block is free; the broker then keeps its ports
     */
    public synchronized BrokerPorts reassign(String realAddress) {
        requireAddress(realAddress);
        BrokerPorts current = portsOfBroker.get(realAddress);
        if (current == null) {
            throw new IllegalArgumentException("no gateway ports allocated for broker " + realAddress);
        }
        int oldBlock = blockOf(current.vipPort());
        failed[oldBlock] = true;
        int block = findFreeBlock((oldBlock + 1) % blocks, oldBlock);
        if (block < 0) {
            throw new PortRangeExhaustedException("cannot move broker " + realAddress + " off gateway ports "
                + current.vipPort() + "-" + current.mainPort() + ": no other free block of " + BLOCK_SIZE
                + " in range " + from + "-" + to);
        }
        BrokerPorts moved = assign(realAddress, block);
        ownerOfBlock.set(oldBlock, null);
        return moved;
    }

    /**
     * Like {@link #reassign(String)}, but only if the broker still has {@code failedPorts}: when
     * several threads see the same bind failure, the broker moves once.
     */
    public synchronized BrokerPorts reassign(BrokerPorts failedPorts) {
        Objects.requireNonNull(failedPorts, "failedPorts");
        BrokerPorts current = portsOfBroker.get(failedPorts.realAddress());
        if (current != null && !current.equals(failedPorts)) {
            return current;
        }
        return reassign(failedPorts.realAddress());
    }

    public Optional<BrokerPorts> portsOf(String realAddress) {
        return realAddress == null ? Optional.empty() : Optional.ofNullable(portsOfBroker.get(realAddress));
    }

    /** The broker behind a gateway port; empty for spare ports and ports no broker holds. */
    public Optional<PortOwner> ownerOf(int gatewayPort) {
        if (gatewayPort < from || gatewayPort > to) {
            return Optional.empty();
        }
        int block = (gatewayPort - from) / BLOCK_SIZE;
        int slot = (gatewayPort - from) % BLOCK_SIZE;
        if (block >= blocks || slot == 1) {
            return Optional.empty();
        }
        String owner = ownerOfBlock.get(block);
        return owner == null ? Optional.empty() : Optional.of(new PortOwner(owner, slot == 0));
    }

    /** Every broker's ports, ordered by port. */
    public synchronized Map<String, BrokerPorts> snapshot() {
        Map<String, BrokerPorts> copy = new LinkedHashMap<>();
        portsOfBroker.values().stream()
            .sorted(Comparator.comparingInt(BrokerPorts::vipPort))
            .forEach(p -> copy.put(p.realAddress(), p));
        return Collections.unmodifiableMap(copy);
    }

    @Override
    public String toString() {
        return "BrokerPortMap[" + from + "-" + to + ", " + portsOfBroker.size() + "/" + blocks + " brokers]";
    }

    /** Lowest-index free block scanning from {@code start} with wrap-around, preferring ones never failed. */
    private int findFreeBlock(int start, int exclude) {
        int fallback = -1;
        for (int n = 0; n < blocks; n++) {
            int b = (start + n) % blocks;
            if (b == exclude || ownerOfBlock.get(b) != null) {
                continue;
            }
            if (!failed[b]) {
                return b;
            }
            if (fallback < 0) {
                fallback = b;
            }
        }
        return fallback;
    }

    private BrokerPorts assign(String realAddress, int block) {
        int vip = from + block * BLOCK_SIZE;
        BrokerPorts ports = new BrokerPorts(realAddress, vip, vip + 2);
        // Owner first: a port is resolvable before any route advertises it.
        ownerOfBlock.set(block, realAddress);
        portsOfBroker.put(realAddress, ports);
        return ports;
    }

    private int blockOf(int vipPort) {
        return (vipPort - from) / BLOCK_SIZE;
    }

    private PortRangeExhaustedException exhausted(String realAddress) {
        return new PortRangeExhaustedException("no free block of " + BLOCK_SIZE + " gateway ports in range "
            + from + "-" + to + " for broker " + realAddress + ": all " + blocks + " blocks are taken");
    }

    private static void requireAddress(String realAddress) {
        if (realAddress == null || realAddress.isBlank()) {
            throw new IllegalArgumentException("broker address must not be empty");
        }
    }
}
