package io.rmqgw.gateway.relay;

import io.netty.buffer.ByteBuf;
import io.rmqgw.codec.frame.RemotingFrame;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/**
 * What differs between the gateway's roles (name server, broker) on top of the shared relay:
 * where to connect, what to remember about a request, how to treat an answer, and what to say
 * when no upstream answers. Called on the session's event loop only.
 */
public interface RelayPolicy {

    /** A metric and log label: {@code namesrv} or {@code broker}. */
    String role();

    /** Upstream addresses to dial, in order; the first that connects is used. */
    List<String> upstreamTargets();

    /** {@code target} connected (or refused): lets a policy remember which upstream is good. */
    default void upstreamResult(String target, boolean connected) {
    }

    /** How remarks name an upstream, e.g. {@code broker 127.0.0.1:10911}. */
    String describe(String target);

    /** Anything to keep with a pending request for {@link #onResponse}; null for most codes. */
    default Object requestContext(RemotingFrame request) {
        return null;
    }

    /**
     * The bytes to send upstream for a client request, in the upstream header encoding; takes
     * ownership of {@code request}. Returns null when the policy refused the request and answered
     * the client itself ({@link RelaySession#answerLocally}).
     */
    default ByteBuf toUpstream(RelaySession session, RemotingFrame request) {
        return session.reencodeForUpstream(request, null);
    }

    /**
     * Treats an upstream response before it reaches the client; takes ownership of
     * {@code response}. {@code requestEncoding} is how the client sent the request (see
     * {@link RelaySession#reencodeForClient}). Returns the bytes to write now, or null when the
     * policy answers later through {@link RelaySession#writeToClient}.
     */
    ByteBuf onResponse(RelaySession session, int requestCode, Object context, RemotingFrame response,
                       SerializeType requestEncoding);

    /** Treats a request the upstream sends to the client (check-back, notifications); takes ownership. */
    default ByteBuf onUpstreamRequest(RelaySession session, RemotingFrame request) {
        return session.reencodeForClient(request, null, session.clientEncoding());
    }

    /**
     * Answers a client request while no upstream is reachable ({@code request} stays the caller's).
     * Returns the answer, or null to let the session answer with SYSTEM_ERROR naming {@code reason}.
     */
    default ByteBuf answerWithoutUpstream(RelaySession session, RemotingFrame request, String reason) {
        return null;
    }

    /** Deadline for a request's response, by code (long-polling pulls wait longer). */
    long timeoutNanos(int requestCode);
}
