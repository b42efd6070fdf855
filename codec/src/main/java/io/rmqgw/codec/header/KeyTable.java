package io.rmqgw.codec.header;

import com.fasterxml.jackson.core.io.SerializedString;
import java.util.Arrays;

/**
 * The extFields keys a typed header knows, each with a slot number, matched on raw UTF-8 bytes so
 * that neither encoding has to build a String for a key. A null key holds a slot no wire key fills.
 */
final class KeyTable {

    static final KeyTable EMPTY = new KeyTable();

    private final String[] names;
    private final byte[][] keys;
    /** The keys as jackson matches them byte for byte against the input (null where the slot has no key). */
    private final SerializedString[] serialized;
    /** Per key length (up to 31), the slots with that length, so a lookup compares a handful at most. */
    private final int[][] byLength = new int[32][];
    /** Open-addressed by String hash: the names (field names from jackson are interned, so usually the same instance) and their slots. */
    private final String[] hashed;
    private final int[] hashedSlots;
    private final int mask;

    KeyTable(String... names) {
        this.names = names.clone();
        this.keys = new byte[names.length][];
        this.serialized = new SerializedString[names.length];
        int[] counts = new int[32];
        for (int i = 0; i < names.length; i++) {
            if (names[i] != null) {
                keys[i] = Ascii.bytes(names[i]);
                serialized[i] = new SerializedString(names[i]);
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
        int size = 8;
        while (size < 4 * names.length) {
            size <<= 1;
        }
        hashed = new String[size];
        hashedSlots = new int[size];
        mask = size - 1;
        for (int i = 0; i < names.length; i++) {
            if (names[i] != null) {
                int at = spread(names[i].hashCode()) & mask;
                while (hashed[at] != null) {
                    at = (at + 1) & mask;
                }
                hashed[at] = names[i].intern();
                hashedSlots[at] = i;
            }
        }
    }

    private static int spread(int h) {
        return h ^ (h >>> 7) ^ (h >>> 16);
    }

    /** The slot of {@code name}, or -1: a hash probe, no scan. */
    int slot(String name) {
        int at = spread(name.hashCode()) & mask;
        String k;
        while ((k = hashed[at]) != null) {
            if (k == name || k.equals(name)) {
                return hashedSlots[at];
            }
            at = (at + 1) & mask;
        }
        return -1;
    }

    /** The key in {@code slot} for {@code JsonParser.nextFieldName(SerializableString)}, or null. */
    SerializedString serialized(int slot) {
        return serialized[slot];
    }

    /** The UTF-8 bytes of the key in {@code slot} (not to be modified). */
    byte[] keyBytes(int slot) {
        return keys[slot];
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
        return slot(name);
    }
}
