package io.rmqgw.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rmqgw.gateway.Gateway;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.metrics.GatewayMetrics;
import io.rmqgw.testing.ScriptedPeer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.rocketmq.client.exception.MQClientException;
import org.apache.rocketmq.client.impl.MQClientAPIImpl;
import org.apache.rocketmq.client.producer.DefaultMQProducer;
import org.apache.rocketmq.common.MixAll;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A real RocketMQ 5.4.0 client without a namesrvAddr finds the gateway through the gateway's own address
 * endpoint ({@code GET /rocketmq/nsaddr} on the admin port), as it would an address server: started with
 * {@code -Drocketmq.namesrv.domain=127.0.0.1:ADMINPORT}, it fetches the gateway's address and its name-server
 * requests then go through the gateway.
 */
@Timeout(60)
class NamesrvAddressClientTest {

    private static final String DOMAIN = "rocketmq.namesrv.domain";

    @TempDir
    Path dir;

    private ScriptedPeer namesrv;
    private Gateway gateway;
    private GatewayMetrics metrics;
    private GatewayFiles files;
    private String savedDomain;
    private DefaultMQProducer producer;

    @BeforeEach
    void start() throws Exception {
        assumeTrue(System.getProperty(MixAll.NAMESRV_ADDR_PROPERTY) == null && System.getenv(MixAll.NAMESRV_ADDR_ENV) == null,
            "a name-server address is set for every client in this environment");
        // the client logs through RocketMQ's own logging: keep it out of ~/logs
        Path logs = dir.resolve("rocketmq-logs");
        System.setProperty("rocketmq.client.logRoot", System.getProperty("rocketmq.client.logRoot", logs.toString()));
        System.setProperty("rocketmq.log.root", System.getProperty("rocketmq.log.root", logs.toString()));
        savedDomain = System.getProperty(DOMAIN);
        namesrv = ScriptedPeer.nameServer(null);
        files = new GatewayFiles(dir, "  namesrv: " + namesrv.address() + "\n");
        files.write(files.yaml("5s", 127, ""));
        metrics = GatewayMetrics.inMemory();
        gateway = Gateway.start(ConfigLoader.load(files.file), metrics);
    }

    @AfterEach
    void stop() {
        if (producer != null) {
            producer.shutdown();
        }
        if (savedDomain == null) {
            System.clearProperty(DOMAIN);
        } else {
            System.setProperty(DOMAIN, savedDomain);
        }
        if (gateway != null) {
            gateway.close(Duration.ZERO);
        }
        if (metrics != null) {
            metrics.close();
        }
        if (namesrv != null) {
            namesrv.close();
        }
    }

    @Test
    void aClientWithoutNamesrvAddrFindsTheGatewayOverHttp() throws Exception {
        System.setProperty(DOMAIN, "127.0.0.1:" + files.admin);
        producer = new DefaultMQProducer("rmqgw_nsaddr_test");
        producer.setInstanceName("rmqgw-nsaddr-" + System.nanoTime());
        producer.start(); // no namesrvAddr: the client asks http://127.0.0.1:ADMIN/rocketmq/nsaddr
        MQClientAPIImpl api = producer.getDefaultMQProducerImpl().getMqClientFactory().getMQClientAPIImpl();
        String gatewayAddress = "127.0.0.1:" + files.listen;
        assertEquals(List.of(gatewayAddress), api.getNameServerAddressList());
        assertEquals(gatewayAddress, api.fetchNameServerAddr(), "what its periodic fetch finds too");

        // and its name-server requests go through the gateway to the upstream name server
        MQClientException e = assertThrows(MQClientException.class,
            () -> api.getTopicRouteInfoFromNameServer("NoSuchTopic", 3000));
        assertEquals(ResponseCode.TOPIC_NOT_EXIST, e.getResponseCode(), e.toString());
        assertTrue(namesrv.codes().contains(RequestCode.GET_ROUTEINFO_BY_TOPIC), namesrv.codes().toString());
    }
}
