package io.rmqgw.gateway.discovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.metrics.NamesrvDiscoveryMeters;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Every poll result discovery reports is one NamesrvDiscoveryMeters registers at 0 from the start, so an alert on
 * {@code rmqgw_namesrv_discovery_total} sees the first failure after a start.
 */
class DiscoveryResultLabelsTest {

    @Test
    void everyResultConstantIsRegisteredUpFront() throws IllegalAccessException {
        Set<String> results = new TreeSet<>();
        for (Class<?> c : new Class<?>[] {NamesrvDiscovery.class, AddressServerClient.class}) {
            for (Field f : c.getDeclaredFields()) {
                int m = f.getModifiers();
                if (Modifier.isPublic(m) && Modifier.isStatic(m) && Modifier.isFinal(m) && f.getType() == String.class) {
                    results.add((String) f.get(null));
                }
            }
        }
        assertEquals(7, results.size(), results::toString);
        assertTrue(NamesrvDiscoveryMeters.RESULTS.containsAll(results),
            () -> results + " not all in " + NamesrvDiscoveryMeters.RESULTS);
    }
}
