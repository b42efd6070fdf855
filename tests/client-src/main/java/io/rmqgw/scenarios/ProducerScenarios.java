package io.rmqgw.scenarios;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.rocketmq.client.exception.MQBrokerException;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.client.producer.SendCallback;
import org.apache.rocketmq.client.producer.SendResult;
import org.apache.rocketmq.client.producer.SendStatus;
import org.apache.rocketmq.common.message.Message;
import org.apache.rocketmq.common.message.MessageClientIDSetter;

/** Sending scenarios: sync, async, oneway, one batch, and send-until-success. */
final class ProducerScenarios {

    private ProducerScenarios() {
    }

    abstract static class Base implements ScenarioMain.Scenario {
        final Ctx ctx;
        final ScenarioMain.Clients clients = new ScenarioMain.Clients();
        final AtomicInteger sent = new AtomicInteger();
        final AtomicInteger failed = new AtomicInteger();

        Base(Ctx ctx) {
            this.ctx = ctx;
        }

        DefaultMQProducer start() throws Exception {
            DefaultMQProducer p = ctx.producer();
            p.start();
            clients.add(p::shutdown);
            return p;
        }

        void reportSent(String key, int seq, SendResult r) {
            if (r.getSendStatus() == SendStatus.SEND_OK) {
                sent.incrementAndGet();
            } else {
                failed.incrementAndGet();
            }
            ctx.out.emit(sentLine(ctx, key, seq, r, r.getMsgId(), r.getOffsetMsgId()));
        }

        void reportError(String key, int seq, Throwable e) {
            failed.incrementAndGet();
            ctx.out.emit(failure(ctx.line("send-error").put("key", key).put("seq", seq).put("error", e.toString()), e));
        }

        Json.Obj finish(Json.Obj summary) {
            return summary.put("sent", sent.get()).put("failed", failed.get()).put("requested", ctx.count)
                .put("producerGroup", ctx.producerGroup);
        }

        @Override
        public void shutdown() {
            clients.shutdownAll();
        }
    }

    /**
     * Adds what a failed send says about itself: {@code responseCode} (the client's, e.g. after its
     * retries), {@code brokerCode}/{@code brokerRemark}/{@code brokerAddr} of the first
     * MQBrokerException in the cause chain (an error response from whatever the client talked to),
     * and {@code causes}, the chain's messages.
     */
    static Json.Obj failure(Json.Obj line, Throwable e) {
        List<String> causes = new ArrayList<>();
        boolean broker = false;
        for (Throwable t = e; t != null && causes.size() < 8; t = t.getCause() == t ? null : t.getCause()) {
            causes.add(t.toString());
            if (t instanceof MQClientException && !line.fields().containsKey("responseCode")) {
                line.put("responseCode", ((MQClientException) t).getResponseCode());
            }
            if (t instanceof MQBrokerException && !broker) {
                broker = true;
                MQBrokerException b = (MQBrokerException) t;
                line.put("brokerCode", b.getResponseCode()).put("brokerRemark", b.getErrorMessage())
                    .put("brokerAddr", b.getBrokerAddr());
            }
        }
        return line.put("causes", causes);
    }

    static Json.Obj sentLine(Ctx ctx, String key, int seq, SendResult r, String msgId, String offsetMsgId) {
        Json.Obj line = ctx.line("sent").put("key", key).put("seq", seq).put("msgId", msgId)
            .put("offsetMsgId", offsetMsgId).put("status", String.valueOf(r.getSendStatus()));
        if (r.getMessageQueue() != null) {
            line.put("broker", r.getMessageQueue().getBrokerName()).put("queueId", r.getMessageQueue().getQueueId());
        }
        return line.put("queueOffset", r.getQueueOffset()).put("transactionId", r.getTransactionId());
    }

    static final class Sync extends Base {
        private final long intervalMs;

        Sync(Ctx ctx, long intervalMs) {
            super(ctx);
            this.intervalMs = Math.max(0, intervalMs);
        }

        @Override
        public boolean run(Json.Obj summary) throws Exception {
            DefaultMQProducer p = start();
            for (int i = 0; i < ctx.count && !ctx.expired(); i++) {
                if (i > 0 && intervalMs > 0) {
                    long sleep = Math.min(intervalMs, ctx.remainingMs());
                    if (sleep > 0) {
                        Thread.sleep(sleep);
                    }
                }
                Message m = ctx.message(i);
                try {
                    reportSent(m.getKeys(), i, p.send(m));
                } catch (Exception e) {
                    reportError(m.getKeys(), i, e);
                }
            }
            finish(summary).put("intervalMs", intervalMs);
            return sent.get() == ctx.count;
        }
    }

    static final class Async extends Base {
        private final int maxInFlight;

        Async(Ctx ctx, int maxInFlight) {
            super(ctx);
            this.maxInFlight = Math.max(1, maxInFlight);
        }

        @Override
        public boolean run(Json.Obj summary) throws Exception {
            DefaultMQProducer p = start();
            Semaphore inFlight = new Semaphore(maxInFlight);
            CountDownLatch done = new CountDownLatch(ctx.count);
            int submitted = 0;
            for (int i = 0; i < ctx.count; i++) {
                if (!inFlight.tryAcquire(ctx.remainingMs(), TimeUnit.MILLISECONDS)) {
                    break;
                }
                Message m = ctx.message(i);
                final int seq = i;
                try {
                    p.send(m, new SendCallback() {
                        @Override
                        public void onSuccess(SendResult r) {
                            reportSent(m.getKeys(), seq, r);
                            inFlight.release();
                            done.countDown();
                        }

                        @Override
                        public void onException(Throwable e) {
                            reportError(m.getKeys(), seq, e);
                            inFlight.release();
                            done.countDown();
                        }
                    });
                    submitted++;
                } catch (Exception e) {
                    reportError(m.getKeys(), seq, e);
                    inFlight.release();
                    done.countDown();
                }
            }
            boolean allCallbacks = done.await(ctx.remainingMs(), TimeUnit.MILLISECONDS);
            finish(summary).put("submitted", submitted).put("allCallbacks", allCallbacks);
            return allCallbacks && sent.get() == ctx.count;
        }
    }

    static final class Oneway extends Base {
        Oneway(Ctx ctx) {
            super(ctx);
        }

        @Override
        public boolean run(Json.Obj summary) throws Exception {
            DefaultMQProducer p = start();
            for (int i = 0; i < ctx.count && !ctx.expired(); i++) {
                Message m = ctx.message(i);
                try {
                    p.sendOneway(m);
                    sent.incrementAndGet();
                    // The client stamps the message id (UNIQ_KEY) before writing it.
                    ctx.out.emit(ctx.line("sent").put("key", m.getKeys()).put("seq", i)
                        .put("msgId", MessageClientIDSetter.getUniqID(m)).put("status", "ONEWAY"));
                } catch (Exception e) {
                    reportError(m.getKeys(), i, e);
                }
            }
            finish(summary);
            return sent.get() == ctx.count;
        }
    }

    static final class Batch extends Base {
        Batch(Ctx ctx) {
            super(ctx);
        }

        @Override
        public boolean run(Json.Obj summary) throws Exception {
            DefaultMQProducer p = start();
            List<Message> batch = new ArrayList<>(ctx.count);
            for (int i = 0; i < ctx.count; i++) {
                batch.add(ctx.message(i));
            }
            SendResult r;
            try {
                r = p.send(batch);
            } catch (Exception e) {
                for (int i = 0; i < batch.size(); i++) {
                    reportError(batch.get(i).getKeys(), i, e);
                }
                finish(summary);
                return false;
            }
            // A batch answers one result: comma-separated ids in batch order, offsets consecutive.
            String[] ids = r.getMsgId() == null ? new String[0] : r.getMsgId().split(",");
            String[] offsetIds = r.getOffsetMsgId() == null ? new String[0] : r.getOffsetMsgId().split(",");
            for (int i = 0; i < batch.size(); i++) {
                Json.Obj line = sentLine(ctx, batch.get(i).getKeys(), i, r, i < ids.length ? ids[i] : null,
                    i < offsetIds.length ? offsetIds[i] : null);
                line.put("queueOffset", r.getQueueOffset() + i);
                ctx.out.emit(line);
            }
            boolean ok = r.getSendStatus() == SendStatus.SEND_OK && ids.length == batch.size();
            if (ok) {
                sent.addAndGet(batch.size());
            } else {
                failed.addAndGet(batch.size());
            }
            finish(summary).put("batchStatus", String.valueOf(r.getSendStatus())).put("batchIds", ids.length);
            return ok;
        }
    }

    /**
     * One batch of --count messages to the gateway's fan-out topic (--topic): message i names its
     * destinations in --destination-property (default RMQGW_DESTINATIONS), the i-th entry (cycled) of
     * --destinations, entries separated by '|' (e.g. "A|B|A,B"); every message also carries the user
     * properties seq=i and origin=fanout. One "sent" line per message, the answer's offsetMsgIds in the
     * summary; a refused batch gives one "send-error" line per message.
     */
    static final class FanoutSend extends Base {
        private final String property;
        private final String[] destinations;

        FanoutSend(Ctx ctx, String property, String destinations) {
            super(ctx);
            this.property = property;
            this.destinations = destinations.split("\\|");
        }

        @Override
        public boolean run(Json.Obj summary) throws Exception {
            DefaultMQProducer p = start();
            List<Message> batch = new ArrayList<>(ctx.count);
            for (int i = 0; i < ctx.count; i++) {
                Message m = ctx.message(i);
                m.putUserProperty(property, destinations[i % destinations.length]);
                m.putUserProperty("seq", Integer.toString(i));
                m.putUserProperty("origin", "fanout");
                batch.add(m);
            }
            SendResult r;
            try {
                r = p.send(batch);
            } catch (Exception e) {
                for (int i = 0; i < batch.size(); i++) {
                    reportError(batch.get(i).getKeys(), i, e);
                }
                finish(summary);
                return false;
            }
            String[] ids = r.getMsgId() == null ? new String[0] : r.getMsgId().split(",");
            for (int i = 0; i < batch.size(); i++) {
                ctx.out.emit(sentLine(ctx, batch.get(i).getKeys(), i, r, i < ids.length ? ids[i] : null, null)
                    .put("destinations", destinations[i % destinations.length]));
            }
            boolean ok = r.getSendStatus() == SendStatus.SEND_OK;
            if (ok) {
                sent.addAndGet(batch.size());
            } else {
                failed.addAndGet(batch.size());
            }
            finish(summary).put("batchStatus", String.valueOf(r.getSendStatus())).put("offsetMsgIds", r.getOffsetMsgId());
            return ok;
        }
    }

    /**
     * Sync sends until --count succeeded or the deadline passed; reports every failed attempt.
     * With {@code --prime N} it first sends N messages (keys {@code <prefix>-prime-<i>}, one
     * "primed" line each; a failed attempt is tried again, "prime-error", until the deadline), so the
     * producer holds a route;
     * with {@code --go-file PATH} it then prints a "waiting" line and starts the loop only once
     * PATH exists (e.g. after the test stopped the broker).
     */
    static final class UntilSuccess extends Base {
        private final long intervalMs;
        private final int prime;
        private final String goFile;

        UntilSuccess(Ctx ctx, long intervalMs, int prime, String goFile) {
            super(ctx);
            this.intervalMs = Math.max(0, intervalMs);
            this.prime = Math.max(0, prime);
            this.goFile = goFile;
        }

        /**
         * A priming send, tried again (same key) while the deadline allows: the broker is up while priming, so a
         * failure is a timeout on a loaded machine, not what the scenario is about.
         */
        private SendResult primingSend(DefaultMQProducer p, String key, int seq) throws Exception {
            while (true) {
                try {
                    return p.send(ctx.message(key, seq));
                } catch (Exception e) {
                    if (ctx.expired()) {
                        throw e;
                    }
                    ctx.out.emit(ctx.line("prime-error").put("key", key).put("error", String.valueOf(e)));
                    Thread.sleep(intervalMs);
                }
            }
        }

        @Override
        public boolean run(Json.Obj summary) throws Exception {
            DefaultMQProducer p = start();
            for (int i = 0; i < prime; i++) {
                String key = ctx.keyPrefix + "-prime-" + i;
                SendResult r = primingSend(p, key, i);
                if (r.getSendStatus() != SendStatus.SEND_OK) {
                    throw new IllegalStateException("priming send " + key + ": " + r.getSendStatus());
                }
                Json.Obj line = sentLine(ctx, key, i, r, r.getMsgId(), r.getOffsetMsgId());
                line.fields().put("type", "primed");
                ctx.out.emit(line);
            }
            if (goFile != null) {
                ctx.out.emit(ctx.line("waiting").put("goFile", goFile));
                java.io.File go = new java.io.File(goFile);
                while (!go.exists()) {
                    if (ctx.expired()) {
                        summary.put("sent", 0).put("requested", ctx.count).put("error", "go file never appeared");
                        return false;
                    }
                    Thread.sleep(20);
                }
                ctx.out.emit(ctx.line("go"));
            }
            long loopStart = ctx.elapsedMs();
            int attempts = 0;
            long firstSuccessMs = -1;
            long slowestFailureMs = -1;
            String lastError = null;
            int seq = 0;
            while (sent.get() < ctx.count && !ctx.expired()) {
                attempts++;
                Message m = ctx.message(seq);
                long t0 = System.nanoTime();
                try {
                    SendResult r = p.send(m);
                    if (r.getSendStatus() == SendStatus.SEND_OK) {
                        if (firstSuccessMs < 0) {
                            firstSuccessMs = ctx.elapsedMs();
                        }
                        reportSent(m.getKeys(), seq, r);
                        seq++;
                        continue;
                    }
                    lastError = String.valueOf(r.getSendStatus());
                    long took = (System.nanoTime() - t0) / 1_000_000;
                    slowestFailureMs = Math.max(slowestFailureMs, took);
                    ctx.out.emit(ctx.line("attempt").put("attempt", attempts).put("key", m.getKeys())
                        .put("error", lastError).put("elapsedMs", took));
                } catch (Exception e) {
                    lastError = e.toString();
                    long took = (System.nanoTime() - t0) / 1_000_000;
                    slowestFailureMs = Math.max(slowestFailureMs, took);
                    ctx.out.emit(failure(ctx.line("attempt").put("attempt", attempts).put("key", m.getKeys())
                        .put("error", lastError).put("elapsedMs", took), e));
                }
                long sleep = Math.min(intervalMs, ctx.remainingMs());
                if (sleep > 0) {
                    Thread.sleep(sleep);
                }
            }
            summary.put("sent", sent.get()).put("requested", ctx.count).put("attempts", attempts)
                .put("failedAttempts", attempts - sent.get()).put("firstSuccessMs", firstSuccessMs)
                .put("lastError", lastError).put("primed", prime).put("loopStartMs", loopStart)
                .put("slowestFailureMs", slowestFailureMs);
            return sent.get() >= ctx.count;
        }
    }
}
