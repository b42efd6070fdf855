package io.rmqgw.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Properties;

/**
 * rocketmq-remoting 4.9.7's RemotingCommand with what 4.9.x clients and brokers run it on (fastjson
 * 1.2.69_noneautotype, netty 4.1.65), beside rocketmq-remoting 5.4.0 on the class path: the two share
 * package names, so 4.9.7 lives in its own class loader whose parent is the platform loader (it sees
 * nothing of the class path). The jars are packed into benchmarks.jar under {@code legacy-remoting/}
 * (see the pom) and extracted to a temporary directory when this class loads.
 *
 * <p>Calls go through static final method handles, which the JIT treats as constants and inlines like
 * direct calls. Buffers passed in and out are 4.9.7's netty ByteBufs, typed Object here.
 */
final class LegacyRemoting {

    static final String VERSION = "4.9.7";
    private static final String[] JARS = {"rocketmq-remoting", "rocketmq-logging", "fastjson", "netty-all"};

    private static final ClassLoader LOADER = loader();

    private static final MethodHandle DECODE;
    private static final MethodHandle SET_SERIALIZE_TYPE;
    private static final MethodHandle FAST_ENCODE_HEADER;
    private static final MethodHandle SERIALIZE_TYPE_VALUE_OF;
    private static final MethodHandle DUPLICATE;
    private static final MethodHandle RETAINED_SLICE;
    private static final MethodHandle SKIP_BYTES;
    private static final MethodHandle CLEAR;
    private static final MethodHandle WRITER_INDEX;
    private static final MethodHandle READABLE_BYTES;
    private static final MethodHandle GET_BYTES;
    private static final MethodHandle RELEASE;
    private static final MethodHandle DIRECT_BUFFER;
    private static final MethodHandle WRITE_BYTES;
    private static final Object POOLED;

    static {
        try {
            MethodHandles.Lookup lookup = MethodHandles.publicLookup();
            Class<?> command = type("org.apache.rocketmq.remoting.protocol.RemotingCommand");
            Class<?> serializeType = type("org.apache.rocketmq.remoting.protocol.SerializeType");
            Class<?> buf = type("io.netty.buffer.ByteBuf");
            Class<?> allocator = type("io.netty.buffer.PooledByteBufAllocator");
            DECODE = erase(lookup.findStatic(command, "decode", MethodType.methodType(command, buf)));
            SET_SERIALIZE_TYPE = erase(lookup.findVirtual(command, "setSerializeTypeCurrentRPC",
                MethodType.methodType(void.class, serializeType)));
            FAST_ENCODE_HEADER = erase(lookup.findVirtual(command, "fastEncodeHeader", MethodType.methodType(void.class, buf)));
            SERIALIZE_TYPE_VALUE_OF = erase(lookup.findStatic(serializeType, "valueOf", MethodType.methodType(serializeType, String.class)));
            DUPLICATE = erase(lookup.findVirtual(buf, "duplicate", MethodType.methodType(buf)));
            RETAINED_SLICE = erase(lookup.findVirtual(buf, "retainedSlice", MethodType.methodType(buf, int.class, int.class)));
            SKIP_BYTES = erase(lookup.findVirtual(buf, "skipBytes", MethodType.methodType(buf, int.class)))
                .asType(MethodType.methodType(void.class, Object.class, int.class));
            CLEAR = erase(lookup.findVirtual(buf, "clear", MethodType.methodType(buf)))
                .asType(MethodType.methodType(void.class, Object.class));
            WRITER_INDEX = erase(lookup.findVirtual(buf, "writerIndex", MethodType.methodType(int.class)));
            READABLE_BYTES = erase(lookup.findVirtual(buf, "readableBytes", MethodType.methodType(int.class)));
            GET_BYTES = erase(lookup.findVirtual(buf, "getBytes", MethodType.methodType(buf, int.class, byte[].class)))
                .asType(MethodType.methodType(void.class, Object.class, int.class, byte[].class));
            RELEASE = erase(lookup.findVirtual(buf, "release", MethodType.methodType(boolean.class)));
            DIRECT_BUFFER = erase(lookup.findVirtual(allocator, "directBuffer", MethodType.methodType(buf, int.class)));
            WRITE_BYTES = erase(lookup.findVirtual(buf, "writeBytes", MethodType.methodType(buf, byte[].class)))
                .asType(MethodType.methodType(void.class, Object.class, byte[].class));
            POOLED = lookup.findStaticGetter(allocator, "DEFAULT", allocator).invoke();
        } catch (Throwable e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private LegacyRemoting() {
    }

    /**
     * What a rocketmq-remoting 4.9.7 proxy does with a frame: {@code RemotingCommand.decode} (NettyDecoder
     * has stripped the length field; fastjson 1 into a HashMap for a JSON header) and
     * {@code fastEncodeHeader} in {@code to} (NettyEncoder) into {@code out}, which is cleared first.
     * {@code framed}: the frame handed to the decode as NettyDecoder hands it (a retained slice, released
     * after the decode), else an unretained duplicate. Returns the bytes written.
     */
    static int transcode(Object wire, Object out, Object to, boolean framed) throws Throwable {
        Object cmd;
        if (framed) {
            Object frame = (Object) RETAINED_SLICE.invokeExact(wire, 4, (int) READABLE_BYTES.invokeExact(wire) - 4);
            try {
                cmd = (Object) DECODE.invokeExact(frame);
            } finally {
                boolean ignored = (boolean) RELEASE.invokeExact(frame);
            }
        } else {
            Object in = (Object) DUPLICATE.invokeExact(wire);
            SKIP_BYTES.invokeExact(in, 4);
            cmd = (Object) DECODE.invokeExact(in);
        }
        SET_SERIALIZE_TYPE.invokeExact(cmd, to);
        CLEAR.invokeExact(out);
        FAST_ENCODE_HEADER.invokeExact(cmd, out);
        return (int) WRITER_INDEX.invokeExact(out);
    }

    /** 4.9.7's SerializeType constant of that name. */
    static Object serializeType(String name) throws Throwable {
        return (Object) SERIALIZE_TYPE_VALUE_OF.invokeExact(name);
    }

    /** A pooled direct buffer of 4.9.7's netty holding {@code bytes} (as frames come from a socket). */
    static Object directBuffer(byte[] bytes) throws Throwable {
        Object b = directBuffer(bytes.length);
        WRITE_BYTES.invokeExact(b, bytes);
        return b;
    }

    static Object directBuffer(int capacity) throws Throwable {
        return (Object) DIRECT_BUFFER.invokeExact(POOLED, capacity);
    }

    /** The readable bytes of a 4.9.7 buffer. */
    static byte[] bytes(Object buf) throws Throwable {
        byte[] out = new byte[(int) READABLE_BYTES.invokeExact(buf)];
        GET_BYTES.invokeExact(buf, 0, out);
        return out;
    }

    static void release(Object buf) throws Throwable {
        boolean ignored = (boolean) RELEASE.invokeExact(buf);
    }

    /** Every parameter and the return type as Object (primitives kept), so call sites need no 4.9.7 types. */
    private static MethodHandle erase(MethodHandle mh) {
        MethodType t = mh.type();
        for (int i = 0; i < t.parameterCount(); i++) {
            if (!t.parameterType(i).isPrimitive() && t.parameterType(i) != String.class && t.parameterType(i) != byte[].class) {
                t = t.changeParameterType(i, Object.class);
            }
        }
        if (!t.returnType().isPrimitive()) {
            t = t.changeReturnType(Object.class);
        }
        return mh.asType(t);
    }

    private static Class<?> type(String name) throws ClassNotFoundException {
        return Class.forName(name, true, LOADER);
    }

    private static ClassLoader loader() {
        try {
            Path dir = Files.createTempDirectory("rmqgw-legacy-remoting");
            dir.toFile().deleteOnExit();
            URL[] urls = new URL[JARS.length];
            for (int i = 0; i < JARS.length; i++) {
                Path jar = dir.resolve(JARS[i] + ".jar");
                try (InputStream in = LegacyRemoting.class.getResourceAsStream("/legacy-remoting/" + JARS[i] + ".jar")) {
                    if (in == null) {
                        throw new IllegalStateException("legacy-remoting/" + JARS[i] + ".jar is not in the benchmarks jar");
                    }
                    Files.copy(in, jar, StandardCopyOption.REPLACE_EXISTING);
                }
                jar.toFile().deleteOnExit();
                urls[i] = jar.toUri().toURL();
            }
            ClassLoader loader = new URLClassLoader("rocketmq-remoting-" + VERSION, urls, ClassLoader.getPlatformClassLoader());
            Properties pom = new Properties();
            try (InputStream in = loader.getResourceAsStream("META-INF/maven/org.apache.rocketmq/rocketmq-remoting/pom.properties")) {
                pom.load(in);
            }
            if (!VERSION.equals(pom.getProperty("version"))) {
                throw new IllegalStateException("legacy rocketmq-remoting is " + pom.getProperty("version") + ", not " + VERSION);
            }
            return loader;
        } catch (IOException e) {
            throw new IllegalStateException("cannot set up rocketmq-remoting " + VERSION, e);
        }
    }
}
