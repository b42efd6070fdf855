package io.rmqgw.codec.header;

import java.util.Arrays;

/**
 * The extFields keys a typed header knows, each with a slot number, matched on raw UTF-8 bytes so
 * that neither encoding has to build a String for a key. A null key holds a slot no wire key fills.
 */
final class KeyTable {

    static final KeyTable EMPTY = new KeyTable();

    private final String[] names;
    private final byte[][] keys;
    /** Per key length (up to 31), the slots with that length, so a lookup compares a handful at most. */
    private final int[][] byLength = new int[32][];

    KeyTable(String... names) {
        this.names = names.clone();
        this.keys = new byte[names.length][];
        int[] counts = new int[32];
        for (int i = 0; i < names.length; i++) {
            if (names[i] != null) {
                keys[i] = Ascii.bytes(names[i]);
                if (keys[i].length >= 32) {
                    throw new IllegalArgumentException("key too long for the table: " + names[i]);
                }
                counts[keys[i].length]++;
            }
        }
        for (int len = 0; len < 32; len++) {
            byLength[len] = new int[counts[len]];
        }
        int[] fill = new int[32];
        for (int i = 0; i < names.length; i++) {
            if (keys[i] != null) {
                int len = keys[i].length;
                byLength[len][fill[len]++] = i;
            }
        }
    }

    int size() {
        return names.length;
    }

    String name(int slot) {
        return names[slot];
    }

    /** The slot of the key in {@code a[off, off+len)}, or -1. */
    int find(byte[] a, int off, int len) {
        if (len >= 32) {
            return -1;
        }
        for (int slot : byLength[len]) {
            if (Arrays.equals(a, off, off + len, keys[slot], 0, len)) {
                return slot;
            }
        }
        return -1;
    }

    /** The slot of {@code name}, or -1. */
    int find(String name) {
        for (int i = 0; i < names.length; i++) {
            if (name.equals(names[i])) {
                return i;
            }
        }
        return -1;
    }
}
