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
    /** The slot of each one-byte key by its byte, or -1 (SEND_MESSAGE_V2's keys a..n). */
    private final int[] singleByte = new int[256];
    /** Per slot: its key's byte when the key is one byte long, else -1. */
    private final int[] slotByte;
    /** Whether some slot's key is longer than one byte. */
    private final boolean longKeys;
    /** Open-addressed by (length, first byte, last byte): slot + 1, 0 for free. Byte lookups probe one or two. */
    private final int[] byBytes;
    private final int bytesMask;
    /** Open-addressed by String hash: the names (field names from jackson are interned, so usually the same instance) and their slots. */
    private final String[] hashed;
    private final int[] hashedSlots;
    private final int mask;

    KeyTable(String... names) {
        this.names = names.clone();
        this.keys = new byte[names.length][];
        this.serialized = new SerializedString[names.length];
        for (int i = 0; i < names.length; i++) {
            if (names[i] != null) {
                keys[i] = Ascii.bytes(names[i]);
                serialized[i] = new SerializedString(names[i]);
            }
        }
        Arrays.fill(singleByte, -1);
        slotByte = new int[names.length];
        boolean anyLong = false;
        for (int i = 0; i < names.length; i++) {
            boolean one = keys[i] != null && keys[i].length == 1;
            slotByte[i] = one ? keys[i][0] & 0xFF : -1;
            anyLong |= keys[i] != null && keys[i].length > 1;
        }
        longKeys = anyLong;
        for (int i = names.length - 1; i >= 0; i--) {
            if (keys[i] != null && keys[i].length == 1) {
                singleByte[keys[i][0] & 0xFF] = i;
            }
        }
        int tableSize = 64;
        while (tableSize < 8 * names.length) {
            tableSize <<= 1;
        }
        byBytes = new int[tableSize];
        bytesMask = tableSize - 1;
        for (int i = 0; i < names.length; i++) {
            if (keys[i] != null && keys[i].length > 0) {
                int at = bytesHash(keys[i], 0, keys[i].length) & bytesMask;
                while (byBytes[at] != 0) {
                    at = (at + 1) & bytesMask;
                }
                byBytes[at] = i + 1;
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

    /** The byte of the key in {@code slot} when it is one byte long, else -1. */
    int oneByteKey(int slot) {
        return slotByte[slot];
    }

    /** Whether a key of this table is longer than one byte. */
    boolean hasLongKeys() {
        return longKeys;
    }

    int size() {
        return names.length;
    }

    String name(int slot) {
        return names[slot];
    }

    private static int bytesHash(byte[] a, int off, int len) {
        return len * 31 + a[off] * 7 + a[off + len - 1] * 131;
    }

    /** The slot of the key in {@code a[off, off+len)}, or -1. */
    int find(byte[] a, int off, int len) {
        if (len == 1) {
            return singleByte[a[off] & 0xFF];
        }
        if (len == 0) {
            return -1;
        }
        int at = bytesHash(a, off, len) & bytesMask;
        int entry;
        while ((entry = byBytes[at]) != 0) {
            byte[] key = keys[entry - 1];
            if (key.length == len && sameBytes(key, a, off)) {
                return entry - 1;
            }
            at = (at + 1) & bytesMask;
        }
        return -1;
    }

    private static boolean sameBytes(byte[] key, byte[] a, int off) {
        for (int i = 0; i < key.length; i++) {
            if (key[i] != a[off + i]) {
                return false;
            }
        }
        return true;
    }

    /** The slot of {@code name}, or -1. */
    int find(String name) {
        return slot(name);
    }
}
