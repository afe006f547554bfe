package io.nvmeof.core.util;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.Buffer;
import java.nio.ByteBuffer;

/**
 * The native address of a direct buffer, for transports that must name memory by address (RDMA registration
 * look-ups, the software RNIC). Read through {@code sun.misc.Unsafe} (module jdk.unsupported), as Netty does; no
 * command-line flag is needed. Cold path: a method-handle call, no allocation.
 */
public final class DirectBuffers {
    private static final MethodHandle GET_LONG;
    private static final long ADDRESS_OFFSET;

    static {
        MethodHandle getLong = null;
        long offset = -1;
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field f = unsafeClass.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            Object unsafe = f.get(null);
            MethodHandles.Lookup l = MethodHandles.lookup();
            MethodHandle fieldOffset = l.findVirtual(
                            unsafeClass, "objectFieldOffset", MethodType.methodType(long.class, Field.class))
                    .bindTo(unsafe);
            offset = (long) fieldOffset.invoke(Buffer.class.getDeclaredField("address"));
            getLong = l.findVirtual(unsafeClass, "getLong", MethodType.methodType(long.class, Object.class, long.class))
                    .bindTo(unsafe);
        } catch (Throwable t) {
            getLong = null;
        }
        GET_LONG = getLong;
        ADDRESS_OFFSET = offset;
    }

    private DirectBuffers() {}

    /** Whether {@link #address} works on this JVM. */
    public static boolean addressSupported() {
        return GET_LONG != null;
    }

    /** The native address of byte 0 of {@code buffer} (a slice's own start), or 0 for a heap buffer or when unsupported. */
    public static long address(ByteBuffer buffer) {
        if (GET_LONG == null || !buffer.isDirect()) {
            return 0;
        }
        try {
            return (long) GET_LONG.invokeExact((Object) buffer, ADDRESS_OFFSET);
        } catch (Throwable t) {
            return 0;
        }
    }
}
