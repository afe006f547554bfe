package io.nvmeof.target.namespace;

import java.lang.reflect.Field;
import java.nio.ByteBuffer;

/**
 * Frees direct buffers at once instead of waiting for the garbage collector, so returning memory to the budget also
 * returns it to the operating system. Uses {@code sun.misc.Unsafe.invokeCleaner} from the {@code jdk.unsupported}
 * module, which the JDK keeps exported for exactly this purpose; if it is not there the buffer is left to the GC.
 */
final class NativeMemory {
    private static final sun.misc.Unsafe UNSAFE = loadUnsafe();

    private NativeMemory() {
    }

    private static sun.misc.Unsafe loadUnsafe() {
        try {
            Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            return (sun.misc.Unsafe) f.get(null);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    /** Frees a direct buffer allocated with {@link ByteBuffer#allocateDirect}. It must never be touched again. */
    static void free(ByteBuffer directBuffer) {
        if (UNSAFE != null) {
            UNSAFE.invokeCleaner(directBuffer);
        }
    }
}
