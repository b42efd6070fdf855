package io.rmqgw.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * A loopback address whose connects never complete: a listening socket that accepts nothing, its accept queue
 * filled at once, so the kernel drops every further SYN and a dial waits until its own connect timeout (a name
 * server behind a dead route or on a machine too loaded to accept). Unlike a port with nothing listening, which
 * refuses at once.
 */
public final class BlackHole implements AutoCloseable {

    /** How long the probe that proves the hole waits for a connect that must not complete. */
    private static final int PROBE_MILLIS = 300;

    private final ServerSocket listener;
    private final List<Socket> queued = new ArrayList<>();
    /** Until {@link #fill}: accepts and closes at once (a gateway's start-up discovery fails fast). */
    private final Thread hangUp;
    private volatile boolean filling;

    private BlackHole() throws IOException {
        listener = new ServerSocket();
        listener.bind(new InetSocketAddress("127.0.0.1", 0), 1);
        listener.setSoTimeout(20);
        hangUp = new Thread(this::hangUpUntilFilled, "black-hole-" + listener.getLocalPort());
        hangUp.setDaemon(true);
        hangUp.start();
    }

    private void hangUpUntilFilled() {
        while (!filling) {
            try {
                listener.accept().close();
            } catch (SocketTimeoutException e) {
                // look at the flag again
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    /** Opens one and proves it: a connect to it times out. */
    public static BlackHole open() throws IOException {
        return listen().fill();
    }

    /**
     * Opens the listening socket only: until {@link #fill}, each connect is accepted and closed at once (a gateway's
     * start-up discovery fails at once instead of waiting for its timeouts).
     */
    public static BlackHole listen() throws IOException {
        return new BlackHole();
    }

    /** Fills the accept queue until a connect times out: from now on no connect completes. */
    public BlackHole fill() throws IOException {
        filling = true;
        try {
            hangUp.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while stopping the accepts of " + address(), e);
        }
        try {
            // Linux queues backlog + 1 handshaken connections
            for (int attempt = 0; attempt < 8; attempt++) {
                Socket filler = new Socket();
                queued.add(filler);
                try {
                    filler.connect(listener.getLocalSocketAddress(), PROBE_MILLIS);
                } catch (SocketTimeoutException full) {
                    return this;
                }
            }
            throw new IllegalStateException("not a black hole: every connect to " + address() + " completed");
        } catch (IOException | RuntimeException e) {
            close();
            throw e;
        }
    }

    /** {@code 127.0.0.1:port}. */
    public String address() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    @Override
    public void close() {
        for (Socket s : queued) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing a test socket: nothing to do
            }
        }
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing a test socket: nothing to do
        }
    }
}
