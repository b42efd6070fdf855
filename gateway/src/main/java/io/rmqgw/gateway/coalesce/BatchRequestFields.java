package io.rmqgw.gateway.coalesce;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The extFields of a coalesced batch's SendMessageRequestHeaderV2, as the map the pooled connection encodes
 * (and signs, with {@code upstream.acl}). What a queue's batches share (topic, queue, the first message's
 * producer group, flag, ...) is made once into {@link Shared} and reused while the first messages' fields stay
 * the same; a batch adds only its born timestamp, so no map is filled per batch. Read-only.
 */
final class BatchRequestFields extends AbstractMap<String, String> {

    private static final String DEFAULT_TOPIC = "TBW102";
    private static final String BORN_TIMESTAMP = "g";

    /** The fields every batch of one queue shares, for one set of first-message fields. */
    static final class Shared {
        private final CoalescedSend.BatchFields from;
        private final List<Map.Entry<String, String>> entries;

        Shared(String topic, int queueId, CoalescedSend.BatchFields first) {
            this.from = first;
            List<Map.Entry<String, String>> e = new ArrayList<>(12);
            if (first.producerGroup() != null) {
                e.add(Map.entry("a", first.producerGroup()));
            }
            e.add(Map.entry("b", topic));
            e.add(Map.entry("c", first.defaultTopic() == null ? DEFAULT_TOPIC : first.defaultTopic()));
            e.add(Map.entry("d", Integer.toString(first.defaultTopicQueueNums())));
            e.add(Map.entry("e", Integer.toString(queueId)));
            e.add(Map.entry("f", "0"));
            e.add(Map.entry("h", Integer.toString(first.flag())));
            // no batch properties: nothing is appended to the messages' own, and WAIT is absent (true)
            e.add(Map.entry("j", "0"));
            e.add(Map.entry("k", "false"));
            e.add(Map.entry("m", "true"));
            if (first.brokerName() != null) {
                e.add(Map.entry("n", first.brokerName()));
            }
            this.entries = List.copyOf(e);
        }

        /** Whether a batch whose first message has {@code fields} shares these. */
        boolean fits(CoalescedSend.BatchFields fields) {
            return from.equals(fields);
        }
    }

    private final Shared shared;
    private final Map.Entry<String, String> born;

    BatchRequestFields(Shared shared, long bornTimestamp) {
        this.shared = shared;
        this.born = Map.entry(BORN_TIMESTAMP, Long.toString(bornTimestamp));
    }

    @Override
    public Set<Map.Entry<String, String>> entrySet() {
        return new AbstractSet<>() {
            @Override
            public Iterator<Map.Entry<String, String>> iterator() {
                return new Iterator<>() {
                    private int next;

                    @Override
                    public boolean hasNext() {
                        return next <= shared.entries.size();
                    }

                    @Override
                    public Map.Entry<String, String> next() {
                        if (!hasNext()) {
                            throw new NoSuchElementException();
                        }
                        int i = next++;
                        return i < shared.entries.size() ? shared.entries.get(i) : born;
                    }
                };
            }

            @Override
            public int size() {
                return shared.entries.size() + 1;
            }
        };
    }
}
