package io.rmqgw.cli;

import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.EmbeddedConfig;
import io.rmqgw.gateway.config.GatewayConfig;
import java.io.PrintWriter;

/** The few lines that tell a user what a configuration will do. */
final class Summary {

    private Summary() {
    }

    static void printPlan(PrintWriter out, GatewayConfig c) {
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

    static String upstream(GatewayConfig c) {
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

    static void printYaml(PrintWriter out, GatewayConfig c) {
        for (String line : ConfigLoader.toYaml(c).split("\\R")) {
            out.println("  " + line);
        }
    }
}
