package io.rmqgw.gateway.runtime;

import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.EmbeddedConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import java.io.PrintWriter;
import java.util.Map;

/** The few lines that tell a user what a configuration will do. */
public final class Summary {

    private Summary() {
    }

    public static void printPlan(PrintWriter out, GatewayConfig c) {
        out.println("  clients connect to " + c.listen() + (c.listen().host().equals(c.advertiseHost())
            ? "" : " (advertised as " + c.advertiseHost() + ")")
            + "; broker listeners use ports " + c.brokerPorts());
        out.println("  upstream: " + upstream(c));
        out.println("  timeouts: connect " + ConfigLoader.formatDuration(c.upstream().connectTimeout())
            + ", request " + ConfigLoader.formatDuration(c.upstream().requestTimeout())
            + ", long poll " + ConfigLoader.formatDuration(c.upstream().longPollTimeout())
            + ", route cache " + ConfigLoader.formatDuration(c.routes().ttl())
            + ", drain " + ConfigLoader.formatDuration(c.drainTimeout()));
    }

    public static String upstream(GatewayConfig c) {
        EmbeddedConfig e = c.embedded();
        if (e.enabled()) {
            return "embedded RocketMQ (name server 127.0.0.1:" + e.namesrvPort() + ", broker 127.0.0.1:"
                + e.brokerPort() + ", store " + e.storeDir() + ")";
        }
        String url = c.upstream().namesrvAddressUrl();
        if (url != null) {
            return "name servers from " + url + " (polled every "
                + ConfigLoader.formatDuration(c.upstream().namesrvAddressPollInterval()) + ")"
                + (c.upstream().namesrv().isEmpty() ? ""
                : ", " + ConfigLoader.formatAddressList(c.upstream().namesrv()) + " until it answers");
        }
        return "name servers " + ConfigLoader.formatAddressList(c.upstream().namesrv());
    }

    public static void printYaml(PrintWriter out, GatewayConfig c) {
        for (String line : ConfigLoader.toYaml(c).split("\\R")) {
            out.println("  " + line);
        }
    }

    /** What a started gateway runs with: listeners, upstream, admin and reload triggers, how to stop it. */
    public static void printRunning(PrintWriter out, GatewayRunner.Started s) {
        GatewayConfig c = s.config();
        String listenAddress = s.listenAddress() == null ? c.listen().toString()
            : s.listenAddress().getHostString() + ":" + s.listenAddress().getPort();
        out.println("rmqgw is running");
        out.println("  listen            " + listenAddress + "   (clients: namesrvAddr="
            + c.advertiseHost() + ":" + c.listen().port() + ")");
        if (s.brokerListeners().isEmpty()) {
            out.println("  broker listeners  none yet (ports " + c.brokerPorts() + " as brokers appear)");
        } else {
            boolean first = true;
            for (Map.Entry<String, String> e : s.brokerListeners().entrySet()) {
                out.println((first ? "  broker listeners  " : "                    ") + e.getKey() + " -> " + e.getValue());
                first = false;
            }
        }
        out.println("  upstream namesrv  " + (c.upstream().namesrv().isEmpty() ? "none yet"
            : ConfigLoader.formatAddressList(c.upstream().namesrv()))
            + (s.embeddedBroker() == null ? "" : "   (embedded; broker " + s.embeddedBroker()
            + ", store " + c.embedded().storeDir() + ")"));
        if (c.upstream().namesrvAddressUrl() != null) {
            out.println("                    from " + c.upstream().namesrvAddressUrl() + ", polled every "
                + ConfigLoader.formatDuration(c.upstream().namesrvAddressPollInterval()));
        }
        for (String note : s.notes()) {
            out.println("  " + note);
        }
        out.println("Stop with Ctrl-C or SIGTERM: in-flight requests get up to "
            + ConfigLoader.formatDuration(c.drainTimeout()) + " to finish.");
    }
}
