package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import org.apache.rocketmq.common.MQVersion;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.PullMessageResponseHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeader;
import org.apache.rocketmq.remoting.protocol.header.SendMessageRequestHeaderV2;

/** Frames as clients and brokers put them on the wire, made with rocketmq-remoting itself. */
final class Wire {

    private Wire() {
    }

    /**
     * What a benchmark does with a frame. The benchmark comes in as {@code state}, so that the function captures
     * nothing: a lambda that captures is a new object per call.
     */
    @FunctionalInterface
    interface FrameUse<T> {
        long apply(T state, RemotingFrame frame);
    }

    /**
     * {@code use} applied to the frame {@code wire} as the gateway takes a frame ({@code FrameDecoder.parse} of a
     * retained duplicate), released after.
     */
    static <T> long withFrame(ByteBuf wire, T state, FrameUse<T> use) {
        RemotingFrame frame = FrameDecoder.parse(wire.retainedDuplicate());
        try {
            return use.apply(state, frame);
        } finally {
            frame.release();
        }
    }

    /**
     * A SEND_MESSAGE_V2 request as a 4.9.7 DefaultMQProducer sends it: the V1 header its
     * sendKernelImpl fills, turned into V2 by createSendMessageRequestHeaderV2 (k and m are primitive
     * booleans in 4.9.7, so always present; n is the target broker), JSON-encoded by RemotingCommand.
     */
    static RemotingCommand sendV2(byte[] body) {
        SendMessageRequestHeader v1 = new SendMessageRequestHeader();
        v1.setProducerGroup("please_rename_unique_group_name");
        v1.setTopic("TopicTest");
        v1.setDefaultTopic("TBW102");
        v1.setDefaultTopicQueueNums(4);
        v1.setQueueId(2);
        v1.setSysFlag(0);
        v1.setBornTimestamp(1_714_000_000_123L);
        v1.setFlag(0);
        // MessageDecoder.messageProperties2String of a message with tags, waitStoreMsgOK and the unique key
        v1.setProperties("UNIQ_KEY\u00017F0000010F7A18B4AAC27D7B3E6F0000\u0002WAIT\u0001true\u0002TAGS\u0001TagA\u0002");
        v1.setReconsumeTimes(0);
        v1.setUnitMode(false);
        v1.setMaxReconsumeTimes(16);
        v1.setBatch(false);
        v1.setBrokerName("broker-a");
        SendMessageRequestHeaderV2 v2 = SendMessageRequestHeaderV2.createSendMessageRequestHeaderV2(v1);
        RemotingCommand cmd = RemotingCommand.createRequestCommand(RequestCode.SEND_MESSAGE_V2, v2);
        cmd.setVersion(MQVersion.Version.V4_9_7.ordinal());
        cmd.setOpaque(1234);
        cmd.setBody(body);
        return cmd;
    }

    /** A pull response header as a broker answers a found pull. */
    static RemotingCommand pullResponse() {
        RemotingCommand cmd = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
        PullMessageResponseHeader h = new PullMessageResponseHeader();
        h.setSuggestWhichBrokerId(0L);
        h.setNextBeginOffset(1_042_301L);
        h.setMinOffset(0L);
        h.setMaxOffset(1_042_417L);
        h.setOffsetDelta(null);
        h.setTopicSysFlag(0);
        h.setGroupSysFlag(0);
        h.setForbiddenType(null);
        cmd.writeCustomHeader(h);
        cmd.setOpaque(4321);
        cmd.setVersion(MQVersion.Version.V5_3_2.ordinal());
        return cmd;
    }

    /**
     * rocketmq-remoting 5.4.0 re-encoding the whole frame {@code wire} in {@code to} into {@code out} (cleared
     * first): {@code RemotingCommand.decode} of the frame without its length field, then {@code fastEncodeHeader}.
     * {@code framed}: the frame handed to the decode as rocketmq-remoting's NettyDecoder hands it, a retained slice
     * released after the decode (what the gateway variants pay for theirs: {@code FrameDecoder.parse} of a
     * retained duplicate, released after use); otherwise an unretained duplicate, as the earlier runs measured.
     */
    static int remotingTranscode(ByteBuf wire, SerializeType to, ByteBuf out, boolean framed) throws Exception {
        RemotingCommand cmd;
        if (framed) {
            ByteBuf frame = wire.retainedSlice(wire.readerIndex() + 4, wire.readableBytes() - 4);
            try {
                cmd = RemotingCommand.decode(frame);
            } finally {
                frame.release();
            }
        } else {
            ByteBuf in = wire.duplicate();
            in.skipBytes(4); // NettyDecoder strips the length field
            cmd = RemotingCommand.decode(in);
        }
        cmd.setSerializeTypeCurrentRPC(to);
        out.clear();
        cmd.fastEncodeHeader(out);
        return out.writerIndex();
    }

    /** The readable bytes of {@code buf}. */
    static byte[] bytes(ByteBuf buf) {
        byte[] b = new byte[buf.readableBytes()];
        buf.getBytes(buf.readerIndex(), b);
        return b;
    }

    /** The whole frame (length prefix included) in {@code type}, as rocketmq-remoting's NettyEncoder writes it. */
    static ByteBuf frame(RemotingCommand cmd, SerializeType type) {
        cmd.setSerializeTypeCurrentRPC(type);
        ByteBuf heap = Unpooled.buffer();
        cmd.fastEncodeHeader(heap);
        if (cmd.getBody() != null) {
            heap.writeBytes(cmd.getBody());
        }
        // as a frame arrives from a socket: pooled direct memory
        ByteBuf direct = PooledByteBufAllocator.DEFAULT.directBuffer(heap.readableBytes());
        direct.writeBytes(heap);
        heap.release();
        return direct;
    }
}
