package io.nvmeof.transport.rdma.verbs;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** Finds {@link RdmaProvider}s with {@link ServiceLoader} (META-INF/services/io.nvmeof.transport.rdma.verbs.RdmaProvider). */
public final class RdmaProviders {
    private RdmaProviders() {}

    /** Every provider on the class path, available or not, in ServiceLoader order. */
    public static List<RdmaProvider> all() {
        List<RdmaProvider> out = new ArrayList<>();
        for (RdmaProvider p : ServiceLoader.load(RdmaProvider.class, RdmaProviders.class.getClassLoader())) {
            out.add(p);
        }
        return out;
    }

    /** The providers that can work here ({@link RdmaProvider#isAvailable()}), in ServiceLoader order. */
    public static List<RdmaProvider> available() {
        List<RdmaProvider> out = new ArrayList<>();
        for (RdmaProvider p : all()) {
            if (p.isAvailable()) {
                out.add(p);
            }
        }
        return out;
    }

    /**
     * The provider named {@code name} ("disni", "soft"), available or not (check {@link RdmaProvider#isAvailable()} and
     * show {@link RdmaProvider#unavailableReason()}), or an {@link IllegalArgumentException} naming the ones that exist.
     */
    public static RdmaProvider find(String name) {
        List<String> names = new ArrayList<>();
        for (RdmaProvider p : all()) {
            if (p.name().equalsIgnoreCase(name)) {
                return p;
            }
            names.add(p.name());
        }
        throw new IllegalArgumentException(
                "no RDMA provider named '" + name + "' on the class path (found: " + names + ")");
    }
}
