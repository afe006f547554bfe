package io.nvmeof.target;

import io.nvmeof.target.config.HostAuth;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.namespace.ChunkMemory;
import io.nvmeof.target.namespace.ChunkPool;
import io.nvmeof.target.namespace.MemoryBudget;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * Builds what a {@link SubsystemConfig} or {@link NamespaceConfig} describes for one {@link NvmeTarget}: an NVM
 * subsystem with its serial number, model, listeners and DH-HMAC-CHAP hosts, and RAM or file namespaces in its ANA
 * groups, from the target's memory. Owned by the target; it keeps nothing it builds (the target's subsystems hold
 * them, and free the namespaces).
 */
final class SubsystemFactory {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.target");

    private final MemoryBudget budget;
    private final ChunkMemory chunkMemory;
    private final ChunkPool chunkPool;

    SubsystemFactory(MemoryBudget budget, ChunkMemory chunkMemory, ChunkPool chunkPool) {
        this.budget = budget;
        this.chunkMemory = chunkMemory;
        this.chunkPool = chunkPool;
    }

    /** The subsystem {@code sc} describes, without its namespaces. */
    static Subsystem subsystem(SubsystemConfig sc) {
        String serial = sc.serial() != null ? sc.serial() : derivedSerial(sc.nqn());
        String model = sc.model() != null ? sc.model() : ControllerProfile.DEFAULT_MODEL;
        Subsystem s = new Subsystem(sc.nqn(), false, sc.allowAnyHost(), sc.hosts(), serial, model);
        if (sc.listeners() != null) {
            s.restrictListeners(sc.listeners()); // listener numbers are the PORTIDs start() gives them
        }
        for (HostAuth a : sc.hostAuth()) {
            s.setHostAuth(a.hostNqn(), a);
        }
        return s;
    }

    /** Builds namespace {@code nc} of {@code s} and adds it there, in its ANA group (see {@link #namespace}). */
    RamNamespace add(Subsystem s, NamespaceConfig nc) {
        RamNamespace ns = namespace(s, nc);
        assignAnaGroup(s, ns.nsid(), nc.anaGroup());
        s.addNamespace(ns);
        return ns;
    }

    /**
     * Namespace {@code nc} for {@code s}, not added yet: NSID 0 takes the lowest free one, no UUID the one derived from
     * the subsystem and NSID; in RAM, or in a memory-mapped file when {@code nc} names one.
     */
    RamNamespace namespace(Subsystem s, NamespaceConfig nc) {
        int nsid = nc.nsid() != 0 ? nc.nsid() : s.freeNsid();
        if (nsid == 0) {
            throw new IllegalArgumentException("no free NSID left in " + s.nqn());
        }
        UUID uuid = nc.uuid() != null ? nc.uuid() : RamNamespace.derivedUuid(s.nqn(), nsid);
        if (nc.file() != null) { // kept in a memory-mapped file (RamNamespace.fileBacked)
            return RamNamespace.fileBacked(
                    nsid, nc.sizeBytes(), nc.blockSize(), uuid, nc.readOnly(), budget, chunkMemory, nc.file());
        }
        if (nc.preallocate()) { // all its memory now, as SPDK's malloc bdev (RamNamespace.preallocated)
            long start = System.nanoTime();
            RamNamespace ns = RamNamespace.preallocated(
                    nsid, nc.sizeBytes(), nc.blockSize(), uuid, nc.readOnly(), budget, chunkMemory);
            LOG.log(
                    System.Logger.Level.INFO,
                    () -> "namespace " + nsid + " of " + s.nqn() + ": " + nc.sizeBytes() + " bytes preallocated in "
                            + (System.nanoTime() - start) / 1_000_000 + " ms, " + ns.hugePageBytes()
                            + " of them in 2 MiB slabs advised for huge pages");
            return ns;
        }
        return new RamNamespace(
                nsid, nc.sizeBytes(), nc.blockSize(), uuid, nc.readOnly(), budget, chunkMemory, chunkPool);
    }

    /** A new, empty RAM namespace in place of {@code old}: same NSID, block size, UUID and access, {@code sizeBytes}. */
    RamNamespace resized(RamNamespace old, long sizeBytes) {
        if (old.preallocated()) {
            return RamNamespace.preallocated(
                    old.nsid(), sizeBytes, old.blockSize(), old.uuid(), old.readOnly(), budget, chunkMemory);
        }
        return new RamNamespace(
                old.nsid(), sizeBytes, old.blockSize(), old.uuid(), old.readOnly(), budget, chunkMemory, chunkPool);
    }

    /** Puts a namespace about to be added into its ANA group, unless the NSID is taken (addNamespace then refuses it). */
    static void assignAnaGroup(Subsystem s, int nsid, int group) {
        synchronized (s) {
            if (s.namespace(nsid) == null) {
                s.ana().assign(nsid, group);
            }
        }
    }

    /** Identify SN for a subsystem without one: 20 hex digits of a name-based UUID of its NQN, stable across restarts. */
    private static String derivedSerial(String nqn) {
        return UUID.nameUUIDFromBytes(nqn.getBytes(StandardCharsets.UTF_8))
                .toString()
                .replace("-", "")
                .substring(0, 20);
    }
}
