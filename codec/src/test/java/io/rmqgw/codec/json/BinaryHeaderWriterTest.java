package io.rmqgw.codec.json;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.apache.rocketmq.remoting.protocol.LanguageCode;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RemotingSerializable;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.RocketMQSerializable;
import org.junit.jupiter.api.Test;

/** The binary header the single pass writes: byte for byte rocketmq-remoting's, and the notes taken on the way. */
class BinaryHeaderWriterTest {

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static JsonToBinary transcoded(byte[] json) {
        JsonToBinary t = JsonToBinary.get();
        assertTrue(t.transcode(Unpooled.wrappedBuffer(json), 0, json.length),
            () -> new String(json, StandardCharsets.UTF_8) + ": " + t.scanner().stop() + " at " + t.scanner().stopAt());
        return t;
    }

    private static byte[] result(JsonToBinary t) {
        return Arrays.copyOfRange(t.bytes(), JsonToBinary.HEAD_ROOM, JsonToBinary.HEAD_ROOM + t.length());
    }

    private static List<RemotingCommand> commands() {
        RemotingCommand send = RemotingCommand.createRequestCommand(RequestCode.SEND_MESSAGE_V2, null);
        send.addExtField("a", "please_rename_unique_group_name");
        send.addExtField("b", "TopicTest");
        send.addExtField("i", "KEYS\u0001k1\u0002TAGS\u0001\u4e2d\u6587\u0002");
        send.addExtField("bname", "broker-a");
        send.setOpaque(-17);
        RemotingCommand pull = RemotingCommand.createRequestCommand(RequestCode.PULL_MESSAGE, null);
        pull.addExtField("consumerGroup", "g\"q\\uote");
        pull.addExtField("queueOffset", "9223372036854775807");
        pull.setLanguage(LanguageCode.GO);
        pull.setVersion(401);
        RemotingCommand answer = RemotingCommand.createResponseCommand(0, "caf\u00e9 \uD83D\uDE00");
        answer.addExtField("msgId", "7F00000100002A9F0000000000000000");
        answer.addExtField("queueId", "3");
        answer.setFlag(3);
        RemotingCommand bare = RemotingCommand.createRequestCommand(RequestCode.HEART_BEAT, null);
        return List.of(send, pull, answer, bare);
    }

    @Test
    void theBinaryHeaderIsRocketmqRemotingsByteForByte() {
        for (RemotingCommand cmd : commands()) {
            byte[] json = RemotingSerializable.encode(cmd); // the JSON header rocketmq-remoting writes
            byte[] theirs = RocketMQSerializable.rocketMQProtocolEncode(cmd);
            assertArrayEquals(theirs, result(transcoded(json)), () -> new String(json, StandardCharsets.UTF_8));
        }
    }

    @Test
    void entriesAreWrittenAsTheScannerReadsThem() {
        JsonScanner s = new JsonScanner();
        BinaryHeaderWriter w = new BinaryHeaderWriter();
        byte[] json = utf8("{\"k\":\"v\", \"key\" : 12 ,\"n\":null,\"t\":true}x");
        s.load(Unpooled.wrappedBuffer(json), 0, json.length);
        byte[] o = w.begin(json.length);
        s.p = 1;
        int end = w.entries(s, o, BinaryHeaderWriter.ENTRIES_AT);
        assertEquals(json.length - 1, s.p, "past the closing brace");
        byte[] expected = {0, 1, 'k', 0, 0, 0, 1, 'v', 0, 3, 'k', 'e', 'y', 0, 0, 0, 2, '1', '2', 0, 1, 't', 0, 0, 0, 4,
            't', 'r', 'u', 'e'};
        assertArrayEquals(expected, Arrays.copyOfRange(o, BinaryHeaderWriter.ENTRIES_AT, end));
        assertEquals(3, w.entryCount(), "the null one dropped");
        assertEquals(1, w.longKeyCount());
        assertTrue(w.hasOneByteKey('k') && w.hasOneByteKey('t') && !w.hasOneByteKey('n'));
        assertEquals(0, w.oneByteKeyOffset('k'));
        assertEquals(19, w.oneByteKeyOffset('t'));

        byte[] remark = utf8("hi");
        w.finish(o, end, remark, remark.length, 10, (byte) 0, 1, 2, 3);
        assertEquals(EnvelopeFields.MIN_LENGTH + 2 + expected.length, w.length());
        byte[] head = Arrays.copyOfRange(w.bytes(), BinaryHeaderWriter.HEAD_ROOM, BinaryHeaderWriter.HEAD_ROOM + 23);
        assertArrayEquals(new byte[] {0, 10, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 2, 'h', 'i', 0, 0, 0,
            (byte) expected.length}, head);
    }

    @Test
    void malformedMembersStopWithTheReasonAndWhere() {
        String[][] cases = {{"{\"k\" \"v\"}", "EXPECTED_COLON", "5"}, {"{\"k\":\"v\" \"j\":1}", "EXPECTED_COMMA_OR_END", "9"},
            {"{1:2}", "EXPECTED_NAME", "1"}, {"{\"k\":[]}", "NESTED_VALUE", "5"}};
        for (String[] c : cases) {
            JsonScanner s = new JsonScanner();
            byte[] json = utf8(c[0]);
            s.load(Unpooled.wrappedBuffer(json), 0, json.length);
            s.p = 1;
            BinaryHeaderWriter w = new BinaryHeaderWriter();
            assertEquals(-1, w.entries(s, w.begin(json.length), BinaryHeaderWriter.ENTRIES_AT), c[0]);
            assertEquals(c[1], s.stop().name(), c[0]);
            assertEquals(Integer.parseInt(c[2]), s.stopAt(), c[0]);
        }
    }

    @Test
    void theMsgIdValueIsLocatedOnlyWhenItIsThereOnceAsItStands() {
        String json = "{\"code\":0,\"extFields\":{\"msgId\":\"AB12\",\"queueId\":\"1\"}}";
        long located = transcoded(utf8(json)).locatedValue();
        assertEquals(json.indexOf("AB12"), located >>> 32);
        assertEquals(4, (int) located);
        assertEquals(JsonToBinary.NOT_LOCATED,
            transcoded(utf8("{\"code\":0,\"extFields\":{\"msgId\":\"A\\u0042\"}}")).locatedValue(), "escaped");
        assertEquals(JsonToBinary.NOT_LOCATED,
            transcoded(utf8("{\"code\":0,\"extFields\":{\"msgId\":\"A\",\"msgId\":\"B\"}}")).locatedValue(), "twice");
        assertEquals(JsonToBinary.NOT_LOCATED, transcoded(utf8("{\"code\":0}")).locatedValue(), "absent");
    }

    @Test
    void aResultGivenAwayIsForgottenAndItsReplacementWrittenNext() {
        JsonToBinary t = transcoded(utf8("{\"code\":1,\"extFields\":{\"a\":\"x\"}}"));
        byte[] result = t.bytes();
        long stamp = t.stamp();
        byte[] replacement = new byte[2048];
        Object view = new Object();
        assertSame(result, t.handOver(replacement, view));
        assertNotEquals(stamp, t.stamp(), "forgotten");
        assertFalse(t.holds(stamp));
        transcoded(utf8("{\"code\":2}"));
        assertSame(replacement, t.bytes());
        byte[] again = t.handOver(null, null);
        assertSame(replacement, again);
        assertSame(view, t.handedView(), "the view left with the array comes back with it");
    }
}
