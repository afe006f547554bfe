package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.Subsystem;
import io.nvmeof.target.namespace.RamNamespace;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The SPDK-compatible management of one running {@link NvmeTarget}: the method table, the bdevs and the transports
 * created over RPC. Every call runs under this object's monitor, one at a time, and validates everything before it
 * changes anything. The socket server ({@link RpcServer}) and {@code --config} with SPDK's shape both call
 * {@link #call}.
 *
 * <pre>
 *   Management m = new Management(target);
 *   JsonNode result = m.call("bdev_malloc_create", params);   // or RpcException with SPDK's code
 * </pre>
 */
public final class Management {
    static final ObjectMapper JSON = new ObjectMapper();

    /** The method a handler implements: params (possibly null) in, result out. */
    interface Method {
        JsonNode call(JsonNode params) throws RpcException;
    }

    private final NvmeTarget target;
    private final Map<String, Method> methods = new LinkedHashMap<>();
    /** Bdevs by name, in creation order. */
    final Map<String, Bdev> bdevs = new LinkedHashMap<>();
    /** Transports created with nvmf_create_transport: upper-case trtype to its options. */
    final Map<String, TransportOptions> transports = new TreeMap<>();
    /**
     * PORTIDs of the listeners nvmf_subsystem_add_listener opened (closed again once no subsystem is on them), and of
     * those the discovery NQN was added to (kept open for discovery). Listeners the daemon started with stay open.
     */
    final Set<Integer> rpcListeners = new java.util.HashSet<>();

    final Set<Integer> discoveryListeners = new java.util.HashSet<>();

    /** SPDK's file keyring (keyring_file_add_key). */
    final KeyringMethods keyring = new KeyringMethods();
    /** The keyring names of each host's DH-HMAC-CHAP keys set over RPC, by subsystem NQN and host NQN. */
    final Map<String, Map<String, String[]>> hostKeyNames = new TreeMap<>();

    private int syntheticBdevs;

    public Management(NvmeTarget target) {
        this.target = target;
        methods.put("spdk_get_version", p -> GeneralMethods.version());
        methods.put("rpc_get_methods", p -> GeneralMethods.methods(this, p));
        methods.put("framework_wait_init", p -> GeneralMethods.waitInit(p));
        new BdevMethods(this).register(methods);
        new NvmfMethods(this).register(methods);
        new NvmfQueries(this).register(methods);
        new ConfigMethods(this).register(methods);
        keyring.register(methods);
    }

    NvmeTarget target() {
        return target;
    }

    /** The method names, in the order of the documentation. */
    public List<String> methodNames() {
        return Collections.unmodifiableList(new ArrayList<>(methods.keySet()));
    }

    /** Runs one method. */
    public synchronized JsonNode call(String method, JsonNode params) throws RpcException {
        Method m = methods.get(method);
        if (m == null) {
            throw new RpcException(RpcException.METHOD_NOT_FOUND, "Method not found: " + method);
        }
        sync();
        try {
            return m.call(params);
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidParams(method + ": " + e.getMessage());
        }
    }

    /**
     * Keeps the bdevs in step with namespaces changed outside RPC (the config file, the Java API): a namespace with
     * no bdev gets a malloc bdev named {@code MallocN}; a bdev whose namespace is gone is released.
     */
    private void sync() {
        for (Map.Entry<String, Bdev> e : bdevs.entrySet()) {
            Bdev b = e.getValue();
            if (b.claimed()) {
                Subsystem s = target.subsystem(b.claimedBy());
                if (s == null || s.namespace(b.nsid()) == null) {
                    e.setValue(b.release());
                }
            }
        }
        for (Subsystem s : target.subsystems()) {
            for (RamNamespace ns : s.namespaces()) {
                if (bdevOf(s.nqn(), ns.nsid()) == null) {
                    String name;
                    do {
                        name = "Malloc" + syntheticBdevs++;
                    } while (bdevs.containsKey(name));
                    bdevs.put(
                            name,
                            new Bdev(
                                    name,
                                    Bdev.Kind.MALLOC,
                                    ns.blockSize(),
                                    ns.blocks(),
                                    ns.uuid(),
                                    s.nqn(),
                                    ns.nsid()));
                }
            }
        }
    }

    /** The bdev that is namespace {@code nsid} of {@code nqn}, or null. */
    Bdev bdevOf(String nqn, int nsid) {
        for (Bdev b : bdevs.values()) {
            if (nqn.equals(b.claimedBy()) && b.nsid() == nsid) {
                return b;
            }
        }
        return null;
    }

    Subsystem requireSubsystem(String method, String nqn) throws RpcException {
        Subsystem s = target.subsystem(nqn);
        if (s == null) {
            throw RpcException.invalidParams(method + ": no subsystem " + nqn);
        }
        return s;
    }
}
