package io.rmqgw.gateway.vq;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.netty.buffer.Unpooled;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The leases of a virtual queue kept in arrays answer as the TreeMap they replace, under a seeded mix of operations. */
class LeasesByOffsetTest {

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 42, 2026})
    void answersAsASortedMapDoes(long seed) {
        Random random = new Random(seed);
        LeasesByOffset leases = new LeasesByOffset();
        TreeMap<Long, WindowMessage> model = new TreeMap<>();
        long next = 0;
        for (int step = 0; step < 20_000; step++) {
            int op = random.nextInt(10);
            if (op < 4) { // lease at the head of the queue
                next += 1 + random.nextInt(2);
                WindowMessage m = message();
                leases.put(next, m);
                model.put(next, m);
            } else if (op == 4 && !model.isEmpty()) { // a broken rule: a lease below the highest, or on one already there
                long offset = model.lastKey() - random.nextInt(5);
                WindowMessage m = message();
                leases.put(offset, m);
                model.put(offset, m);
            } else if (op < 7) { // a commit: the lowest, or a few from the bottom
                long below = model.isEmpty() ? 0 : model.firstKey() + random.nextInt(4);
                while (!leases.isEmpty() && leases.offsetAt(0) < below) {
                    leases.removeAt(0);
                }
                model.headMap(below, false).clear();
            } else if (op < 9) { // one anywhere, by offset
                long offset = next - random.nextInt(40);
                assertEquals(model.remove(offset) != null, leases.remove(offset));
            } else if (!model.isEmpty()) { // by index
                int index = random.nextInt(model.size());
                Long key = new ArrayList<>(model.keySet()).get(index);
                assertEquals((long) key, leases.offsetAt(index));
                leases.removeAt(index);
                model.remove(key);
            }
            long probe = next - random.nextInt(50);
            assertSame(model.get(probe), leases.get(probe));
            assertEquals(model.headMap(probe, false).size(), leases.indexAtOrAbove(probe));
            if (step % 97 == 0) {
                assertSameContent(model, leases);
            }
        }
        assertSameContent(model, leases);
    }

    private static void assertSameContent(TreeMap<Long, WindowMessage> model, LeasesByOffset leases) {
        assertEquals(model.size(), leases.size());
        assertEquals(model.isEmpty(), leases.isEmpty());
        List<Map.Entry<Long, WindowMessage>> entries = new ArrayList<>(model.entrySet());
        for (int i = 0; i < entries.size(); i++) {
            assertEquals((long) entries.get(i).getKey(), leases.offsetAt(i));
            assertSame(entries.get(i).getValue(), leases.at(i));
        }
        if (!model.isEmpty()) {
            assertEquals((long) model.lastKey(), leases.lastOffset());
        }
    }

    private static final Window WINDOW = new Window(new RealQueue("broker-a", 0), 0);
    private static long made;

    /** A distinct message each time (the leases only hold them; no bytes behind it). */
    private static WindowMessage message() {
        long offset = made++;
        return new WindowMessage(WINDOW, offset, new FetchedRecords(Unpooled.EMPTY_BUFFER), 0, 1, 0, 0, 0, offset);
    }
}
