package io.rmqgw.gateway.limits;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.github.bucket4j.TimeMeter;
import io.rmqgw.gateway.config.RateLimitConfig;
import io.rmqgw.gateway.config.RateLimitConfig.AddressLimit;
import io.rmqgw.gateway.config.RateLimitConfig.ClientLimit;
import io.rmqgw.gateway.config.RateLimitConfig.TopicLimit;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.metrics.MeterReadings;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The token buckets of the send rate limits, on an injected clock. */
class RateLimitsTest {

    private final FakeClock clock = new FakeClock();
    private final GatewayMetrics metrics = GatewayMetrics.inMemory();
    private final RateLimits limits = new RateLimits(metrics, clock);

    private static RateLimitConfig topics(TopicLimit... l) {
        return new RateLimitConfig(List.of(l), null);
    }

    private int admitted(String topic, String client, int tries) {
        int n = 0;
        for (int i = 0; i < tries; i++) {
            if (limits.admitSend(topic, client, null) == null) {
                n++;
            }
        }
        return n;
    }

    @Test
    void noLimitsAdmitEverythingAndAreInactive() {
        assertFalse(limits.active());
        assertEquals(1000, admitted("T", "c", 1000));
    }

    @Test
    void aTopicGetsItsBurstThenItsRate() {
        limits.apply(topics(new TopicLimit("T", 10, 20)));
        assertTrue(limits.active());
        assertEquals(20, admitted("T", "c", 50), "the burst, then nothing");
        clock.advance(Duration.ofMillis(500));
        assertEquals(5, admitted("T", "c", 50), "half a second refills half the rate");
        assertEquals(50 - 20 + 50 - 5, MeterReadings.of(metrics).rateLimitedSends("topic"));
        assertEquals(100, admitted("Other", "c", 100), "unlisted topics are not limited");
    }

    @Test
    void theRemarkSaysWhichLimitAndHowLarge() {
        limits.apply(new RateLimitConfig(List.of(new TopicLimit("T", 1, null)),
            List.of(new ClientLimit("10.0.0.1@a", 2, 2))));
        assertNull(limits.admitSend("T", "x", null));
        assertEquals("[RATE_LIMITED] sends to topic T exceed the gateway's limit of 1 per second (burst 1); retry later",
            limits.admitSend("T", "x", null));
        assertNull(limits.admitSend("U", "10.0.0.1@a", null));
        assertNull(limits.admitSend("U", "10.0.0.1@a", null));
        assertEquals("[RATE_LIMITED] sends of client 10.0.0.1@a exceed the gateway's limit of 2 per second (burst 2);"
            + " retry later", limits.admitSend("U", "10.0.0.1@a", null));
        assertEquals(1, MeterReadings.of(metrics).rateLimitedSends("topic"));
        assertEquals(1, MeterReadings.of(metrics).rateLimitedSends("client"));
    }

    @Test
    void aStarEntryGivesEachTopicAndClientItsOwnBucket() {
        limits.apply(new RateLimitConfig(List.of(new TopicLimit("*", 5, 5), new TopicLimit("Big", 100, 100)),
            List.of(new ClientLimit("*", 3, 3))));
        assertEquals(3, admitted("A", "c1", 10), "c1's own bucket is the tighter one");
        assertEquals(2, admitted("A", "c2", 10), "A's bucket had 2 left");
        assertEquals(3, admitted("B", "c3", 10), "B has a bucket of its own");
        assertEquals(3, admitted("Big", "c4", 10), "a listed topic uses its own limit; c4's bucket stops it");
    }

    @Test
    void applyingEqualLimitsKeepsTheBucketsAndOtherLimitsReplaceThem() {
        RateLimitConfig config = topics(new TopicLimit("T", 1, 1));
        assertTrue(limits.apply(config));
        assertNull(limits.admitSend("T", "c", null));
        assertFalse(limits.apply(topics(new TopicLimit("T", 1, 1))), "equal: nothing changes");
        assertTrue(limits.admitSend("T", "c", null) != null, "the bucket stayed empty");
        assertTrue(limits.apply(topics(new TopicLimit("T", 50, 50))));
        assertEquals(50, admitted("T", "c", 80), "the new limit, with a full bucket");
        assertTrue(limits.apply(RateLimitConfig.NONE));
        assertFalse(limits.active());
    }

    @Test
    void aTopicsPullLimitGivesItsBurstThenItsRateAndLeavesSendsAlone() {
        limits.apply(topics(new TopicLimit("T", null, null, 4, 8)));
        assertFalse(limits.active(), "no send limit");
        assertTrue(limits.limitsPulls());
        assertFalse(limits.limitsRequests());
        assertEquals(8, pulls("T", 20), "the burst, then nothing");
        assertEquals("[RATE_LIMITED] pulls of topic T exceed the gateway's limit of 4 per second (burst 8); retry later",
            limits.admitPull("T"));
        clock.advance(Duration.ofMillis(500));
        assertEquals(2, pulls("T", 20), "half a second refills half the rate");
        assertEquals(12 + 1 + 18, MeterReadings.of(metrics).rateLimitedSends("topic_pull"));
        assertEquals(0, MeterReadings.of(metrics).rateLimitedSends("topic"));
        assertEquals(100, admitted("T", "c", 100), "sends to T are not limited");
        assertEquals(100, pulls("Other", 100), "unlisted topics are not limited");
    }

    @Test
    void aClientsRequestLimitCountsEveryRequestOfEachClientApart() {
        limits.apply(new RateLimitConfig(null, List.of(new ClientLimit("*", null, null, 10, 3))));
        assertTrue(limits.limitsRequests());
        assertFalse(limits.active());
        int admitted = 0;
        for (int i = 0; i < 10; i++) {
            if (limits.admitRequest("a@1", null, 11) == null) {
                admitted++;
            }
        }
        assertEquals(3, admitted);
        assertEquals("[RATE_LIMITED] requests of client a@1 (this one code 11) exceed the gateway's limit of 10 per"
            + " second (burst 3); retry later", limits.admitRequest("a@1", null, 11));
        assertNull(limits.admitRequest("b@2", null, 11), "another client has a bucket of its own");
        assertEquals(8, MeterReadings.of(metrics).rateLimitedSends("client_request"));
        clock.advance(Duration.ofMillis(100));
        assertNull(limits.admitRequest("a@1", null, 11), "a tenth of a second refills one");
        assertFalse(RateLimits.countsAsRequest(34), "heartbeats keep a client known: never refused");
        assertFalse(RateLimits.countsAsRequest(35), "nor unregistrations");
        assertTrue(RateLimits.countsAsRequest(11) && RateLimits.countsAsRequest(310));
    }

    private static RateLimits.Source from(String ip) {
        return RateLimits.Source.of(new InetSocketAddress(ip, 40000));
    }

    private int requests(String clientId, RateLimits.Source source, int tries) {
        int n = 0;
        for (int i = 0; i < tries; i++) {
            if (limits.admitRequest(clientId, source, 10) == null) {
                n++;
            }
        }
        return n;
    }

    @Test
    void anAddressLimitIsSharedByEveryConnectionOfTheAddressWhateverClientIdItClaims() {
        limits.apply(new RateLimitConfig(null, List.of(new ClientLimit("*", null, null, 1000, 1000)),
            List.of(new AddressLimit("*", null, null, 100, 50)), null));
        assertTrue(limits.limitsRequests());
        RateLimits.Source a = from("10.0.0.7");
        // twenty connections, each claiming an id of its own (or none): one bucket for the address
        int admitted = 0;
        for (int conn = 0; conn < 20; conn++) {
            admitted += requests(conn % 2 == 0 ? "unidentified@10.0.0.7" : "10.9.9.9@victim" + conn, a, 10);
        }
        assertEquals(50, admitted, "the address's burst, then nothing");
        assertEquals("[RATE_LIMITED] requests from address 10.0.0.7 (this one code 10) exceed the gateway's limit of"
            + " 100 per second (burst 50); retry later", limits.admitRequest("x@y", a, 10));
        assertEquals(151, MeterReadings.of(metrics).rateLimitedSends("address_request"));
        assertEquals(50, requests("c", from("10.0.0.8"), 60), "another address has buckets of its own");
        clock.advance(Duration.ofMillis(100));
        assertEquals(10, requests("z", a, 60), "a tenth of a second refills a tenth of the rate");
        // the address refused them: the clients' buckets kept their tokens (1000 - 50 - 10 taken in all by then)
        assertEquals(0, MeterReadings.of(metrics).rateLimitedSends("client_request"));
    }

    @Test
    void theMostSpecificAddressEntryWinsAndAnUnmatchedAddressIsNotLimited() {
        limits.apply(new RateLimitConfig(null, null, List.of(new AddressLimit("10.0.0.0/8", null, null, 10, 10),
            new AddressLimit("10.1.2.3", null, null, 10, 2), new AddressLimit("::1", null, null, 10, 4)), null));
        assertEquals(2, requests("c", from("10.1.2.3"), 20), "the single address's entry");
        assertEquals(10, requests("c", from("10.1.2.4"), 20), "the range's, a bucket of its own");
        assertEquals(10, requests("c", from("10.200.0.1"), 20), "and another of its own");
        assertEquals(4, requests("c", from("::1"), 20));
        assertEquals(20, requests("c", from("192.168.0.1"), 20), "no entry matches: not limited");
        assertEquals(20, requests("c", null, 20), "no address known: not limited");
    }

    @Test
    void anAddressSendLimitRefusesAfterTheTopicAndClientAndGivesTheirTokensBack() {
        limits.apply(new RateLimitConfig(List.of(new TopicLimit("T", 5, 5)), List.of(new ClientLimit("*", 5, 5)),
            List.of(new AddressLimit("*", 2, 2, null, null)), null));
        assertTrue(limits.active());
        RateLimits.Source a = from("10.0.0.9");
        assertNull(limits.admitSend("T", "c", a));
        assertNull(limits.admitSend("T", "c", a));
        assertEquals("[RATE_LIMITED] sends from address 10.0.0.9 exceed the gateway's limit of 2 per second (burst 2);"
            + " retry later", limits.admitSend("T", "c", a));
        assertEquals(1, MeterReadings.of(metrics).rateLimitedSends("address"));
        // topic T and client c gave back what the refused send took: 3 left in each
        assertEquals(3, admitted("T", "c", 10), "T and c each had 3 tokens left");
        assertEquals(0, MeterReadings.of(metrics).rateLimitedSends("client"));
    }

    @Test
    void refusalsAreHeldAHundredMillisecondsByDefault() {
        assertEquals(Duration.ofMillis(100).toNanos(), limits.refusalDelayNanos());
        limits.apply(new RateLimitConfig(null, null, null, Duration.ZERO));
        assertEquals(0, limits.refusalDelayNanos());
    }

    private int pulls(String topic, int tries) {
        int n = 0;
        for (int i = 0; i < tries; i++) {
            if (limits.admitPull(topic) == null) {
                n++;
            }
        }
        return n;
    }

    private static final class FakeClock implements TimeMeter {
        private long nanos = 1_000_000_000L;

        void advance(Duration d) {
            nanos += d.toNanos();
        }

        @Override
        public long currentTimeNanos() {
            return nanos;
        }

        @Override
        public boolean isWallClockBased() {
            return false;
        }
    }
}
