package io.rmqgw.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;
import org.apache.rocketmq.remoting.protocol.SerializeType;

/** Headers the gateway re-encoded ({@code rmqgw.header.conversions{from,to}}): JSON to ROCKETMQ binary, or back. */
public final class HeaderEncodingMeters {

    private static final int ENCODINGS = SerializeType.values().length;

    /** [from.ordinal() * ENCODINGS + to.ordinal()], null where from is to. */
    private final Counter[] conversions = new Counter[ENCODINGS * ENCODINGS];

    HeaderEncodingMeters(MeterRegistry registry) {
        for (SerializeType from : SerializeType.values()) {
            for (SerializeType to : SerializeType.values()) {
                if (from != to) {
                    conversions[from.ordinal() * ENCODINGS + to.ordinal()] = Counter.builder("rmqgw.header.conversions")
                        .description("Headers re-encoded by the gateway, by encoding read and encoding written")
                        .tag("from", from.name().toLowerCase(Locale.ROOT))
                        .tag("to", to.name().toLowerCase(Locale.ROOT))
                        .register(registry);
                }
            }
        }
    }

    /** A header re-encoded from one encoding to the other (JSON to ROCKETMQ binary, or back). */
    public void headerConverted(SerializeType from, SerializeType to) {
        Counter c = conversions[from.ordinal() * ENCODINGS + to.ordinal()];
        if (c != null) {
            c.increment();
        }
    }
}
