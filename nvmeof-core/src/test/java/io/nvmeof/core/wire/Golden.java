package io.nvmeof.core.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;

/** Helpers for golden-byte tests: hex literals as written in docs/nvmeof-protocol.md, little-endian buffers. */
final class Golden {
    private Golden() {}

    /** Parses "7f 40 00 00" (spaces and '|' ignored). */
    static byte[] hex(String text) {
        return HexFormat.of().parseHex(text.replaceAll("[\\s|]", ""));
    }

    static String hex(byte[] bytes) {
        return HexFormat.ofDelimiter(" ").formatHex(bytes);
    }

    static ByteBuffer buffer(int capacity) {
        return ByteBuffer.allocate(capacity).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A buffer filled with 0xA5 so that a field the code forgot to write shows up in a comparison. */
    static ByteBuffer dirtyBuffer(int capacity) {
        ByteBuffer b = buffer(capacity);
        for (int i = 0; i < capacity; i++) {
            b.put(i, (byte) 0xA5);
        }
        return b;
    }

    static ByteBuffer wrap(byte[] bytes) {
        return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    }
}
