package io.rmqgw.gateway.net;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.channel.DefaultEventLoopGroup;
import io.rmqgw.testing.Await;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class LoopWatchTest {

    @Test
    void aLoopThatRunsNoTaskIsStalledUntilItRunsAgain() throws Exception {
        DefaultEventLoopGroup group = new DefaultEventLoopGroup(2);
        CountDownLatch release = new CountDownLatch(1);
        try (LoopWatch watch = new LoopWatch(group)) {
            Await.until("both loops seen running", Duration.ofSeconds(10), () -> watch.stalledReason() == null);
            group.next().execute(() -> {
                try {
                    release.await(); // a loop stuck, as in an allocation that sleeps
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            Await.until("the stuck loop reported", Duration.ofSeconds(15), () -> watch.stalledReason() != null);
            String why = watch.stalledReason();
            assertTrue(why != null && why.startsWith("event loop ") && why.contains("has run no task for"), why);
            release.countDown();
            Await.until("running again", Duration.ofSeconds(10), () -> watch.stalledReason() == null);
            assertNull(watch.stalledReason());
        } finally {
            release.countDown();
            group.shutdownGracefully(0, 0, java.util.concurrent.TimeUnit.MILLISECONDS).syncUninterruptibly();
        }
    }
}
