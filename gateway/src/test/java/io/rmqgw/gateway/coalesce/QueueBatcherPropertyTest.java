package io.rmqgw.gateway.coalesce;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.coalesce.QueueBatcher.Offer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;

/**
 * A model test of {@link QueueBatcher} as {@link Coalescing} drives it: random offers from several client
 * connections (any interleaving, as async producers make), drains run late (a drain asked for runs when the
 * event loop gets to it), linger ends, broker answers in any order (a broker with several send threads) and
 * reloads of max-in-flight. After every step: at most max-in-flight requests in flight (as the limit stood when
 * each was taken), batches within their limits, and nothing stuck (sends wait only while a drain, a linger end
 * or an answer is still to come). At the end, everything drained and answered: every send taken was written
 * exactly once and answered exactly once, and the batches, in the order they were taken (the order they go on
 * the pooled connection), hold the sends in the order they were offered, so each connection's order holds.
 */
class QueueBatcherPropertyTest {

    record Send(int connection, int seq, int bytes) {
    }

    sealed interface Op permits OfferOp, DrainOp, LingerEndOp, AnswerOp, ReloadOp {
    }

    record OfferOp(int connection, int bytes) implements Op {
    }

    /** The event loop runs one drain task asked for earlier. */
    record DrainOp() implements Op {
    }

    record LingerEndOp() implements Op {
    }

    /** The broker answers the request in flight at {@code pick} (mod their number). */
    record AnswerOp(int pick) implements Op {
    }

    record ReloadOp(int maxInFlight) implements Op {
    }

    record Scenario(int maxMessages, int maxBytes, boolean linger, int maxInFlight, int maxWaiting, List<Op> ops) {
    }

    @Provide
    Arbitrary<Scenario> scenarios() {
        Arbitrary<Op> offer = Combinators.combine(Arbitraries.integers().between(0, 3),
            Arbitraries.integers().between(1, 40)).as(OfferOp::new);
        Arbitrary<Op> drain = Arbitraries.just(new DrainOp());
        Arbitrary<Op> lingerEnd = Arbitraries.just(new LingerEndOp());
        Arbitrary<Op> answer = Arbitraries.integers().between(0, 7).map(pick -> new AnswerOp(pick));
        Arbitrary<Op> reload = Arbitraries.integers().between(1, 4).map(max -> new ReloadOp(max));
        Arbitrary<Op> op = Arbitraries.frequencyOf(Tuple.of(6, offer), Tuple.of(3, drain), Tuple.of(1, lingerEnd),
            Tuple.of(3, answer), Tuple.of(1, reload));
        return Combinators.combine(Arbitraries.integers().between(1, 5), Arbitraries.integers().between(20, 100),
            Arbitraries.of(false, true), Arbitraries.integers().between(1, 4), Arbitraries.integers().between(1, 12),
            op.list().ofMaxSize(120)).as(Scenario::new);
    }

    /** The caller's side: what Coalescing's lane does, with the event loop's tasks and the broker modelled. */
    private static final class Model {
        final QueueBatcher<Send> q = new QueueBatcher<>(Send::bytes);
        final Scenario s;
        QueueBatcher.Limits limits;
        int drainsAsked;
        boolean lingerRunning;
        /** The last batch taken held several sends (only then may an idle queue linger). */
        boolean lastBatchShared;
        final List<List<Send>> inFlight = new ArrayList<>();
        final List<Send> offered = new ArrayList<>();
        final List<Send> written = new ArrayList<>();
        final Map<Send, Integer> answers = new HashMap<>();
        final int[] nextSeq = new int[4];

        Model(Scenario s) {
            this.s = s;
            this.limits = limits(s.maxInFlight());
        }

        QueueBatcher.Limits limits(int maxInFlight) {
            return new QueueBatcher.Limits(s.maxMessages(), s.maxBytes(), s.linger() ? 1_000_000 : 0, s.maxWaiting(),
                maxInFlight);
        }

        void apply(Op op) {
            if (op instanceof OfferOp o) {
                offer(o);
            } else if (op instanceof DrainOp) {
                if (drainsAsked > 0) {
                    drainsAsked--;
                    drain();
                }
            } else if (op instanceof LingerEndOp) {
                if (lingerRunning) {
                    lingerRunning = false;
                    q.lingerEnded();
                    drain();
                }
            } else if (op instanceof AnswerOp a) {
                if (!inFlight.isEmpty()) {
                    List<Send> batch = inFlight.remove(a.pick() % inFlight.size());
                    q.answered();
                    drain(); // the next batch first, as Coalescing does
                    batch.forEach(x -> answers.merge(x, 1, Integer::sum));
                }
            } else if (op instanceof ReloadOp r) {
                limits = limits(r.maxInFlight());
            }
        }

        void offer(OfferOp o) {
            Send send = new Send(o.connection(), nextSeq[o.connection()]++, o.bytes());
            int waitingBefore = q.waiting();
            Offer result = q.offer(send, limits);
            if (result == Offer.REFUSED) {
                assertEquals(s.maxWaiting(), waitingBefore, "refused only when max-waiting sends wait");
                return;
            }
            offered.add(send);
            if (result == Offer.DRAIN) {
                drainsAsked++;
            } else if (result == Offer.LINGER) {
                assertTrue(!lingerRunning && inFlight.isEmpty() && s.linger(), "a linger only for an idle queue");
                assertTrue(lastBatchShared, "a linger only while the queue is busy (its last batch held several)");
                lingerRunning = true;
            }
        }

        void drain() {
            for (List<Send> batch = q.take(limits); !batch.isEmpty(); batch = q.take(limits)) {
                assertTrue(batch.size() <= s.maxMessages(), "max-messages");
                int bytes = batch.stream().mapToInt(Send::bytes).sum();
                assertTrue(batch.size() == 1 || bytes <= s.maxBytes(), "max-bytes, unless one send alone");
                inFlight.add(batch);
                written.addAll(batch);
                lastBatchShared = batch.size() > 1;
                assertTrue(inFlight.size() <= limits.maxInFlight(), "at most max-in-flight");
                assertEquals(inFlight.size(), q.inFlight());
            }
        }

        void checkNothingStuck() {
            if (q.waiting() > 0) {
                assertTrue(drainsAsked > 0 || lingerRunning || !inFlight.isEmpty(),
                    q.waiting() + " sends wait with nothing to come that would send them");
            }
        }

        /** The loop and the broker carry on until nothing is left. */
        void finish() {
            for (int round = 0; round < 10_000 && (drainsAsked > 0 || lingerRunning || !inFlight.isEmpty()); round++) {
                apply(drainsAsked > 0 ? new DrainOp() : lingerRunning ? new LingerEndOp() : new AnswerOp(0));
                checkNothingStuck();
            }
        }
    }

    @Property(tries = 400)
    void noSendIsLostOrAnsweredTwiceAndBatchesKeepTheOrderOfArrival(@ForAll("scenarios") Scenario scenario) {
        Model m = new Model(scenario);
        for (Op op : scenario.ops()) {
            m.apply(op);
            m.checkNothingStuck();
        }
        m.finish();
        assertEquals(0, m.q.waiting(), "nothing left waiting");
        assertEquals(0, m.q.inFlight(), "nothing left in flight");
        assertEquals(m.offered, m.written, "written exactly once each, in the order offered");
        for (Send send : m.offered) {
            assertEquals(1, m.answers.getOrDefault(send, 0), "answered once: " + send);
        }
        assertEquals(m.offered.size(), m.answers.size());
    }
}
