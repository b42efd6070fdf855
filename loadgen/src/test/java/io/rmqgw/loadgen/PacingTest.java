package io.rmqgw.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class PacingTest {

    @Test
    void waitsForEachSlotInTurn() {
        Pacing p = new Pacing(1_000, 10, 0, 1);
        assertEquals(1_000, p.delay(0));      // first slot at 1000
        assertEquals(5, p.delay(1_005));      // next at 1010
        assertEquals(0, p.delay(1_020));      // exactly on time
        assertEquals(0, p.takeMissed());
    }

    @Test
    void threadsInterleave() {
        assertEquals(0, new Pacing(0, 40, 0, 4).delay(0));
        assertEquals(10, new Pacing(0, 40, 1, 4).delay(0));
        assertEquals(30, new Pacing(0, 40, 3, 4).delay(0));
    }

    @Test
    void aThreadBehindSkipsWholeSlotsInsteadOfBursting() {
        Pacing p = new Pacing(0, 10, 0, 1);
        assertEquals(0, p.delay(0));          // slot 0; next 10
        // a slow answer: the thread is back at 55, slots 10, 20, 30 and 40 are gone, 50 is the current one
        assertEquals(0, p.delay(55));
        assertEquals(4, p.takeMissed());
        assertEquals(0, p.takeMissed());
        assertEquals(5, p.delay(55));         // next slot 60: no burst
        // a little late (less than a slot): send now, nothing skipped
        assertEquals(0, p.delay(73));
        assertEquals(0, p.takeMissed());
        assertEquals(7, p.delay(73));         // slot 80
    }

    @Test
    void refusesNonsense() {
        assertThrows(IllegalArgumentException.class, () -> new Pacing(0, 0, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new Pacing(0, 10, 1, 1));
    }
}
