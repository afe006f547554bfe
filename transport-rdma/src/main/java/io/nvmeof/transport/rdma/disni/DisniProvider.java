package io.nvmeof.transport.rdma.disni;

import io.nvmeof.transport.rdma.verbs.ConnectionRequestHandler;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaConnection;
import io.nvmeof.transport.rdma.verbs.RdmaListener;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The "disni" verbs provider: DiSNI 2.1 over a real RNIC or Soft-RoCE (rxe), with this project's JNI library
 * {@code libnvmeofrdma.so} (src/main/native) in place of DiSNI's unpublished {@code libdisni}.
 *
 * <p>Loading: the library travels in this jar at {@value #NATIVE_RESOURCE} (built when the rdma-core headers were
 * present at build time); it is extracted to a temp directory and loaded into a small class loader that defines
 * DiSNI's classes and this package's {@code impl} classes itself and answers DiSNI's
 * {@code System.loadLibrary("disni")} with the extracted file ({@link ClassLoader#findLibrary}), so neither
 * {@code java.library.path} nor a {@code libdisni.so} on the system is needed. DiSNI reads buffer addresses through
 * {@code sun.nio.ch.DirectBuffer}: the JVM needs {@value #ADD_EXPORTS}.
 *
 * <p>Nothing here throws when the provider cannot work: {@link #isAvailable()} is false and
 * {@link #unavailableReason()} says why (library not built, no RDMA device, CM not usable, load errors).
 */
public final class DisniProvider implements RdmaProvider {
    public static final String NATIVE_RESOURCE = "native/linux-x86_64/libnvmeofrdma.so";
    public static final String ADD_EXPORTS = "--add-exports java.base/sun.nio.ch=ALL-UNNAMED";
    public static final String NOT_BUILT =
            "native library not built (install libibverbs-dev and librdmacm-dev and rebuild)";
    private static final String IMPL = "io.nvmeof.transport.rdma.disni.impl.DisniVerbs";

    private record Loaded(RdmaProvider impl, String reason) {}

    /** One per JVM: a native library can belong to one class loader only. */
    private static Loaded loaded;

    private static synchronized Loaded load() {
        if (loaded == null) {
            loaded = tryLoad();
        }
        return loaded;
    }

    private static Loaded unavailable(String reason) {
        return new Loaded(null, reason);
    }

    private static Loaded tryLoad() {
        String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return unavailable("the DiSNI provider needs Linux on x86_64 (this is " + os + "/" + arch + ")");
        }
        ClassLoader parent = DisniProvider.class.getClassLoader();
        URL lib = parent.getResource(NATIVE_RESOURCE);
        if (lib == null) {
            return unavailable(NOT_BUILT);
        }
        if (!Object.class.getModule().isExported("sun.nio.ch", DisniProvider.class.getModule())) {
            return unavailable("DiSNI needs the JVM option " + ADD_EXPORTS);
        }
        URL disniJar;
        URL ownCode;
        try {
            disniJar = Class.forName("com.ibm.disni.verbs.RdmaCm", false, parent)
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation();
            ownCode = DisniProvider.class.getProtectionDomain().getCodeSource().getLocation();
        } catch (ClassNotFoundException | LinkageError e) {
            return unavailable("DiSNI (com.ibm.disni:disni) is not on the class path");
        } catch (RuntimeException e) {
            return unavailable("cannot locate the DiSNI classes: " + e);
        }
        Path so;
        try {
            Path dir = Files.createTempDirectory("nvmeofrdma");
            so = dir.resolve("libnvmeofrdma.so");
            try (InputStream in = lib.openStream()) {
                Files.copy(in, so, StandardCopyOption.REPLACE_EXISTING);
            }
            so.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
        } catch (IOException e) {
            return unavailable("cannot extract " + NATIVE_RESOURCE + ": " + e);
        }
        try {
            ClassLoader isolating = new IsolatingLoader(new URL[] {ownCode, disniJar}, parent, so);
            Object impl = Class.forName(IMPL, true, isolating)
                    .getConstructor(String.class)
                    .newInstance(so.toString());
            return new Loaded((RdmaProvider) impl, null);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause();
            if (c instanceof UnsatisfiedLinkError) {
                return unavailable("cannot load libnvmeofrdma.so: " + c.getMessage());
            }
            if (c instanceof IOException) {
                return unavailable(c.getMessage());
            }
            return unavailable("DiSNI provider failed to start: " + c);
        } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
            return unavailable("DiSNI provider failed to start: " + e);
        }
    }

    /**
     * Defines DiSNI and this package's impl classes itself (child first), everything else from the parent; resolves
     * DiSNI's {@code loadLibrary("disni")} and our own library to the extracted file.
     */
    private static final class IsolatingLoader extends URLClassLoader {
        static {
            registerAsParallelCapable();
        }

        private final Path library;

        IsolatingLoader(URL[] urls, ClassLoader parent, Path library) {
            super("nvmeof-disni", urls, parent);
            this.library = library;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("com.ibm.disni.") || name.startsWith("io.nvmeof.transport.rdma.disni.impl.")) {
                synchronized (getClassLoadingLock(name)) {
                    Class<?> c = findLoadedClass(name);
                    if (c == null) {
                        c = findClass(name);
                    }
                    if (resolve) {
                        resolveClass(c);
                    }
                    return c;
                }
            }
            return super.loadClass(name, resolve);
        }

        @Override
        protected String findLibrary(String libname) {
            if (libname.equals("disni") || libname.equals("nvmeofrdma")) {
                return library.toAbsolutePath().toString();
            }
            return null;
        }
    }

    // ------------------------------------------------------------------------------------------------ provider

    @Override
    public String name() {
        return "disni";
    }

    @Override
    public boolean isAvailable() {
        return load().impl != null;
    }

    @Override
    public String unavailableReason() {
        return load().reason;
    }

    @Override
    public boolean isEmulated() {
        return false;
    }

    @Override
    public String description() {
        Loaded l = load();
        return l.impl != null ? l.impl.description() : "DiSNI (unavailable: " + l.reason + ")";
    }

    private RdmaProvider impl() throws IOException {
        Loaded l = load();
        if (l.impl == null) {
            throw new IOException("DiSNI provider unavailable: " + l.reason);
        }
        return l.impl;
    }

    @Override
    public RdmaListener listen(java.net.InetSocketAddress address, ConnectionRequestHandler handler)
            throws IOException {
        return impl().listen(address, handler);
    }

    @Override
    public RdmaConnection connect(
            java.net.InetSocketAddress address,
            QueuePairAttributes attributes,
            ByteBuffer privateData,
            Consumer<RdmaConnection> receivesToPost,
            Duration timeout)
            throws IOException {
        return impl().connect(address, attributes, privateData, receivesToPost, timeout);
    }

    @Override
    public String toString() {
        return "DisniProvider[" + description() + "]";
    }
}
