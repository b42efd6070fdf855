package io.rmqgw.gateway.core;

import io.netty.util.collection.IntObjectHashMap;
import io.netty.util.collection.IntObjectMap;
import io.rmqgw.codec.frame.RemotingFrame;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Request code to filters and handler, one table per upstream role (RocketMQ's {@code registerProcessor} and
 * {@code registerRPCHook}): requests clients send, and requests the upstream sends to clients. A code without a
 * registration goes to the fallback (passed through as an opaque slice by default) after the role-wide filters.
 * Immutable once built; read on every frame.
 */
public final class HandlerTable {

    private final Role role;
    private final IntObjectMap<RequestHandler> requests;
    private final IntObjectMap<UpstreamRequestHandler> upstreamRequests;
    private final RequestHandler fallback;
    /** The filters of each code named by a registration, in order. */
    private final IntObjectMap<RequestFilter[]> filtersByCode = new IntObjectHashMap<>();
    /** The filters of every other code: the role-wide ones and those for unregistered codes. */
    private final RequestFilter[] otherFilters;
    private final List<FilterRegistration> filterList;

    private HandlerTable(Builder b) {
        this.role = b.role;
        this.requests = b.requests;
        this.upstreamRequests = b.upstreamRequests;
        this.fallback = b.fallback;
        this.filterList = java.util.List.copyOf(b.filters);
        this.otherFilters = b.filters.stream().filter(f -> f.codes() == null || f.codes().length == 0)
            .map(FilterRegistration::filter).toArray(RequestFilter[]::new);
        Set<Integer> named = new TreeSet<>();
        requests.keySet().forEach(named::add);
        b.filters.stream().filter(f -> f.codes() != null).forEach(f -> Arrays.stream(f.codes()).forEach(named::add));
        for (int code : named) {
            boolean registered = requests.containsKey(code);
            filtersByCode.put(code, b.filters.stream().filter(f -> f.appliesTo(code, registered))
                .map(FilterRegistration::filter).toArray(RequestFilter[]::new));
        }
    }

    public static Builder builder(Role role) {
        return new Builder(role);
    }

    /** Whom the table's sessions stand for. */
    public Role role() {
        return role;
    }

    /** The handler for a client request with {@code code}: the fallback (pass-through by default) when none registered. */
    public RequestHandler request(int code) {
        RequestHandler h = requests.get(code);
        return h != null ? h : fallback;
    }

    /** The filters a client request with {@code code} passes before its handler, in order (shared: not to be changed). */
    public RequestFilter[] filters(int code) {
        RequestFilter[] f = filtersByCode.get(code);
        return f != null ? f : otherFilters;
    }

    /** Whether a request with {@code code} may stream through: its handler allows it and no filter of it reads bodies. */
    public boolean streams(RemotingFrame head) {
        // asked once per large frame only: its filters are few
        for (RequestFilter f : filters(head.code())) {
            if (f.readsBody()) {
                return false;
            }
        }
        return request(head.code()).streamsBody(head);
    }

    /** Every filter with the codes it was added for (empty: every code; null: codes without a handler), in order. */
    public List<FilterRegistration> filterRegistrations() {
        return filterList;
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

    /** A filter and the codes it was added for (empty: every code; null: every code without a handler). */
    public record FilterRegistration(RequestFilter filter, int[] codes) {
        boolean appliesTo(int code, boolean registered) {
            if (codes == null) {
                return !registered;
            }
            if (codes.length == 0) {
                return true;
            }
            for (int c : codes) {
                if (c == code) {
                    return true;
                }
            }
            return false;
        }
    }

    public static final class Builder {

        private final Role role;
        private final IntObjectMap<RequestHandler> requests = new IntObjectHashMap<>();
        private final IntObjectMap<UpstreamRequestHandler> upstreamRequests = new IntObjectHashMap<>();
        private RequestHandler fallback = RequestHandler.PASS_THROUGH;
        private final List<FilterRegistration> filters = new ArrayList<>();

        private Builder(Role role) {
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

        /**
         * Adds {@code filter} after those added before, for client requests with any of {@code codes}, or for
         * every code (registered or not) when none are given.
         */
        public Builder filter(RequestFilter filter, int... codes) {
            filters.add(new FilterRegistration(filter, codes.clone()));
            return this;
        }

        /** Adds {@code filter} after those added before, for every client request code no handler is registered for. */
        public Builder unregisteredFilter(RequestFilter filter) {
            filters.add(new FilterRegistration(filter, null));
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
