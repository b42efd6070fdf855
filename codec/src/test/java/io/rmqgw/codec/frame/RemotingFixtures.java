package io.rmqgw.codec.frame;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.apache.rocketmq.remoting.exception.RemotingCommandException;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.PullMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeaderV2;

/** Frames made and read by rocketmq-remoting itself, and small byte helpers. */
final class RemotingFixtures {

    static final String UNICODE = "héllo ✓ \uD83D\uDE80 \"quoted\" back\\slash\ttab \u0001\u0002";

    private RemotingFixtures() {
    }

    static PullMessageRequestHeader pullHeader() {
        PullMessageRequestHeader h = new PullMessageRequestHeader();
        h.setConsumerGroup("please_rename_unique_group_name");
        h.setTopic("TopicTest");
        h.setQueueId(3);
        h.setQueueOffset(1024L);
        h.setMaxMsgNums(32);
        h.setSysFlag(3);
        h.setCommitOffset(1000L);
        h.setSuspendTimeoutMillis(15000L);
        h.setSubscription("TagA || TagB");
        h.setSubVersion(1_700_000_000_000L);
        h.setExpressionType("TAG");
        h.setBrokerName("broker-a");
        return h;
    }

    static SendMessageRequestHeaderV2 sendHeader() {
        SendMessageRequestHeaderV2 h = new SendMessageRequestHeaderV2();
        h.setA("producer_group");
        h.setB("TopicTest");
        h.setC("TBW102");
        h.setD(4);
        h.setE(1);
        h.setF(0);
        h.setG(1_700_000_000_000L);
        h.setH(0);
        h.setI("KEYS\u0001order-1\u0002UNIQ_KEY\u00017F000001000018B4AAC2\u0002WAIT\u0001true\u0002");
        h.setJ(0);
        h.setK(false);
        h.setM(false);
        h.setBname("broker-a");
        return h;
    }

    /** A pull request with an unknown extra field, a remark and the given serialization. */
    static RemotingCommand pullRequest(SerializeType type) {
        RemotingCommand cmd = RemotingCommand.createRequestCommand(RequestCode.PULL_MESSAGE, pullHeader());
        cmd.setSerializeTypeCurrentRPC(type);
        cmd.setVersion(453);
        cmd.setRemark(UNICODE);
        cmd.addExtField("x-unknown-extension", "value " + UNICODE);
        return cmd;
    }

    static RemotingCommand sendRequest(SerializeType type, byte[] body) {
        RemotingCommand cmd = RemotingCommand.createRequestCommand(RequestCode.SEND_MESSAGE_V2, sendHeader());
        cmd.setSerializeTypeCurrentRPC(type);
        cmd.setVersion(401);
        cmd.setBody(body);
        cmd.addExtField("Signature", "c2lnbmF0dXJl");
        return cmd;
    }

    /** The whole frame as RemotingCommand.encode() writes it (header through reflection/map). */
    static byte[] encode(RemotingCommand cmd) {
        ByteBuffer b = cmd.encode();
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** The whole frame as rocketmq's NettyEncoder writes it: fastEncodeHeader (FastCodesHeader path) + body. */
    static byte[] fastEncode(RemotingCommand cmd) {
        ByteBuf out = Unpooled.buffer();
        cmd.fastEncodeHeader(out);
        if (cmd.getBody() != null) {
            out.writeBytes(cmd.getBody());
        }
        return bytes(out);
    }

    /** Decodes a whole frame (length prefix included) with rocketmq-remoting. */
    static RemotingCommand decodeWithRocketMq(byte[] frame) throws RemotingCommandException {
        return RemotingCommand.decode(ByteBuffer.wrap(frame, 4, frame.length - 4));
    }

    static RemotingCommand decodeWithRocketMq(ByteBuf frame) throws RemotingCommandException {
        byte[] bytes = bytes(frame);
        if (ByteBuffer.wrap(bytes).getInt() != bytes.length - 4) {
            throw new AssertionError("length prefix " + ByteBuffer.wrap(bytes).getInt() + " for " + bytes.length + " bytes");
        }
        return decodeWithRocketMq(bytes);
    }

    static SerializeType serializeTypeOf(ByteBuf frame) {
        return SerializeType.valueOf((byte) frame.getByte(frame.readerIndex() + 4));
    }

    static byte[] bytes(ByteBuf buf) {
        byte[] out = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), out);
        return out;
    }

    /** A pooled direct copy: tracked by the leak detector. */
    static ByteBuf pooled(byte[] bytes) {
        ByteBuf b = PooledByteBufAllocator.DEFAULT.directBuffer(bytes.length);
        b.writeBytes(bytes);
        return b;
    }

    static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** length prefix + (type << 24 | header length) + header + body. */
    static byte[] frame(int type, byte[] header, byte[] body) {
        ByteBuffer b = ByteBuffer.allocate(8 + header.length + body.length);
        b.putInt(4 + header.length + body.length);
        b.putInt(type << 24 | header.length);
        b.put(header).put(body);
        return b.array();
    }

    static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] p : parts) {
            length += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(length);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    static EmbeddedChannel decoderChannel() {
        return new EmbeddedChannel(new FrameDecoder(FrameDecoder.DEFAULT_MAX_FRAME_LENGTH));
    }

    /** Every frame the channel has produced so far. */
    static List<RemotingFrame> readAll(EmbeddedChannel channel) {
        List<RemotingFrame> frames = new ArrayList<>();
        for (Object o; (o = channel.readInbound()) != null; ) {
            frames.add((RemotingFrame) o);
        }
        return frames;
    }
}
