package io.rmqgw.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.rmqgw.codec.frame.FrameDecoder;
import io.rmqgw.codec.frame.RemotingFrame;
import io.rmqgw.codec.header.CommandHeader;
import io.rmqgw.codec.header.HeaderTranscoder;
import io.rmqgw.codec.header.SendAnswerInPlace;
import io.rmqgw.codec.header.SendResponseHeader;
import io.rmqgw.codec.message.MessageIds;
import io.rmqgw.codec.message.StoreHostMapper;
import org.apache.rocketmq.remoting.protocol.RemotingCommand;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;
import org.apache.rocketmq.remoting.protocol.SerializeType;
import org.apache.rocketmq.remoting.protocol.header.SendMessageResponseHeader;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.TearDown;

/**
 * A broker's JSON answer to a send, on its way to a JSON client with its {@code msgId} rewritten to name the
 * gateway: {@code rocketmqRemoting} is what a Java relay on rocketmq-remoting 5.4.0 does (decode, change the
 * field, encode); {@code gatewayRebuild} is the gateway's decoding path (typed header, {@code put}, the header
 * rendered again), still taken when the answer changes encoding; {@code gatewayInPlace} is the usual path now
 * ({@link SendAnswerInPlace}: the ids rewritten where they lie in the frame). All three give the same ids.
 */
public class SendAnswerBenchmark extends ThroughputBenchmark {

    private static final int LOOPBACK = StoreHostMapper.ipv4(127, 0, 0, 1);
    /**
     * The broker at 127.0.0.1:10911 as the gateway's listener for it on port 21011, and back: a frame rewritten in
     * place is rewritten again on the next call, so every call of every method changes the ids.
     */
    private static final StoreHostMapper GATEWAY = (ip, port) -> ip != LOOPBACK ? StoreHostMapper.UNKNOWN
        : port == 10911 ? StoreHostMapper.pack(ip, 21011) : port == 21011 ? StoreHostMapper.pack(ip, 10911)
        : StoreHostMapper.UNKNOWN;
    private static final String MSG_ID = "msgId";

    private ByteBuf wire;
    private ByteBuf out;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        SendMessageResponseHeader h = new SendMessageResponseHeader();
        h.setMsgId("7F00000100002A9F0000000000A3F2C8");
        h.setQueueId(3);
        h.setQueueOffset(1_234_567L);
        h.setTransactionId("7F0000010F7A18B4AAC27D7B3E6F0000");
        RemotingCommand answer = RemotingCommand.createResponseCommand(ResponseCode.SUCCESS, null);
        answer.writeCustomHeader(h);
        answer.makeCustomHeaderToNet();
        answer.addExtField("MSG_REGION", "DefaultRegion");
        answer.addExtField("TRACE_ON", "true");
        answer.setOpaque(4711);
        answer.setVersion(453);
        wire = Wire.frame(answer, SerializeType.JSON);
        out = PooledByteBufAllocator.DEFAULT.directBuffer(1024);
        String expected = "7F00000100005213" + "0000000000A3F2C8";
        rocketmqRemoting();
        check(out, expected, "rocketmqRemoting");
        gatewayRebuild();
        check(out, expected, "gatewayRebuild");
        ByteBuf copy = wire.copy();
        RemotingFrame frame = FrameDecoder.parse(copy);
        try {
            if (!SendAnswerInPlace.rewriteMsgIds(frame, GATEWAY)) {
                throw new IllegalStateException("gatewayInPlace did not find the msgId");
            }
            check(frame.content(), expected, "gatewayInPlace");
        } finally {
            frame.release();
        }
    }

    private static void check(ByteBuf frame, String expected, String what) throws Exception {
        RemotingCommand got = SendV2Benchmark.decodeHead(frame.copy());
        if (!expected.equals(got.getExtFields().get(MSG_ID))) {
            throw new IllegalStateException(what + " gave msgId " + got.getExtFields().get(MSG_ID));
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        wire.release();
        out.release();
    }

    @Benchmark
    public int rocketmqRemoting() throws Exception {
        ByteBuf in = wire.duplicate();
        in.skipBytes(4); // NettyDecoder strips the length field
        RemotingCommand cmd = RemotingCommand.decode(in);
        cmd.getExtFields().put(MSG_ID, MessageIds.rewriteList(cmd.getExtFields().get(MSG_ID), GATEWAY));
        out.clear();
        cmd.fastEncodeHeader(out);
        return out.writerIndex();
    }

    @Benchmark
    public int gatewayRebuild() {
        return (int) Wire.withFrame(wire, this, SendAnswerBenchmark::rebuild);
    }

    @Benchmark
    public boolean gatewayInPlace() {
        return Wire.withFrame(wire, null, (none, frame) -> SendAnswerInPlace.rewriteMsgIds(frame, GATEWAY) ? 1 : 0) != 0;
    }

    private int rebuild(RemotingFrame frame) {
        CommandHeader header = HeaderTranscoder.decodeResponse(frame, RequestCode.SEND_MESSAGE_V2);
        try {
            String ids = header instanceof SendResponseHeader send ? send.msgId() : header.get(MSG_ID);
            header.put(MSG_ID, MessageIds.rewriteList(ids, GATEWAY));
            out.clear();
            return HeaderTranscoder.writeFrameHead(header, SerializeType.JSON, frame.bodyLength(), out);
        } finally {
            header.release();
        }
    }
}
