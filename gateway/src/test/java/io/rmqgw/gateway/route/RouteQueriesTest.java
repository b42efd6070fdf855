package io.rmqgw.gateway.route;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.util.concurrent.DefaultEventExecutor;
import io.netty.util.concurrent.Future;
import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.gateway.testing.TestGateway;
import io.rmqgw.routing.ClusterView;
import io.rmqgw.testing.Closer;
import io.rmqgw.testing.ScriptedPeer;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The gateway asks a name server for a route itself (pooled connection, its own opaque) and learns the answer. */
class RouteQueriesTest {

    private final DefaultEventExecutor caller = new DefaultEventExecutor();
    @RegisterExtension
    final Closer resources = Closer.eachTest();
    private ScriptedPeer namesrv;
    private TestGateway gateway;

    {
        // first in, so closed last: after the gateway and the name server
        resources.add(() -> caller.shutdownGracefully(0, 100, TimeUnit.MILLISECONDS).syncUninterruptibly());
    }

    private static <T> T await(Future<T> f) throws Exception {
        assertTrue(f.await(5, TimeUnit.SECONDS), "no answer");
        return f.get();
    }

    @Test
    void aRefreshTeachesTheClusterViewAndATopicGoneIsForgotten() throws Exception {
        namesrv = resources.add(ScriptedPeer.start(
            Routes.nameServer(Map.of("TopicA", Map.of("broker-a", "127.0.0.1:10911")))));
        gateway = resources.add(TestGateway.builder().namesrv(namesrv.address()).start());
        ClusterView cluster = gateway.gateway().cluster();
        RouteQueries queries = gateway.gateway().routeQueries();

        Optional<ClusterView.TopicRoute> route = await(queries.refresh("TopicA", caller));
        assertTrue(route.isPresent());
        assertEquals("TopicA", route.get().topic());
        assertEquals(List.of(new ClusterView.QueueRef("broker-a", 0), new ClusterView.QueueRef("broker-a", 1),
            new ClusterView.QueueRef("broker-a", 2), new ClusterView.QueueRef("broker-a", 3)), cluster.writableQueues("TopicA"));
        assertEquals(Optional.of("127.0.0.1:10911"), cluster.masterAddress("broker-a"));
        assertEquals(Map.of(), gateway.gateway().brokerListeners(), "its own query binds no listener: no client asked");

        assertEquals(Optional.empty(), await(queries.refresh("TopicGone", caller)));
        assertFalse(cluster.knowsTopic("TopicGone"));
    }

    @Test
    void noNameServerFailsTheRefresh() throws Exception {
        gateway = resources.add(TestGateway.builder().namesrv("127.0.0.1:" + TestGateway.deadPort()).start());
        Future<Optional<ClusterView.TopicRoute>> f = gateway.gateway().routeQueries().refresh("TopicA", caller);
        assertTrue(f.await(5, TimeUnit.SECONDS));
        ExecutionException e = assertThrows(ExecutionException.class, f::get);
        assertTrue(e.getCause().getMessage().contains("127.0.0.1"), e.getCause().getMessage());
    }
}
