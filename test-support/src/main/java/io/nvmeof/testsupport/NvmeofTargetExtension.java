package io.nvmeof.testsupport;

import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.Sizes;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that runs one of our RAM-backed NVMe-oF targets inside the test JVM, on a free loopback port, and
 * hands the test its URI. No root, no kernel module, no external process: any Java project can use it.
 *
 * <pre>{@code
 * class MyStorageTest {
 *     @RegisterExtension
 *     static NvmeofTargetExtension target = NvmeofTargetExtension.builder()
 *             .namespace("1G").blockSize(4096).build();
 *
 *     @Test
 *     void writesAndReads() throws Exception {
 *         try (Controller c = Nvme.connect(target.uri())) { ... }
 *     }
 *
 *     @Test
 *     void withInjectedUri(@TargetUri String uri) { ... }
 * }
 * }</pre>
 *
 * <p>Registered on a {@code static} field (or with {@code @ExtendWith(NvmeofTargetExtension.class)}, which uses the
 * defaults: one 1 GiB namespace of 4096-byte blocks), the target runs for the whole class; on an instance field, for
 * each test. Namespaces cost memory only for blocks written.
 *
 * <p>Parameters it resolves: {@code @TargetUri String / URI / T} (any T with {@code static T parse(String)}),
 * {@code URI} without the annotation, {@link NvmeTarget} and the extension itself.
 */
public final class NvmeofTargetExtension
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback, ParameterResolver {
    /** The subsystem NQN unless one is given. */
    public static final String DEFAULT_NQN = "nqn.2024-01.io.nvmeof:test";

    private final String transport;
    private final String nqn;
    private final List<NamespaceConfig> namespaces;
    private final List<SubsystemConfig> extraSubsystems;
    private final List<String> allowedHosts;
    private final int maxQueueSize;
    private final int inCapsuleDataSize;
    private final long memoryBudget;
    private final int discoveryKatoMillis;
    private NvmeTarget target;
    private boolean perTest;

    /** The defaults: TCP on 127.0.0.1, one 1 GiB namespace of 4096-byte blocks, subsystem {@link #DEFAULT_NQN}. */
    public NvmeofTargetExtension() {
        this(builder());
    }

    private NvmeofTargetExtension(Builder b) {
        this.transport = b.transport;
        this.nqn = b.nqn;
        List<NamespaceConfig> ns = new ArrayList<>();
        for (Builder.Ns n : b.namespaces.isEmpty() ? List.of(new Builder.Ns("1G", 0, false)) : b.namespaces) {
            int bs = n.blockSize != 0 ? n.blockSize : b.blockSize;
            ns.add(new NamespaceConfig(ns.size() + 1, Sizes.parse(n.size), bs, null, n.readOnly));
        }
        this.namespaces = List.copyOf(ns);
        this.extraSubsystems = List.copyOf(b.extraSubsystems);
        this.allowedHosts = List.copyOf(b.allowedHosts);
        this.maxQueueSize = b.maxQueueSize;
        this.inCapsuleDataSize = b.inCapsuleDataSize;
        this.memoryBudget = b.memoryBudget;
        this.discoveryKatoMillis = b.discoveryKatoMillis;
    }

    public static Builder builder() {
        return new Builder();
    }

    // ---- lifecycle ----

    /** Starts the target (done for you by JUnit; public for use outside JUnit). */
    public synchronized void start() throws IOException {
        if (target != null) {
            return;
        }
        List<SubsystemConfig> subsystems = new ArrayList<>();
        subsystems.add(new SubsystemConfig(nqn, allowedHosts.isEmpty(), allowedHosts, namespaces, null, null));
        subsystems.addAll(extraSubsystems);
        ListenerConfig listener = new ListenerConfig(transport, "127.0.0.1", 0, maxQueueSize, inCapsuleDataSize);
        target = NvmeTarget.start(new TargetConfig(List.of(listener), subsystems, memoryBudget, discoveryKatoMillis));
    }

    /** Stops the target: closes every connection and frees the namespace memory. */
    public synchronized void stop() {
        if (target != null) {
            target.close();
            target = null;
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        synchronized (this) {
            if (target == null) {
                perTest = true; // registered on an instance field: one target per test
                start();
            }
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        synchronized (this) {
            if (perTest) {
                stop();
            }
        }
    }

    // ---- what tests use ----

    /** The running target. */
    public synchronized NvmeTarget target() {
        if (target == null) {
            throw new IllegalStateException("the target is not running (use the extension with @RegisterExtension or "
                    + "@ExtendWith, or call start())");
        }
        return target;
    }

    /** Where the target listens. */
    public InetSocketAddress address() {
        return target().boundAddresses().get(0);
    }

    public int port() {
        return address().getPort();
    }

    /** The transport name ("tcp" or "loop"). */
    public String transport() {
        return transport;
    }

    /** The subsystem NQN. */
    public String nqn() {
        return nqn;
    }

    /** {@code nvme+tcp://127.0.0.1:PORT/NQN}: the subsystem's URI. */
    public String uri() {
        return "nvme+" + transport + "://127.0.0.1:" + port() + "/" + nqn;
    }

    /** {@link #uri()} with query options, e.g. {@code uri("queues=2&depth=16")}. */
    public String uri(String options) {
        return options == null || options.isEmpty() ? uri() : uri() + "?" + options;
    }

    /** {@code nvme+tcp://127.0.0.1:PORT}: the discovery controller's URI. */
    public String discoveryUri() {
        return "nvme+" + transport + "://127.0.0.1:" + port();
    }

    // ---- parameters ----

    @Override
    public boolean supportsParameter(ParameterContext pc, ExtensionContext ec) {
        Class<?> type = pc.getParameter().getType();
        if (pc.isAnnotated(TargetUri.class)) {
            return type == String.class || type == URI.class || parseMethod(type) != null;
        }
        return type == URI.class || type == NvmeTarget.class || type == NvmeofTargetExtension.class;
    }

    @Override
    public Object resolveParameter(ParameterContext pc, ExtensionContext ec) {
        Class<?> type = pc.getParameter().getType();
        if (type == NvmeTarget.class) {
            return target();
        }
        if (type == NvmeofTargetExtension.class) {
            return this;
        }
        TargetUri ann = pc.findAnnotation(TargetUri.class).orElse(null);
        String text = ann != null && ann.discovery() ? discoveryUri() : uri();
        if (ann != null && !ann.options().isEmpty()) {
            text += "?" + ann.options();
        }
        if (type == String.class) {
            return text;
        }
        if (type == URI.class) {
            return URI.create(text);
        }
        try {
            return parseMethod(type).invoke(null, text);
        } catch (ReflectiveOperationException e) {
            throw new ParameterResolutionException("cannot make a " + type.getName() + " from " + text, e);
        }
    }

    private static Method parseMethod(Class<?> type) {
        try {
            Method m = type.getMethod("parse", String.class);
            return Modifier.isStatic(m.getModifiers()) && type.isAssignableFrom(m.getReturnType()) ? m : null;
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** Builder of {@link NvmeofTargetExtension}. */
    public static final class Builder {
        private record Ns(String size, int blockSize, boolean readOnly) {}

        private String transport = "tcp";
        private String nqn = DEFAULT_NQN;
        private final List<Ns> namespaces = new ArrayList<>();
        private final List<SubsystemConfig> extraSubsystems = new ArrayList<>();
        private final List<String> allowedHosts = new ArrayList<>();
        private int blockSize = 4096;
        private int maxQueueSize = 128;
        private int inCapsuleDataSize = 16384;
        private long memoryBudget;
        private int discoveryKatoMillis;

        private Builder() {}

        /** "tcp" (default) or "loop" (in-JVM, no socket: {@link LoopTransport}). */
        public Builder transport(String name) {
            this.transport = name;
            return this;
        }

        public Builder nqn(String subsystemNqn) {
            this.nqn = subsystemNqn;
            return this;
        }

        /** Adds a namespace of {@code size} ("1G", "64M", "4096"); NSIDs are 1, 2, ... in order. */
        public Builder namespace(String size) {
            namespaces.add(new Ns(size, 0, false));
            return this;
        }

        /** Adds a namespace with its own block size (512 or 4096). */
        public Builder namespace(String size, int namespaceBlockSize) {
            namespaces.add(new Ns(size, namespaceBlockSize, false));
            return this;
        }

        /** Adds a read-only namespace. */
        public Builder readOnlyNamespace(String size) {
            namespaces.add(new Ns(size, 0, true));
            return this;
        }

        /** Block size (512 or 4096) of the namespaces added without one; default 4096. */
        public Builder blockSize(int bytes) {
            this.blockSize = bytes;
            return this;
        }

        /** Another subsystem beside the main one (e.g. for discovery tests). */
        public Builder subsystem(String subsystemNqn, String... sizes) {
            List<NamespaceConfig> ns = new ArrayList<>();
            for (String s : sizes) {
                ns.add(new NamespaceConfig(ns.size() + 1, Sizes.parse(s), 4096, null, false));
            }
            extraSubsystems.add(new SubsystemConfig(subsystemNqn, true, List.of(), ns, null, null));
            return this;
        }

        /** Only these host NQNs may connect to the main subsystem (default: any host). */
        public Builder allowHost(String hostNqn) {
            allowedHosts.add(hostNqn);
            return this;
        }

        /** CAP.MQES + 1 and MAXCMD: the largest I/O queue a host may connect (default 128). */
        public Builder maxQueueSize(int entries) {
            this.maxQueueSize = entries;
            return this;
        }

        /** In-capsule data accepted on I/O queues (default 16 KiB). */
        public Builder inCapsuleDataSize(int bytes) {
            this.inCapsuleDataSize = bytes;
            return this;
        }

        /** The most namespace memory the target may use ("256M"); default: half the machine's memory. */
        public Builder memoryBudget(String size) {
            this.memoryBudget = Sizes.parse(size);
            return this;
        }

        /** Keep-alive timeout applied to discovery controllers that connect with KATO 0 (default 120 s). */
        public Builder discoveryKatoMillis(int millis) {
            this.discoveryKatoMillis = millis;
            return this;
        }

        public NvmeofTargetExtension build() {
            return new NvmeofTargetExtension(this);
        }
    }
}
