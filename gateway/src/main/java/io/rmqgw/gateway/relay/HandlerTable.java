package io.rmqgw.gateway.relay;

import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * Request code to handler, one table per upstream role (RocketMQ's {@code registerProcessor}):
 * requests clients send, and requests the upstream sends to clients. A code without a
 * registration is passed through as an opaque slice. Immutable once built; read on every frame.
 */
public final class HandlerTable {

    private final String role;
    private final IntObjectMap<RequestHandler> requests;
    private final IntObjectMap<UpstreamRequestHandler> upstreamRequests;
    private final RequestHandler fallback;

    private HandlerTable(Builder b) {
        this.role = b.role;
        this.requests = b.requests;
        this.upstreamRequests = b.upstreamRequests;
        this.fallback = b.fallback;
    }

    public static Builder builder(String role) {
        return new Builder(role);
    }

    /** A metric and log label: {@code namesrv} or {@code broker}. */
    public String role() {
        return role;
    }

    /** The handler for a client request with {@code code}: the fallback (pass-through by default) when none registered. */
    public RequestHandler request(int code) {
        RequestHandler h = requests.get(code);
        return h != null ? h : fallback;
    }

    /** The handler for a request with {@code code} that the upstream sends to a client. */
    public UpstreamRequestHandler upstreamRequest(int code) {
        UpstreamRequestHandler h = upstreamRequests.get(code);
        return h != null ? h : UpstreamRequestHandler.PASS_THROUGH;
    }

    /** Every registered client request code and its handler, by code. */
    public Map<Integer, RequestHandler> requestRegistrations() {
        return new TreeMap<>(requests);
    }

    /** Every registered upstream request code and its handler, by code. */
    public Map<Integer, UpstreamRequestHandler> upstreamRequestRegistrations() {
        return new TreeMap<>(upstreamRequests);
    }

    public static final class Builder {

        private final String role;
        private final IntObjectMap<RequestHandler> requests = new IntObjectHashMap<>();
        private final IntObjectMap<UpstreamRequestHandler> upstreamRequests = new IntObjectHashMap<>();
        private RequestHandler fallback = RequestHandler.PASS_THROUGH;

        private Builder(String role) {
            this.role = role;
        }

        /** Registers {@code handler} for client requests with any of {@code codes}; a code registers once. */
        public Builder request(RequestHandler handler, int... codes) {
            for (int code : codes) {
                if (requests.put(code, handler) != null) {
                    throw new IllegalStateException(role + ": request code " + code + " registered twice");
                }
            }
            return this;
        }

        /** Registers {@code handler} for requests with any of {@code codes} that the upstream sends to clients. */
        public Builder upstreamRequest(UpstreamRequestHandler handler, int... codes) {
            for (int code : codes) {
                if (upstreamRequests.put(code, handler) != null) {
                    throw new IllegalStateException(role + ": upstream request code " + code + " registered twice");
                }
            }
            return this;
        }

        /** What treats codes nobody registered; a role without upstream sets {@link RequestHandler#NOT_SERVED}. */
        public Builder fallback(RequestHandler handler) {
            this.fallback = handler;
            return this;
        }

        public HandlerTable build() {
            return new HandlerTable(this);
        }
    }
}
