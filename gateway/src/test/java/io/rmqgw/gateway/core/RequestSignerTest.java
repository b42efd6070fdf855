package io.rmqgw.gateway.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.rmqgw.gateway.config.ConfigException;
import io.rmqgw.gateway.config.ConfigLoader;
import io.rmqgw.gateway.config.GatewayConfig;
import io.rmqgw.gateway.config.UpstreamAclConfig;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.rocketmq.acl.common.AclClientRPCHook;
import org.apache.rocketmq.acl.common.SessionCredentials;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.junit.jupiter.api.Test;

/** The gateway's signature against rocketmq's own {@code AclClientRPCHook} (5.4.0, the one clients use). */
class RequestSignerTest {

    private static final String AK = "rmqgw_acl";
    private static final String SK = "rmqgw-acl-secret-1";
    private final RequestSigner signer = new RequestSigner(new UpstreamAclConfig(AK, SK));

    /** What the hook adds to a request with these fields and body. */
    private static Map<String, String> hook(Map<String, String> fields, byte[] body) {
        RemotingCommand request = RemotingCommand.createRequestCommand(11, null);
        fields.forEach(request::addExtField);
        request.setBody(body);
        new AclClientRPCHook(new SessionCredentials(AK, SK)).doBeforeRequest("127.0.0.1:10911", request);
        return request.getExtFields();
    }

    @Test
    void signsFieldsAndBodyAsTheHookDoes() {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("topic", "Orders");
        fields.put("queueId", "3");
        fields.put("consumerGroup", "g-ü"); // non-ASCII: the values are hashed as UTF-8
        fields.put("a", "");
        byte[] body = "{\"offsetTable\":{}}".getBytes(StandardCharsets.UTF_8);
        ByteBuf buf = PooledByteBufAllocator.DEFAULT.directBuffer().writeBytes(body);
        try {
            Map<String, String> ours = signer.sign(fields, buf);
            assertEquals(hook(fields, body), ours);
            assertEquals(0, buf.readerIndex(), "the body is read without being consumed");
        } finally {
            buf.release();
        }
    }

    @Test
    void noFieldsAndNoBodyStillSigned() {
        Map<String, String> ours = signer.sign(null, null);
        assertEquals(hook(Map.of(), null), ours);
        assertEquals(AK, ours.get("AccessKey"));
    }

    @Test
    void aBodyInSeveralPartsIsHashedWhole() {
        byte[] first = "first half|".getBytes(StandardCharsets.UTF_8);
        byte[] second = "second half".getBytes(StandardCharsets.UTF_8);
        CompositeByteBuf body = PooledByteBufAllocator.DEFAULT.compositeDirectBuffer();
        body.addComponent(true, PooledByteBufAllocator.DEFAULT.directBuffer().writeBytes(first));
        body.addComponent(true, PooledByteBufAllocator.DEFAULT.heapBuffer().writeBytes(second));
        try {
            byte[] whole = new byte[first.length + second.length];
            System.arraycopy(first, 0, whole, 0, first.length);
            System.arraycopy(second, 0, whole, first.length, second.length);
            assertEquals(hook(Map.of("k", "v"), whole), signer.sign(Map.of("k", "v"), body));
        } finally {
            body.release();
        }
    }

    @Test
    void aClientsCredentialsCopiedIntoTheRequestAreReplaced() {
        Map<String, String> fields = new HashMap<>();
        fields.put("topic", "Orders");
        fields.put("AccessKey", "someone-else");
        fields.put("Signature", "theirs");
        fields.put("SecurityToken", "their-token");
        Map<String, String> ours = signer.sign(fields, null);
        assertEquals(hook(Map.of("topic", "Orders"), null), ours);
        assertFalse(ours.containsKey("SecurityToken"));
        assertEquals("theirs", fields.get("Signature"), "the caller's map is not modified");
    }

    @Test
    void configNeedsBothKeysAndNeverShowsTheSecret() {
        ConfigException noSecret = assertThrows(ConfigException.class,
            () -> ConfigLoader.parse("upstream:\n  namesrv: [127.0.0.1:9876]\n  acl:\n    access-key: " + AK + "\n"));
        assertTrue(noSecret.getMessage().contains("upstream.acl.secret-key"), noSecret.getMessage());
        GatewayConfig c = ConfigLoader.parse("upstream:\n  namesrv: [127.0.0.1:9876]\n  acl:\n    access-key: " + AK + "\n    secret-key: " + SK + "\n");
        assertEquals(new UpstreamAclConfig(AK, SK), c.upstream().acl());
        assertFalse(c.toString().contains(SK), "toString hides the secret");
        String yaml = ConfigLoader.toYaml(c);
        assertFalse(yaml.contains(SK), yaml);
        assertNull(ConfigLoader.parse(yaml).upstream().acl(), "the dump leaves the credentials out");
        assertNull(RequestSigner.of(null));
    }
}
