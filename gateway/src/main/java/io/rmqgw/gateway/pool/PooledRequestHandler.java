package io.rmqgw.gateway.pool;

import io.rmqgw.codec.frame.Frames;
import io.rmqgw.codec.frame.RemotingFrame;
import org.apache.rocketmq.remoting.protocol.RemotingSysResponseCode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What to do with a request an upstream sends on a pooled connection (a broker's
 * NOTIFY_CONSUMER_IDS_CHANGED or CHECK_TRANSACTION_STATE to a group the gateway itself registered).
 * Runs on the connection's event loop.
 */
@FunctionalInterface
public interface PooledRequestHandler {

    /**
     * Takes ownership of {@code request}. An answer (for a request that is not oneway) goes back with
     * {@link UpstreamConnection#answer}.
     */
    void onRequest(UpstreamConnection from, RemotingFrame request);

    /**
     * The default: nothing in the gateway asked for these yet. A oneway request is dropped; any other
     * gets REQUEST_CODE_NOT_SUPPORTED, so the upstream does not wait out its own timeout.
     */
    PooledRequestHandler UNSUPPORTED = new PooledRequestHandler() {
        private final Logger log = LoggerFactory.getLogger(PooledRequestHandler.class);

        @Override
        public void onRequest(UpstreamConnection from, RemotingFrame request) {
            try {
                log.debug("{} sent request code {} opaque {} on a pooled connection; not handled",
                    from.describe(), request.code(), request.opaque());
                if (!request.isOneway()) {
                    from.answer(Frames.errorResponse(from.alloc(), request,
                        RemotingSysResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                        "rmqgw does not handle request code " + request.code() + " on its own connections"));
                }
            } finally {
                request.release();
            }
        }
    };
}
