package io.rmqgw.probe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PacerTest {

    /** A clock that only moves when the pacer sleeps (or the test says so). */
    private static final class FakeTime {
        long now = 1_000_000_000L;
        final List<Long> sleeps = new ArrayList<>();

        void sleep(long nanos) {
            sleeps.add(nanos);
            now += nanos;
        }
    }

    @Test
    void sleepsTheWholeGapBetweenSlots() throws InterruptedException {
        FakeTime t = new FakeTime();
        Pacer pacer = new Pacer(4, () -> t.now, t::sleep);
        long start = t.now;
        for (int i = 0; i < 5; i++) {
            pacer.awaitTurn(i);
            assertEquals(start + i * 250_000_000L, t.now, "message " + i + " goes at its slot");
        }
        assertEquals(List.of(250_000_000L, 250_000_000L, 250_000_000L, 250_000_000L), t.sleeps,
            "one sleep per message after the first, none of them a spin");
    }

    @Test
    void aSenderThatFellBehindIsNotHeldBackUntilOnScheduleAgain() throws InterruptedException {
        FakeTime t = new FakeTime();
        Pacer pacer = new Pacer(10, () -> t.now, t::sleep);
        long start = t.now;
        pacer.awaitTurn(0);
        t.now += 350_000_000L; // the first send took 350 ms
        pacer.awaitTurn(1); // due at 100 ms: late, no sleep
        pacer.awaitTurn(2); // due at 200 ms: late
        pacer.awaitTurn(3); // due at 300 ms: late
        assertEquals(List.of(), t.sleeps);
        pacer.awaitTurn(4); // due at 400 ms: 50 ms to wait
        assertEquals(List.of(50_000_000L), t.sleeps);
        assertEquals(start + 400_000_000L, t.now);
    }

    @Test
    void fractionalRates() throws InterruptedException {
        FakeTime t = new FakeTime();
        Pacer pacer = new Pacer(0.5, () -> t.now, t::sleep);
        pacer.awaitTurn(0);
        pacer.awaitTurn(1);
        assertEquals(List.of(2_000_000_000L), t.sleeps);
        assertEquals(3_000_000_000L, new Pacer(3, () -> 0L, n -> { }).due(9));
    }

    @Test
    void refusesNonPositiveRates() {
        assertThrows(IllegalArgumentException.class, () -> new Pacer(0, System::nanoTime, Pacer.THREAD_SLEEP));
        assertThrows(IllegalArgumentException.class, () -> new Pacer(-1, System::nanoTime, Pacer.THREAD_SLEEP));
        assertThrows(IllegalArgumentException.class,
            () -> new Pacer(Double.POSITIVE_INFINITY, System::nanoTime, Pacer.THREAD_SLEEP));
    }

    @Test
    void realSleepPacesRoughly() throws InterruptedException {
        Pacer pacer = Pacer.of(100);
        long start = System.nanoTime();
        for (int i = 0; i <= 10; i++) {
            pacer.awaitTurn(i);
        }
        long elapsedMillis = (System.nanoTime() - start) / 1_000_000;
        // 10 gaps of 10 ms; generous upper bound for a loaded machine
        assertEquals(true, elapsedMillis >= 99 && elapsedMillis < 2_000, "elapsed " + elapsedMillis + " ms");
    }
}
