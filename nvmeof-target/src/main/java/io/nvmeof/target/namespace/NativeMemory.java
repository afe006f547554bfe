package io.nvmeof.target.namespace;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;

/**
 * Frees direct buffers at once instead of waiting for the garbage collector, so returning memory to the budget also
 * returns it to the operating system. Uses {@code sun.misc.Unsafe.invokeCleaner} from the {@code jdk.unsupported}
 * module, which the JDK keeps exported for exactly this purpose. It is looked up reflectively (once) so the build has no
 * proprietary-API warnings; if it is missing the buffer is left to the GC.
 */
final class NativeMemory {
    private static final MethodHandle INVOKE_CLEANER = lookup();

    private NativeMemory() {}

    private static MethodHandle lookup() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe");
            Field f = unsafeClass.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            Object unsafe = f.get(null);
            return MethodHandles.lookup()
                    .findVirtual(unsafeClass, "invokeCleaner", MethodType.methodType(void.class, ByteBuffer.class))
                    .bindTo(unsafe);
        } catch (ReflectiveOperationException | RuntimeException e) {
            System.getLogger("io.nvmeof.target.memory")
                    .log(
                            System.Logger.Level.WARNING,
                            "sun.misc.Unsafe.invokeCleaner is not available; freed namespace memory returns to the OS only after GC");
            return null;
        }
    }

    /** Whether buffers are really freed at once (for tests and diagnostics). */
    static boolean immediateFreeAvailable() {
        return INVOKE_CLEANER != null;
    }

    /** Frees a direct buffer allocated with {@link ByteBuffer#allocateDirect}. It must never be touched again. */
    static void free(ByteBuffer directBuffer) {
        if (INVOKE_CLEANER == null) {
            return;
        }
        try {
            INVOKE_CLEANER.invokeExact(directBuffer);
        } catch (Throwable e) {
            throw new IllegalStateException("cannot free a namespace chunk", e);
        }
    }
}
