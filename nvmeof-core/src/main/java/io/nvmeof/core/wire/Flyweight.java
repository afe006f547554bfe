package io.nvmeof.core.wire;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Base of every fixed-layout wire structure: a view over {@code length()} bytes of a {@link ByteBuffer} starting at
 * {@link #offset()}. All multi-byte fields are little-endian (nvmeof-protocol.md §0).
 *
 * <p>A flyweight owns no memory and does not allocate: {@link #wrap} only remembers the buffer and the offset, and all
 * accessors use absolute positions, so the buffer's position and limit are never touched. A flyweight is valid only for
 * as long as the buffer's owner says so (for a received capsule, inside the callback that handed it out); copy out what
 * you keep.
 */
public abstract class Flyweight {
    protected ByteBuffer buffer;
    protected int offset;

    /**
     * Points this flyweight at {@code buffer} starting at {@code offset}. The buffer must be little-endian: wrapping is
     * done once per reusable slot, not per I/O, and a wrong byte order is a programming error.
     *
     * @throws IllegalArgumentException if the buffer is big-endian or too short for the structure
     */
    public Flyweight wrap(ByteBuffer buffer, int offset) {
        if (buffer.order() != ByteOrder.LITTLE_ENDIAN) {
            throw new IllegalArgumentException(
                    "NVMe structures are little-endian: set buffer.order(ByteOrder.LITTLE_ENDIAN)");
        }
        if (offset < 0 || offset + length() > buffer.capacity()) {
            throw new IllegalArgumentException(getClass().getSimpleName() + " of " + length()
                    + " bytes does not fit at offset " + offset + " of a buffer of capacity " + buffer.capacity());
        }
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** The size of the structure in bytes. */
    public abstract int length();

    public ByteBuffer buffer() {
        return buffer;
    }

    public int offset() {
        return offset;
    }

    /** Sets every byte of the structure to zero (reserved fields must be sent as zero, nvmeof-protocol.md §0). */
    public void clear() {
        for (int i = 0; i < length(); i += 8) {
            buffer.putLong(offset + i, 0L);
        }
    }

    /** Copies the structure's bytes out, for logs and tests. */
    public byte[] toBytes() {
        byte[] out = new byte[length()];
        buffer.get(offset, out);
        return out;
    }

    protected final int u8(int field) {
        return buffer.get(offset + field) & 0xFF;
    }

    protected final void u8(int field, int value) {
        buffer.put(offset + field, (byte) value);
    }

    protected final int u16(int field) {
        return buffer.getShort(offset + field) & 0xFFFF;
    }

    protected final void u16(int field, int value) {
        buffer.putShort(offset + field, (short) value);
    }

    /** An unsigned 32-bit field as a Java int: callers widen with {@code & 0xFFFFFFFFL} where it matters. */
    protected final int u32(int field) {
        return buffer.getInt(offset + field);
    }

    protected final void u32(int field, int value) {
        buffer.putInt(offset + field, value);
    }

    protected final long u64(int field) {
        return buffer.getLong(offset + field);
    }

    protected final void u64(int field, long value) {
        buffer.putLong(offset + field, value);
    }
}
