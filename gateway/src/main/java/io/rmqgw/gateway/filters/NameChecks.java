package io.rmqgw.gateway.filters;

import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.name.NameValidator;
import io.rmqgw.gateway.core.Exchange;
import io.rmqgw.gateway.core.RequestFilter;
import io.rmqgw.gateway.edge.EdgeSettings;
import io.rmqgw.gateway.edge.NameRefusal;
import io.rmqgw.gateway.edge.NameRule;
import java.util.function.BiFunction;
import java.util.function.BiPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The edge's name checks as filters: a request with a bad topic or group name is answered with the code and remark
 * a broker gives a send with that name, counted ({@code rmqgw_names_rejected_total}), and never forwarded. A check
 * costs nothing while {@code names} is off.
 */
public final class NameChecks {

    private static final Logger log = LoggerFactory.getLogger(NameChecks.class);

    private NameChecks() {
    }

    /** Names that sit in the extFields or body, checked by {@code rule}. */
    public static RequestFilter on(NameRule rule) {
        return (exchange, request) -> {
            EdgeSettings edge = exchange.edge();
            if (edge.names() == null) {
                return request;
            }
            NameRefusal refusal;
            try {
                refusal = rule.check(request, edge);
            } catch (RuntimeException e) {
                request.release();
                throw e;
            }
            return refusal == null ? request : refused(exchange, request, refusal);
        };
    }

    /**
     * Names on the typed header {@code H}, checked by {@code rule}. {@code validInFrame} (null: none) tells from the
     * bytes alone that they pass, so a request whose header no filter decoded yet is not decoded for the check
     * (the typed decode is most of what the edge adds to a send); false sends it to the typed check.
     */
    public static <H extends CommandHeader> RequestFilter typed(Class<H> type,
                                                                BiFunction<H, EdgeSettings, NameRefusal> rule,
                                                                BiPredicate<RemotingFrame, NameValidator> validInFrame) {
        return (exchange, request) -> {
            EdgeSettings edge = exchange.edge();
            if (edge.names() == null) {
                return request;
            }
            if (validInFrame != null && !exchange.headerDecoded()) {
                boolean valid;
                try {
                    valid = validInFrame.test(request, edge.names());
                } catch (RuntimeException e) {
                    request.release();
                    throw e;
                }
                if (valid) {
                    return request;
                }
            }
            H header = exchange.header(request, type);
            NameRefusal refusal = header == null ? null : rule.apply(header, edge);
            return refusal == null ? request : refused(exchange, request, refusal);
        };
    }

    /** Answers a request with a bad name as a broker would (a oneway is dropped, logged). Takes ownership; null. */
    private static RemotingFrame refused(Exchange exchange, RemotingFrame request, NameRefusal refusal) {
        request.release();
        exchange.metrics().nameRejected(refusal.check());
        if (exchange.oneway()) {
            log.warn("client {}: oneway request code {} refused: {}", exchange.client().address(), exchange.code(),
                refusal.remark());
        } else {
            exchange.answerError(refusal.code(), refusal.remark());
        }
        return null;
    }
}
