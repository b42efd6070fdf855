package io.rmqgw.gateway.reload;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rmqgw.gateway.testing.Routes;
import io.rmqgw.testing.ScriptedPeer;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.Map;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.common.namesrv.DefaultTopAddressing;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gateway as an address server: {@code GET /rocketmq/nsaddr} on the admin port answers its advertised
 * address, and RocketMQ's own {@code DefaultTopAddressing} (what clients without a namesrvAddr use, URL from
 * {@code MixAll.getWSAddr()} and {@code -Drocketmq.namesrv.domain=HOST:PORT}) reads it.
 */
@Timeout(30)
class NamesrvAddressEndpointTest {

    private static final String DOMAIN = "rocketmq.namesrv.domain";
    private static final String SUBGROUP = "rocketmq.namesrv.domain.subgroup";

    @TempDir
    Path dir;

    private ScriptedPeer namesrv;
    private YamlGateway gw;
    private String savedDomain;
    private String savedSubgroup;

    @BeforeEach
    void start() throws Exception {
        savedDomain = System.getProperty(DOMAIN);
        savedSubgroup = System.getProperty(SUBGROUP);
        namesrv = ScriptedPeer.start(Routes.nameServer(Map.of()));
        gw = new YamlGateway(dir, namesrv.address());
        // clients are told the advertised host, not the listen host
        gw.start(gw.yaml("5s", 127, "advertise-host: localhost\n"));
    }

    @AfterEach
    void stop() {
        restore(DOMAIN, savedDomain);
        restore(SUBGROUP, savedSubgroup);
        gw.close();
        namesrv.close();
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }

    @Test
    void answersTheAdvertisedAddressAsAnAddressServerDoes() throws Exception {
        String expected = "localhost:" + gw.listen;
        HttpResponse<String> r = gw.get("/rocketmq/nsaddr");
        assertEquals(200, r.statusCode());
        assertEquals(expected, r.body());
        assertTrue(r.headers().firstValue("content-type").orElse("").startsWith("text/plain"));
        // another subgroup, a unit suffix and a query answer the same
        assertEquals(expected, gw.get("/rocketmq/nsaddr-unit1?nofix=1").body());
        assertEquals(expected, gw.get("/rocketmq/other").body());
        assertEquals(404, gw.get("/rocketmq/").statusCode());
        assertEquals(404, gw.get("/rocketmq/nsaddr/x").statusCode());
        assertEquals(405, gw.post("/rocketmq/nsaddr").statusCode());
    }

    @Test
    void rocketMqTopAddressingFindsTheGateway() {
        System.setProperty(DOMAIN, "127.0.0.1:" + gw.admin);
        System.clearProperty(SUBGROUP);
        String url = MixAll.getWSAddr();
        assertEquals("http://127.0.0.1:" + gw.admin + "/rocketmq/nsaddr", url, "the client's URL for a domain with a port");
        assertEquals("localhost:" + gw.listen, new DefaultTopAddressing(url).fetchNSAddr());
        // with a unit name, as clients with unitName set ask
        assertEquals("localhost:" + gw.listen, new DefaultTopAddressing(url, "unit1").fetchNSAddr());
        System.setProperty(SUBGROUP, "nsaddr-gw");
        assertEquals("localhost:" + gw.listen, new DefaultTopAddressing(MixAll.getWSAddr()).fetchNSAddr());
    }

    @Test
    void aDrainingGatewayStopsAnswering() throws Exception {
        gw.gateway.readiness().draining();
        HttpResponse<String> r = gw.get("/rocketmq/nsaddr");
        assertEquals(503, r.statusCode());
        assertTrue(r.body().contains("draining"), r.body());
    }
}
