package io.rmqgw.testing.fuzz;

import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * Mutates seed inputs the way a coverage-blind fuzzer does: bit flips, interesting integers written
 * over length fields (0, -1, 2^24, 16 MiB, Integer.MAX_VALUE, ...), inserted, deleted and duplicated
 * ranges, truncation, and splices of two seeds. Deterministic for a given {@link Random}.
 */
public final class Mutator {

    private static final int[] INTERESTING_INTS = {
        0, 1, -1, 2, 4, 8, 16, 21, 127, 128, 255, 256, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0xFFFFFF, 0x1000000,
        16 * 1024 * 1024, 16 * 1024 * 1024 + 1, Integer.MAX_VALUE, Integer.MIN_VALUE, -626843481, -626843477,
    };
    private static final byte[][] INTERESTING_BYTES = {
        "{".getBytes(), "}".getBytes(), "\"".getBytes(), "\\".getBytes(), ":".getBytes(), ",".getBytes(),
        "[".getBytes(), "]".getBytes(), "null".getBytes(), "\\u0000".getBytes(), "\\ud800".getBytes(),
        "1e999999".getBytes(), "99999999999999999999".getBytes(), "2147483647".getBytes(), "-1".getBytes(), new byte[] {(byte) 0xEF, (byte) 0xBB, (byte) 0xBF},
        new byte[] {(byte) 0xC0, (byte) 0x80}, new byte[] {(byte) 0xFF}, new byte[] {0},
    };

    private final Random random;
    private final int maxLength;

    /** @param maxLength inputs are cut to this length (the fuzzer's -max_len) */
    public Mutator(Random random, int maxLength) {
        this.random = random;
        this.maxLength = maxLength;
    }

    /** A new input: one of {@code seeds} with 1 to 8 mutations applied. */
    public byte[] next(List<byte[]> seeds) {
        byte[] input = seeds.get(random.nextInt(seeds.size()));
        int mutations = 1 + random.nextInt(8);
        for (int i = 0; i < mutations; i++) {
            input = mutate(input, seeds);
        }
        return input.length > maxLength ? Arrays.copyOf(input, maxLength) : input;
    }

    private byte[] mutate(byte[] in, List<byte[]> seeds) {
        int n = in.length;
        switch (random.nextInt(10)) {
            case 0 -> {
                if (n == 0) {
                    return new byte[] {(byte) random.nextInt()};
                }
                byte[] out = in.clone();
                int at = random.nextInt(n);
                out[at] ^= (byte) (1 << random.nextInt(8));
                return out;
            }
            case 1 -> {
                if (n == 0) {
                    return in;
                }
                byte[] out = in.clone();
                out[random.nextInt(n)] = (byte) random.nextInt();
                return out;
            }
            case 2 -> {
                // an interesting int over 4 (or 2, or 1) bytes: hits length fields
                if (n < 4) {
                    return in;
                }
                byte[] out = in.clone();
                int v = INTERESTING_INTS[random.nextInt(INTERESTING_INTS.length)];
                int width = new int[] {4, 2, 1}[random.nextInt(3)];
                int at = aligned(n, width);
                for (int i = 0; i < width; i++) {
                    out[at + i] = (byte) (v >>> (8 * (width - 1 - i)));
                }
                return out;
            }
            case 3 -> {
                int at = n == 0 ? 0 : random.nextInt(n + 1);
                byte[] ins = INTERESTING_BYTES[random.nextInt(INTERESTING_BYTES.length)];
                return insert(in, at, ins, 0, ins.length);
            }
            case 4 -> {
                if (n == 0) {
                    return in;
                }
                int from = random.nextInt(n);
                int len = 1 + random.nextInt(Math.min(n - from, 64));
                byte[] out = new byte[n - len];
                System.arraycopy(in, 0, out, 0, from);
                System.arraycopy(in, from + len, out, from, n - from - len);
                return out;
            }
            case 5 -> {
                if (n == 0) {
                    return in;
                }
                int from = random.nextInt(n);
                int len = 1 + random.nextInt(Math.min(n - from, 256));
                return insert(in, random.nextInt(n + 1), in, from, len);
            }
            case 6 -> {
                return n == 0 ? in : Arrays.copyOf(in, random.nextInt(n));
            }
            case 7 -> {
                byte[] other = seeds.get(random.nextInt(seeds.size()));
                int cut = n == 0 ? 0 : random.nextInt(n + 1);
                int from = other.length == 0 ? 0 : random.nextInt(other.length + 1);
                byte[] out = Arrays.copyOf(in, cut + other.length - from);
                System.arraycopy(other, from, out, cut, other.length - from);
                return out;
            }
            case 8 -> {
                // concatenation: several frames or records in one input
                byte[] other = seeds.get(random.nextInt(seeds.size()));
                return insert(in, n, other, 0, other.length);
            }
            default -> {
                if (n < 2) {
                    return in;
                }
                byte[] out = in.clone();
                int a = random.nextInt(n);
                int b = random.nextInt(n);
                byte t = out[a];
                out[a] = out[b];
                out[b] = t;
                return out;
            }
        }
    }

    private int aligned(int n, int width) {
        int at = random.nextInt(n - width + 1);
        // length fields of remoting frames, headers and records sit at multiples of 4 more often than not
        return random.nextBoolean() ? at - at % width : at;
    }

    private static byte[] insert(byte[] in, int at, byte[] src, int from, int len) {
        byte[] out = new byte[in.length + len];
        System.arraycopy(in, 0, out, 0, at);
        System.arraycopy(src, from, out, at, len);
        System.arraycopy(in, at, out, at + len, in.length - at);
        return out;
    }
}
