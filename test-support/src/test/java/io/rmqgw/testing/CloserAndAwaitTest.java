package io.rmqgw.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CloserAndAwaitTest {

    @Test
    void closesLastAddedFirstAndEveryOneDespiteAFailure() {
        List<String> closed = new ArrayList<>();
        IOException first = new IOException("b failed");
        IllegalStateException second = new IllegalStateException("a failed");
        Closer closer = Closer.eachTest();
        closer.add(() -> {
            closed.add("a");
            throw second;
        });
        closer.add(() -> {
            closed.add("b");
            throw first;
        });
        closer.add(() -> closed.add("c"));

        IOException thrown = assertThrows(IOException.class, closer::close);
        assertSame(first, thrown);
        assertEquals(List.of(second), List.of(thrown.getSuppressed()));
        assertEquals(List.of("c", "b", "a"), closed);
    }

    @Test
    void closesEachResourceOnce() throws Exception {
        AtomicInteger closes = new AtomicInteger();
        Closer closer = Closer.allTests();
        closer.add(closes::incrementAndGet);
        closer.close();
        closer.close();
        assertEquals(1, closes.get());
    }

    @Test
    void holdsFailsAtTheFirstFalse() {
        AtomicInteger calls = new AtomicInteger();
        AssertionError e = assertThrows(AssertionError.class,
            () -> Await.holds("below three", Duration.ofMinutes(5), () -> calls.incrementAndGet() < 3));
        assertEquals("no longer true: below three", e.getMessage());
        assertEquals(3, calls.get());
    }

    @Test
    void holdsPollsThroughTheWindow() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Await.holds("always", Duration.ofMillis(120), () -> calls.incrementAndGet() > 0);
        assertTrue(calls.get() >= 2, "polled more than once: " + calls.get());
    }
}
