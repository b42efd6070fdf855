package io.rmqgw.routing;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rmqgw.testing.fuzz.BoundedFuzz;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes what the gateway does with a name server's GET_ROUTEINFO_BY_TOPIC and GET_BROKER_CLUSTER_INFO
 * bodies: {@link BrokerAddressRewriter} and {@link ClusterView#learnRoute} / {@link ClusterView#learnClusterInfo}.
 * Properties, per body: the only exception is {@link MalformedRouteBodyException}; a rewritten body is
 * again a body the rewriter reads, naming exactly the replacements, and rewriting it back names the
 * original addresses; an identity mapping returns the input array itself; whatever a view learned
 * answers every query, and what those answers hold stays proportional to the body (no queue count
 * expands into millions of queues).
 * Seeds: {@code RouteBodyFuzzTestInputs/} (bodies as 4.9.x and 5.4.0 name servers write them, both dialects).
 */
class RouteBodyFuzzTest {

    private static final String PREFIX = "gw-";
    private static final Function<String, String> TO_GATEWAY = real -> PREFIX + real;
    private static final Function<String, String> BACK =
        address -> address.startsWith(PREFIX) ? address.substring(PREFIX.length()) : null;

    @FuzzTest(maxDuration = "5m")
    void routeBody(byte[] input) {
        readBody(input);
    }

    @Test
    @Timeout(120)
    void boundedRun() {
        BoundedFuzz.run(RouteBodyFuzzTest.class, "routeBody", 0x80B7EL, 20_000, RouteBodyFuzzTest::readBody);
    }

    static void readBody(byte[] input) {
        rewrite(input);
        ClusterView view = new ClusterView();
        try {
            view.learnRoute("TopicTest", input);
        } catch (MalformedRouteBodyException expected) {
            // nothing learned: checked below like any view
        }
        try {
            view.learnClusterInfo(input);
        } catch (MalformedRouteBodyException expected) {
            // nothing learned
        }
        query(view, input.length);
    }

    private static void rewrite(byte[] input) {
        BrokerAddressRewriter.Result result;
        try {
            result = BrokerAddressRewriter.rewrite(input, TO_GATEWAY);
        } catch (MalformedRouteBodyException expected) {
            return;
        }
        Set<String> found = result.brokerAddresses();
        check(BrokerAddressRewriter.rewrite(input, a -> null).body() == input, "nothing replaced: the input array itself");
        if (result.changed()) {
            check(result.body() != input, "a rewrite makes a new array");
        }
        Set<String> mapped = new LinkedHashSet<>();
        found.forEach(a -> mapped.add(PREFIX + a));
        BrokerAddressRewriter.Result again = BrokerAddressRewriter.rewrite(result.body(), BACK);
        check(again.brokerAddresses().equals(mapped), "a rewritten body names the replacements: "
            + again.brokerAddresses() + " vs " + mapped);
        check(again.replacements() == result.replacements(), "rewriting back replaces as many strings");
        check(BrokerAddressRewriter.brokerAddresses(again.body()).equals(found), "and names the original addresses again");
    }

    private static void query(ClusterView view, int bodyLength) {
        long held = 0;
        for (String name : view.brokerNames()) {
            view.masterAddress(name);
            view.clusterOf(name);
            held += view.addresses(name).size();
        }
        for (String cluster : view.clusters()) {
            held += view.brokerNames(cluster).size();
        }
        if (view.knowsTopic("TopicTest")) {
            List<ClusterView.Queues> queues = view.queues("TopicTest");
            long expanded = 0;
            for (ClusterView.Queues q : queues) {
                expanded += (q.readable() ? q.readQueueNums() : 0) + (q.writable() ? q.writeQueueNums() : 0);
            }
            // each queue a view expands becomes an object: a few bytes of body must not become billions of them
            check(expanded <= 65_536L * Math.max(1, queues.size()), expanded + " queues from a " + bodyLength + "-byte body");
            held += view.readableQueues("TopicTest").size() + view.writableQueues("TopicTest").size();
            view.route("TopicTest");
        }
        check(held >= 0, "answers");
    }

    private static void check(boolean condition, String property) {
        if (!condition) {
            throw new AssertionError(property);
        }
    }
}
