package io.rmqgw.codec.header;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * rocketmq-remoting 4.9.7's RemotingCommand (fastjson 1.2.69, what 4.9.x clients and brokers run), in
 * its own class loader beside 5.4.0 on the class path: the jars are copied to target/legacy-remoting
 * by the build (see codec/pom.xml). Used by reflection; values cross as plain Java types.
 */
final class Legacy497 {

    private static final String[] JARS = {"rocketmq-remoting", "rocketmq-logging", "fastjson", "netty-all"};

    private static final Class<?> COMMAND;
    private static final Class<?> LANGUAGE;
    private static final Class<?> SERIALIZE_TYPE;

    static {
        try {
            Path dir = Path.of(System.getProperty("rmqgw.legacyRemoting", "target/legacy-remoting"));
            URL[] urls = new URL[JARS.length];
            for (int i = 0; i < JARS.length; i++) {
                Path jar = dir.resolve(JARS[i] + ".jar");
                if (!Files.isRegularFile(jar)) {
                    throw new IllegalStateException(jar + " is missing: run the codec module's build (generate-test-resources)");
                }
                urls[i] = jar.toUri().toURL();
            }
            ClassLoader loader = new URLClassLoader("rocketmq-remoting-4.9.7", urls, ClassLoader.getPlatformClassLoader());
            COMMAND = Class.forName("org.apache.rocketmq.remoting.protocol.RemotingCommand", true, loader);
            LANGUAGE = Class.forName("org.apache.rocketmq.remoting.protocol.LanguageCode", true, loader);
            SERIALIZE_TYPE = Class.forName("org.apache.rocketmq.remoting.protocol.SerializeType", true, loader);
        } catch (Exception e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** The fields of a command, as either version reads or writes them. */
    record Fields(int code, String language, int version, int opaque, int flag, String remark, Map<String, String> ext) {
    }

    private Legacy497() {
    }

    /** Whether 4.9.7 has a LanguageCode of that name. */
    static boolean knowsLanguage(String name) {
        for (Object l : LANGUAGE.getEnumConstants()) {
            if (((Enum<?>) l).name().equals(name)) {
                return true;
            }
        }
        return false;
    }

    /** The frame head (total length, type and header length, header) 4.9.7's encodeHeader writes, in {@code type}. */
    static byte[] encode(Fields f, String type) throws Exception {
        Object cmd = COMMAND.getMethod("createRequestCommand", int.class, Class.forName(
            "org.apache.rocketmq.remoting.CommandCustomHeader", false, COMMAND.getClassLoader())).invoke(null, f.code(), null);
        call(cmd, "setLanguage", LANGUAGE, enumValue(LANGUAGE, f.language()));
        call(cmd, "setVersion", int.class, f.version());
        call(cmd, "setOpaque", int.class, f.opaque());
        call(cmd, "setFlag", int.class, f.flag());
        call(cmd, "setRemark", String.class, f.remark());
        call(cmd, "setExtFields", HashMap.class, f.ext() == null ? null : new HashMap<>(f.ext()));
        call(cmd, "setSerializeTypeCurrentRPC", SERIALIZE_TYPE, enumValue(SERIALIZE_TYPE, type));
        ByteBuffer b = (ByteBuffer) COMMAND.getMethod("encodeHeader").invoke(cmd);
        byte[] out = new byte[b.remaining()];
        b.get(out);
        return out;
    }

    /** What 4.9.7's RemotingCommand.decode reads from a frame head (total length first), header only. */
    @SuppressWarnings("unchecked")
    static Fields decode(byte[] frameHead) throws Exception {
        ByteBuffer b = ByteBuffer.wrap(frameHead, 4, frameHead.length - 4).slice();
        Object cmd = COMMAND.getMethod("decode", ByteBuffer.class).invoke(null, b);
        Object language = COMMAND.getMethod("getLanguage").invoke(cmd);
        return new Fields((int) COMMAND.getMethod("getCode").invoke(cmd),
            language == null ? null : ((Enum<?>) language).name(),
            (int) COMMAND.getMethod("getVersion").invoke(cmd), (int) COMMAND.getMethod("getOpaque").invoke(cmd),
            (int) COMMAND.getMethod("getFlag").invoke(cmd), (String) COMMAND.getMethod("getRemark").invoke(cmd),
            (Map<String, String>) COMMAND.getMethod("getExtFields").invoke(cmd));
    }

    private static void call(Object target, String name, Class<?> type, Object value) throws Exception {
        Method m = COMMAND.getMethod(name, type);
        m.invoke(target, value);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object enumValue(Class<?> type, String name) {
        return Enum.valueOf((Class) type, name);
    }
}
