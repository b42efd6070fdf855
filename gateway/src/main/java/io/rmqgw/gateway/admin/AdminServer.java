package io.rmqgw.gateway.admin;

import io.micrometer.core.instrument.Gauge;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpServerKeepAliveHandler;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.timeout.ReadTimeoutException;
import io.netty.handler.timeout.ReadTimeoutHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.rmqgw.gateway.config.HostPort;
import io.rmqgw.metrics.GatewayMetrics;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin HTTP port. {@code GET /metrics} answers every meter in Prometheus text format 0.0.4;
 * {@code GET /health/live} answers 200 while the process runs; {@code GET /health/ready} answers 200
 * when {@link Readiness} says so and 503 with the reason otherwise. {@code HEAD} works on each; other
 * methods get 405, other paths 404. It runs on a single event-loop thread of its own, so a scrape
 * never delays relayed traffic, and it exports {@code rmqgw_ready} (1 or 0) while open.
 *
 * <p>{@code POST /reload} reloads the configuration through the handler set with {@link #reloadHandler}
 * (503 without one) and answers {@link ReloadOutcome#toJson()}: 200 when applied or unchanged, 422 when
 * refused. The reload runs off the event loop; the connection reads nothing more until it is answered.
 *
 * <p>{@code GET /rocketmq/nsaddr} (and any {@code /rocketmq/SUBGROUP}, with or without a unit suffix or
 * query) answers the gateway's own address, {@code host:port}, as a RocketMQ address server does, so
 * clients that find their name servers over HTTP ({@code rocketmq.namesrv.domain}) find the gateway. 503
 * before the listener is bound and while draining.
 *
 * <p>Browsers are kept out ({@link AdminAccess}): a request whose {@code Host} is not the admin address, or that
 * carries an {@code Origin} other than the admin's own, is refused with 403 (a page in a browser on this machine
 * can neither post to {@code /reload} nor read {@code /metrics} through DNS rebinding); {@code POST /reload}
 * takes no body but JSON (415), so a cross-site form or {@code text/plain} post never runs it. With a token
 * configured, {@code /reload} (and {@code /metrics} if asked) need {@code Authorization: Bearer <token>} (401).
 */
public final class AdminServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(AdminServer.class);

    public static final String METRICS_PATH = "/metrics";
    public static final String LIVE_PATH = "/health/live";
    public static final String READY_PATH = "/health/ready";
    public static final String RELOAD_PATH = "/reload";
    /** Where RocketMQ clients look for name servers by default ({@code MixAll.getWSAddr()}: subgroup nsaddr). */
    public static final String NSADDR_PATH = "/rocketmq/nsaddr";
    private static final String NSADDR_PREFIX = "/rocketmq/";
    private static final String JSON_TYPE = "application/json; charset=utf-8";

    private static final String TEXT = "text/plain; charset=utf-8";
    private static final String ALLOW = "GET, HEAD";
    private static final int MAX_REQUEST_BYTES = 64 * 1024;
    private static final int IDLE_SECONDS = 60;

    private final EventLoopGroup group;
    private final Channel channel;
    private final GatewayMetrics metrics;
    private final Gauge readyGauge;
    private final Hooks hooks;
    private volatile boolean closed;

    private AdminServer(EventLoopGroup group, Channel channel, GatewayMetrics metrics, Gauge readyGauge, Hooks hooks) {
        this.group = group;
        this.channel = channel;
        this.metrics = metrics;
        this.readyGauge = readyGauge;
        this.hooks = hooks;
    }

    /** What the gateway plugs in once it exists; read per request. */
    private static final class Hooks {
        volatile Supplier<CompletableFuture<ReloadOutcome>> reload;
        volatile Supplier<String> namesrvAddress;
        volatile AdminAccess access;
    }

    /** What {@code POST /reload} runs; null makes it answer 503. */
    public void reloadHandler(Supplier<CompletableFuture<ReloadOutcome>> handler) {
        hooks.reload = handler;
    }

    /** The address {@code GET /rocketmq/nsaddr} answers ({@code host:port}); null makes it answer 503. */
    public void namesrvAddress(Supplier<String> address) {
        hooks.namesrvAddress = address;
    }

    /** Binds {@code listen} (the {@code admin.listen} setting), without a token. */
    public static AdminServer start(HostPort listen, GatewayMetrics metrics, Readiness readiness) {
        return start(listen.host(), listen.port(), metrics, readiness);
    }

    /**
     * Binds {@code listen}; {@code token} (null: none) is what {@code /reload}, and {@code /metrics} when
     * {@code tokenProtectsMetrics}, require as {@code Authorization: Bearer <token>}.
     */
    public static AdminServer start(HostPort listen, GatewayMetrics metrics, Readiness readiness, String token,
                                    boolean tokenProtectsMetrics) {
        return start(listen.host(), listen.port(), metrics, readiness, token, tokenProtectsMetrics);
    }

    /** As {@link #start(HostPort, GatewayMetrics, Readiness, String, boolean)} on {@code host:port}. */
    public static AdminServer start(String host, int port, GatewayMetrics metrics, Readiness readiness, String token,
                                    boolean tokenProtectsMetrics) {
        AdminServer server = start(host, port, metrics, readiness);
        server.hooks.access = new AdminAccess(host, server.localAddress().getPort(), token, tokenProtectsMetrics);
        return server;
    }

    /**
     * Binds {@code host:port}; port 0 picks a free port ({@link #localAddress()} tells which).
     *
     * @throws UncheckedIOException when the address cannot be bound, naming it
     */
    public static AdminServer start(String host, int port, GatewayMetrics metrics, Readiness readiness) {
        EventLoopGroup group = new NioEventLoopGroup(1, new DefaultThreadFactory("rmqgw-admin", true));
        Hooks hooks = new Hooks();
        Channel channel;
        try {
            channel = new ServerBootstrap()
                .group(group)
                .channel(NioServerSocketChannel.class)
                .option(ChannelOption.SO_REUSEADDR, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                            .addLast("idle", new ReadTimeoutHandler(IDLE_SECONDS))
                            .addLast("http", new HttpServerCodec())
                            .addLast("keep-alive", new HttpServerKeepAliveHandler())
                            .addLast("aggregate", new HttpObjectAggregator(MAX_REQUEST_BYTES))
                            .addLast("admin", new Handler(metrics, readiness, hooks));
                    }
                })
                .bind(host, port)
                .syncUninterruptibly()
                .channel();
        } catch (Exception e) {
            group.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            String where = host + ":" + port;
            if (e instanceof IOException io) {
                throw new UncheckedIOException("cannot open the admin port on " + where + ": " + io.getMessage(), io);
            }
            throw new IllegalStateException("cannot open the admin port on " + where + ": " + e, e);
        }
        Gauge ready = Gauge.builder("rmqgw.ready", readiness, r -> r.isReady() ? 1 : 0)
            .description("Whether /health/ready answers 200 (1) or 503 (0)")
            .strongReference(true)
            .register(metrics.registry());
        hooks.access = new AdminAccess(host, ((InetSocketAddress) channel.localAddress()).getPort(), null, false);
        AdminServer server = new AdminServer(group, channel, metrics, ready, hooks);
        log.info("admin port on {}: {}, {}, {}, {} (POST), {}", server.localAddress(), METRICS_PATH, LIVE_PATH,
            READY_PATH, RELOAD_PATH, NSADDR_PATH);
        return server;
    }

    public InetSocketAddress localAddress() {
        return (InetSocketAddress) channel.localAddress();
    }

    /** Closes the port and its connections; waits at most about a second. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        metrics.registry().remove(readyGauge);
        channel.close().syncUninterruptibly();
        group.shutdownGracefully(0, 200, TimeUnit.MILLISECONDS).awaitUninterruptibly(1, TimeUnit.SECONDS);
    }

    /** One per connection (not shared): requests on a connection are answered in order. */
    private static final class Handler extends SimpleChannelInboundHandler<FullHttpRequest> {

        private final GatewayMetrics metrics;
        private final Readiness readiness;
        private final Hooks hooks;

        Handler(GatewayMetrics metrics, Readiness readiness, Hooks hooks) {
            this.metrics = metrics;
            this.readiness = readiness;
            this.hooks = hooks;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            if (!request.decoderResult().isSuccess()) {
                respond(ctx, request, HttpResponseStatus.BAD_REQUEST, TEXT, "bad request\n", true);
                return;
            }
            String path = new QueryStringDecoder(request.uri()).path();
            AdminAccess access = hooks.access;
            String refusal = access.browserRefusal(request.headers());
            if (refusal != null) {
                log.debug("admin: refused {} {} from {}: {}", request.method(), path, ctx.channel().remoteAddress(),
                    refusal);
                respond(ctx, request, HttpResponseStatus.FORBIDDEN, TEXT, "forbidden: " + refusal + "\n", false);
                return;
            }
            boolean needsToken = RELOAD_PATH.equals(path) || (METRICS_PATH.equals(path) && access.tokenProtectsMetrics());
            if (needsToken && !access.authorized(request.headers().get(HttpHeaderNames.AUTHORIZATION))) {
                FullHttpResponse denied = textResponse(ctx, request.method(), HttpResponseStatus.UNAUTHORIZED,
                    "unauthorized: " + path + " needs Authorization: Bearer <admin.token>\n");
                denied.headers().set(HttpHeaderNames.WWW_AUTHENTICATE, "Bearer realm=\"rmqgw-admin\"");
                ctx.writeAndFlush(denied);
                return;
            }
            if (RELOAD_PATH.equals(path)) {
                reload(ctx, request);
                return;
            }
            if (path.startsWith(NSADDR_PREFIX) && path.length() > NSADDR_PREFIX.length()
                && path.indexOf('/', NSADDR_PREFIX.length()) < 0) {
                namesrvAddress(ctx, request);
                return;
            }
            boolean known = METRICS_PATH.equals(path) || LIVE_PATH.equals(path) || READY_PATH.equals(path);
            if (!known) {
                respond(ctx, request, HttpResponseStatus.NOT_FOUND, TEXT,
                    "not found; the admin port serves " + METRICS_PATH + ", " + LIVE_PATH + ", " + READY_PATH + ", "
                        + NSADDR_PATH + " and " + RELOAD_PATH + " (POST)\n",
                    false);
                return;
            }
            HttpMethod method = request.method();
            if (!HttpMethod.GET.equals(method) && !HttpMethod.HEAD.equals(method)) {
                respond(ctx, request, HttpResponseStatus.METHOD_NOT_ALLOWED, TEXT,
                    method + " not allowed on " + path + "; use GET\n", false);
                return;
            }
            switch (path) {
                case METRICS_PATH -> metrics(ctx, request);
                case LIVE_PATH -> respond(ctx, request, HttpResponseStatus.OK, TEXT, "live\n", false);
                default -> {
                    String reason = readiness.notReadyReason();
                    if (reason == null) {
                        respond(ctx, request, HttpResponseStatus.OK, TEXT, "ready\n", false);
                    } else {
                        respond(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, TEXT,
                            "not ready: " + reason + "\n", false);
                    }
                }
            }
        }

        private void namesrvAddress(ChannelHandlerContext ctx, FullHttpRequest request) {
            if (!HttpMethod.GET.equals(request.method()) && !HttpMethod.HEAD.equals(request.method())) {
                respond(ctx, request, HttpResponseStatus.METHOD_NOT_ALLOWED, TEXT,
                    request.method() + " not allowed on " + NSADDR_PATH + "; use GET\n", false);
                return;
            }
            Supplier<String> address = hooks.namesrvAddress;
            if (address == null || readiness.isDraining()) {
                respond(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, TEXT,
                    address == null ? "the gateway is not listening yet\n" : "the gateway is draining\n", false);
                return;
            }
            // no newline: some address-server readers split on ';' without trimming
            respond(ctx, request, HttpResponseStatus.OK, TEXT, address.get(), false);
        }

        private void reload(ChannelHandlerContext ctx, FullHttpRequest request) {
            if (!HttpMethod.POST.equals(request.method())) {
                respond(ctx, request.method(), HttpResponseStatus.METHOD_NOT_ALLOWED, TEXT,
                    request.method() + " not allowed on " + RELOAD_PATH + "; use POST\n", false, "POST");
                return;
            }
            String typeRefusal = AdminAccess.reloadBodyRefusal(request.headers().get(HttpHeaderNames.CONTENT_TYPE),
                request.content().readableBytes());
            if (typeRefusal != null) {
                respond(ctx, request, HttpResponseStatus.UNSUPPORTED_MEDIA_TYPE, JSON_TYPE,
                    ReloadOutcome.refused(typeRefusal).toJson() + "\n", false);
                return;
            }
            Supplier<CompletableFuture<ReloadOutcome>> handler = hooks.reload;
            if (handler == null) {
                respond(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, JSON_TYPE,
                    ReloadOutcome.refused("reload is not available: the gateway runs without a reloadable"
                        + " configuration").toJson() + "\n", false);
                return;
            }
            HttpMethod method = request.method();
            // answer in order: read nothing more on this connection until the reload is answered
            ctx.channel().config().setAutoRead(false);
            CompletableFuture<ReloadOutcome> pending;
            try {
                pending = handler.get();
            } catch (RuntimeException e) {
                pending = CompletableFuture.failedFuture(e);
            }
            pending.whenComplete((outcome, error) -> ctx.executor().execute(() -> {
                ReloadOutcome o = error == null ? outcome : ReloadOutcome.refused("reload failed: " + error);
                HttpResponseStatus status = o.result() == ReloadOutcome.Result.REFUSED
                    ? HttpResponseStatus.UNPROCESSABLE_ENTITY : HttpResponseStatus.OK;
                respond(ctx, method, status, JSON_TYPE, o.toJson() + "\n", false, null);
                ctx.channel().config().setAutoRead(true);
            }));
        }

        private void metrics(ChannelHandlerContext ctx, FullHttpRequest request) {
            if (!metrics.exportsPrometheus()) {
                respond(ctx, request, HttpResponseStatus.SERVICE_UNAVAILABLE, TEXT,
                    "metrics are kept in memory only (no Prometheus registry)\n", false);
                return;
            }
            String body;
            try {
                body = metrics.scrape();
            } catch (RuntimeException e) {
                log.warn("metrics scrape failed", e);
                respond(ctx, request, HttpResponseStatus.INTERNAL_SERVER_ERROR, TEXT, "scrape failed: " + e + "\n", false);
                return;
            }
            respond(ctx, request, HttpResponseStatus.OK, GatewayMetrics.PROMETHEUS_CONTENT_TYPE, body, false);
        }

        private static void respond(ChannelHandlerContext ctx, FullHttpRequest request, HttpResponseStatus status,
                                    String contentType, String body, boolean close) {
            respond(ctx, request.method(), status, contentType, body, close, ALLOW);
        }

        private static FullHttpResponse textResponse(ChannelHandlerContext ctx, HttpMethod method,
                                                     HttpResponseStatus status, String body) {
            boolean head = HttpMethod.HEAD.equals(method);
            int length = ByteBufUtil.utf8Bytes(body);
            ByteBuf content = head ? Unpooled.EMPTY_BUFFER : ctx.alloc().buffer(length);
            if (!head) {
                content.writeCharSequence(body, StandardCharsets.UTF_8);
            }
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
            response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, TEXT)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, length)
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
            return response;
        }

        private static void respond(ChannelHandlerContext ctx, HttpMethod method, HttpResponseStatus status,
                                    String contentType, String body, boolean close, String allow) {
            boolean head = HttpMethod.HEAD.equals(method);
            int length = ByteBufUtil.utf8Bytes(body);
            ByteBuf content;
            if (head) {
                content = Unpooled.EMPTY_BUFFER;
            } else {
                content = ctx.alloc().buffer(length);
                content.writeCharSequence(body, StandardCharsets.UTF_8);
            }
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content);
            response.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .setInt(HttpHeaderNames.CONTENT_LENGTH, length)
                .set(HttpHeaderNames.CACHE_CONTROL, HttpHeaderValues.NO_STORE);
            if (status == HttpResponseStatus.METHOD_NOT_ALLOWED && allow != null) {
                response.headers().set(HttpHeaderNames.ALLOW, allow);
            }
            if (close) {
                HttpUtil.setKeepAlive(response, false);
                ctx.writeAndFlush(response).addListener(ChannelFutureListener.CLOSE);
            } else {
                // HttpServerKeepAliveHandler closes after the answer when the request asked for it
                ctx.writeAndFlush(response);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (!(cause instanceof ReadTimeoutException) && !(cause instanceof IOException)) {
                log.warn("admin connection {}", ctx.channel().remoteAddress(), cause);
            }
            ctx.close();
        }
    }
}
