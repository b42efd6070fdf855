package io.rmqgw.gateway.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class ReadinessTest {

    @Test
    void bothStepsInEitherOrderThenDraining() {
        Readiness r = new Readiness();
        assertFalse(r.isReady());
        r.namesrvAnswered();
        assertEquals("listeners not bound yet", r.notReadyReason());
        r.namesrvAnswered();
        r.listenersBound();
        assertTrue(r.isReady());
        assertNull(r.notReadyReason());
        assertEquals("ready", r.toString());
        r.draining();
        assertFalse(r.isReady());
        assertTrue(r.isDraining());
        assertEquals("not ready: draining", r.toString());
        r.namesrvAnswered();
        assertFalse(r.isReady(), "draining is final");
    }

    @Test
    void drainingBeforeReady() {
        Readiness r = new Readiness();
        r.draining();
        assertEquals("draining", r.notReadyReason());
    }

    @Test
    void aFailingCheckMakesItNotReadyUntilItPassesAgain() {
        Readiness r = new Readiness();
        r.listenersBound();
        r.namesrvAnswered();
        String[] why = {null};
        r.check(() -> why[0]);
        assertTrue(r.isReady());
        why[0] = "event loop rmqgw-io-1 has run no task for 3000 ms";
        assertFalse(r.isReady());
        assertEquals("not ready: event loop rmqgw-io-1 has run no task for 3000 ms", r.toString());
        why[0] = null;
        assertTrue(r.isReady(), "back once the condition is gone");
    }
}
