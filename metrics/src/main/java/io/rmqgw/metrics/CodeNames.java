package io.rmqgw.metrics;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Map;
import java.util.TreeMap;
import org.apache.rocketmq.remoting.protocol.RequestCode;
import org.apache.rocketmq.remoting.protocol.ResponseCode;

/**
 * A fixed table of RocketMQ codes and their constant names, used as bounded label values: a code
 * the table knows is labelled by its name ({@code SEND_MESSAGE}, {@code SYSTEM_BUSY}), any other
 * by {@link #OTHER}. Each code maps to a small dense index so meters can live in arrays; the
 * lookup (a table for the codes below {@link #DIRECT_CODES}, where the hot ones lie, else a binary search
 * over a sorted {@code int[]}) allocates nothing.
 */
final class CodeNames {

    /** The label value of a code the table does not know. */
    static final String OTHER = "other";

    /** Every {@code RequestCode} constant of the rocketmq-remoting version on the class path. */
    static final CodeNames REQUESTS = of(RequestCode.class);
    /** Every {@code ResponseCode} constant, including the inherited {@code RemotingSysResponseCode} ones. */
    static final CodeNames RESPONSES = of(ResponseCode.class);

    /** Codes below this are looked up in a table (every request code of the hot path is). */
    static final int DIRECT_CODES = 1024;

    private final int[] codes;
    private final String[] names;
    /** Per code below {@link #DIRECT_CODES}: its index. */
    private final short[] direct = new short[DIRECT_CODES];

    private CodeNames(int[] codes, String[] names) {
        this.codes = codes;
        this.names = names;
        for (int code = 0; code < DIRECT_CODES; code++) {
            direct[code] = (short) search(code);
        }
    }

    /** Reads the {@code public static final int} fields of {@code constants}. */
    static CodeNames of(Class<?> constants) {
        Field[] fields = constants.getFields();
        // a value named twice keeps the alphabetically first name, whatever order reflection returns
        Arrays.sort(fields, Comparator.comparing(Field::getName));
        Map<Integer, String> byCode = new TreeMap<>();
        for (Field f : fields) {
            int m = f.getModifiers();
            if (Modifier.isStatic(m) && Modifier.isFinal(m) && f.getType() == int.class) {
                try {
                    byCode.putIfAbsent(f.getInt(null), f.getName());
                } catch (IllegalAccessException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
        return of(byCode);
    }

    static CodeNames of(Map<Integer, String> byCode) {
        Map<Integer, String> sorted = new TreeMap<>(byCode);
        int[] codes = new int[sorted.size()];
        String[] names = new String[sorted.size() + 1];
        int i = 0;
        for (Map.Entry<Integer, String> e : sorted.entrySet()) {
            codes[i] = e.getKey();
            names[i] = e.getValue();
            i++;
        }
        names[i] = OTHER;
        return new CodeNames(codes, names);
    }

    /** The dense index of {@code code}: {@code 0..size()-2} when known, {@link #otherIndex()} otherwise. */
    int index(int code) {
        return code >= 0 && code < DIRECT_CODES ? direct[code] : search(code);
    }

    private int search(int code) {
        int i = Arrays.binarySearch(codes, code);
        return i >= 0 ? i : codes.length;
    }

    int otherIndex() {
        return codes.length;
    }

    /** Number of indexes, {@link #otherIndex()} included. */
    int size() {
        return names.length;
    }

    String name(int index) {
        return names[index];
    }

    /** The label value of {@code code}. */
    String label(int code) {
        return names[index(code)];
    }
}
