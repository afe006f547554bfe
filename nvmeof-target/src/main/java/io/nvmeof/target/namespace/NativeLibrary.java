package io.nvmeof.target.namespace;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Loads {@code libnvmeoffile.so} (src/main/native, built into the jar by the Maven profile {@code native-file}) once
 * per class loader: the system calls the JDK lacks, for {@link FileHoles} (hole punching) and {@link SlabMemory}
 * (aligned anonymous memory with transparent huge pages). It is optional: where it is missing or cannot load, each
 * user falls back and says why, using {@link #unavailableReason()}.
 */
final class NativeLibrary {
    static final String NATIVE_RESOURCE = "native/linux-x86_64/libnvmeoffile.so";

    /** Null once the library is loaded, else why not. */
    private static final String UNAVAILABLE = load();

    private NativeLibrary() {}

    private static String load() {
        String os = System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT);
        String arch = System.getProperty("os.arch", "");
        if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
            return "libnvmeoffile.so needs Linux on x86_64 (this is " + os + "/" + arch + ")";
        }
        URL lib = NativeLibrary.class.getClassLoader().getResource(NATIVE_RESOURCE);
        if (lib == null) {
            return NATIVE_RESOURCE + " is not in the build (it needs gcc and a JDK's jni.h at build time)";
        }
        try {
            Path dir = Files.createTempDirectory("nvmeoffile");
            Path so = dir.resolve("libnvmeoffile.so");
            try (InputStream in = lib.openStream()) {
                Files.copy(in, so, StandardCopyOption.REPLACE_EXISTING);
            }
            so.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            System.load(so.toString());
            return null;
        } catch (IOException e) {
            return "cannot extract " + NATIVE_RESOURCE + ": " + e;
        } catch (UnsatisfiedLinkError | SecurityException e) {
            return "cannot load libnvmeoffile.so: " + e.getMessage();
        }
    }

    /** Null if the library is loaded, else the reason it is not. */
    static String unavailableReason() {
        return UNAVAILABLE;
    }
}
