package io.rmqgw.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import org.junit.jupiter.api.Test;

class RestartBoundSettingsTest {

    private static final String BASE = "upstream: {namesrv: ['127.0.0.1:9876']}\n";

    /** What a reload leaves in force is what GET /config shows and the next reload compares against. */
    @Test
    void aReloadKeepsTheClustersAndLogicalTopicsItApplied() {
        GatewayConfig current = ConfigLoader.parse(BASE);
        GatewayConfig next = ConfigLoader.parse(BASE + "clusters:\n  idc2: {namesrv: ['127.0.0.2:9876']}\n"
            + "logical-topics:\n  - {topic: Orders, clusters: [default, idc2]}\n");

        GatewayConfig inForce = RestartBoundSettings.inForce(current, next);

        assertEquals(next.clusters(), inForce.clusters());
        assertEquals(next.logicalTopics(), inForce.logicalTopics());
        // and taking them away again is in force too
        assertEquals(0, RestartBoundSettings.inForce(inForce, current).logicalTopics().size());
    }

    @Test
    void restartBoundSettingsStayAsStarted() {
        GatewayConfig current = ConfigLoader.parse(BASE);
        GatewayConfig next = ConfigLoader.parse(BASE + "max-frame-length: 2048\n");
        assertEquals(current.maxFrameLength(), RestartBoundSettings.inForce(current, next).maxFrameLength());
    }
}
