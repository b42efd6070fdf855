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
}
