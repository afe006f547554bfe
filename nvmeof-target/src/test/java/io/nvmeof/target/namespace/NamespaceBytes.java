package io.nvmeof.target.namespace;

import java.nio.ByteBuffer;
import java.util.Arrays;

/** Test data for namespaces: buffers of one byte value, and what a namespace holds at an offset. */
final class NamespaceBytes {
    private NamespaceBytes() {}

    /** A heap buffer of {@code length} bytes, each {@code value}. */
    static ByteBuffer filled(int length, int value) {
        byte[] b = new byte[length];
        Arrays.fill(b, (byte) value);
        return ByteBuffer.wrap(b);
    }

    /** {@code length} bytes of {@code ns} from byte {@code offset}, through {@link RamNamespace#readInto}. */
    static byte[] read(RamNamespace ns, long offset, int length) {
        ByteBuffer out = ByteBuffer.allocate(length);
        ns.readInto(out, 0, offset, length);
        return out.array();
    }
}
