package io.nvmeof.target.namespace;

import java.nio.ByteBuffer;

/**
 * The byte comparisons of {@link RamNamespace#compare} (Compare, nvmeof-protocol.md §4.2): a host's data against a
 * chunk, or against the zeroes of an unwritten range. Absolute gets only, so no buffer's position or limit moves and
 * nothing is allocated. Stateless.
 */
final class BlockCompare {
    private BlockCompare() {}

    /** Whether {@code n} bytes of {@code b} at {@code off} are all zero. */
    static boolean isZero(ByteBuffer b, int off, int n) {
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            if (b.getLong(off + i) != 0) {
                return false;
            }
        }
        for (; i < n; i++) {
            if (b.get(off + i) != 0) {
                return false;
            }
        }
        return true;
    }

    /**
     * Whether {@code n} bytes of {@code a} at {@code aOff} equal those of {@code b} at {@code bOff}, eight at a time;
     * both buffers must have the same byte order.
     */
    static boolean equalLongs(ByteBuffer a, int aOff, ByteBuffer b, int bOff, int n) {
        int i = 0;
        for (; i + 8 <= n; i += 8) {
            if (a.getLong(aOff + i) != b.getLong(bOff + i)) {
                return false;
            }
        }
        return equalBytes(a, aOff + i, b, bOff + i, n - i);
    }

    /** Whether {@code n} bytes of {@code a} at {@code aOff} equal those of {@code b} at {@code bOff}, one at a time. */
    static boolean equalBytes(ByteBuffer a, int aOff, ByteBuffer b, int bOff, int n) {
        for (int i = 0; i < n; i++) {
            if (a.get(aOff + i) != b.get(bOff + i)) {
                return false;
            }
        }
        return true;
    }
}
