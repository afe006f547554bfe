package io.nvmeof.transport.tcp;

import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One reusable direct {@link ByteBuffer} that is re-pointed (address and capacity, through {@code sun.misc.Unsafe},
 * as Netty itself reads them) at any native memory region, so that a CRC update or a copy reads that memory with no
 * NIO view allocated per buffer. Not thread-safe: one per user (a connection, a command slot), used on its event loop
 * only. The view owns nothing: whoever points it at memory keeps that memory alive for as long as the view is read.
 * Where Unsafe is unavailable (or the self-check below fails), {@link #at} returns null and callers fall back to
 * Netty's NIO views or a copy.
 */
public final class DirectView {
    private static final sun.misc.Unsafe UNSAFE;
    private static final long ADDRESS;
    private static final long CAPACITY;

    static {
        sun.misc.Unsafe u = null;
        long a = -1;
        long c = -1;
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            u = (sun.misc.Unsafe) f.get(null);
            a = u.objectFieldOffset(Buffer.class.getDeclaredField("address"));
            c = u.objectFieldOffset(Buffer.class.getDeclaredField("capacity"));
            // Self-check: a re-pointed view must read the memory it is pointed at.
            ByteBuffer src = ByteBuffer.allocateDirect(8);
            src.put(0, (byte) 0x5A);
            ByteBuffer probe = ByteBuffer.allocateDirect(1).duplicate();
            u.putLong(probe, a, u.getLong(src, a));
            u.putInt(probe, c, 8);
            probe.clear();
            if (probe.get(0) != 0x5A || probe.capacity() != 8) {
                u = null;
            }
        } catch (Throwable e) {
            u = null;
        }
        UNSAFE = u;
        ADDRESS = a;
        CAPACITY = c;
    }

    /** A duplicate owns no memory and no cleaner: pointing it elsewhere frees nothing. */
    private final ByteBuffer view;

    /** A big-endian view (the byte order does not matter to a CRC or a bulk copy). */
    public DirectView() {
        this(ByteOrder.BIG_ENDIAN);
    }

    /** A view that reads multi-byte values in {@code order} (NVMe data structures are little-endian). */
    public DirectView(ByteOrder order) {
        view = UNSAFE == null ? null : ByteBuffer.allocateDirect(1).duplicate().order(order);
    }

    /** True when {@link #at} works on this JVM. */
    public static boolean supported() {
        return UNSAFE != null;
    }

    /** The view over native memory [address, address + length), position 0 and limit length; null if unsupported. */
    public ByteBuffer at(long address, int length) {
        ByteBuffer v = view;
        if (v == null) {
            return null;
        }
        UNSAFE.putLong(v, ADDRESS, address);
        UNSAFE.putInt(v, CAPACITY, length);
        v.clear();
        return v;
    }
}
