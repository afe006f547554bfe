package io.nvmeof.initiator;

import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The controller's active namespaces (nvmeof-protocol.md §3.2): the scan at bring-up (Identify CNS 0x02, then CNS
 * 0x00 and 0x03 per NSID), the rescan after a "namespace attribute changed" event (Changed Namespace List, log 0x04,
 * §3.3), and the {@link NamespaceChangeListener}s told about it. Existing {@link Namespace} objects are kept and
 * updated; removed ones are deactivated. Linux: nvme_scan_work.
 *
 * <p>The map is replaced, never changed, so readers on any thread see a consistent snapshot. Scans run on the
 * connecting thread (bring-up), the controller's event thread (rescans) or its reconnect thread (the check after a
 * reconnect); a rescan that overlaps a reconnect's check does not publish its map (the check read everything again).
 */
final class NamespaceScanner {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");

    private final Controller controller;
    private final CopyOnWriteArrayList<NamespaceChangeListener> listeners = new CopyOnWriteArrayList<>();
    private volatile Map<Integer, Namespace> namespaces = Collections.emptyMap();
    /** Bumped (under this object's monitor) when a reconnect starts its check: an event rescan begun before is dropped. */
    private int generation;

    NamespaceScanner(Controller controller) {
        this.controller = controller;
    }

    /** The active namespaces by ascending NSID (a snapshot). */
    Map<Integer, Namespace> current() {
        return namespaces;
    }

    /** The active namespace {@code nsid} ({@link Controller#namespace(int)}). */
    Namespace active(int nsid) throws NvmeException {
        Map<Integer, Namespace> m = namespaces;
        Namespace ns = m.get(nsid);
        if (ns == null) {
            throw new NvmeException("namespace " + Integer.toUnsignedString(nsid) + " is not active on "
                    + controller.uri().connectNqn() + " (active: " + m.keySet() + ")");
        }
        return ns;
    }

    /** The active namespace of the lowest NSID ({@link Controller#namespace()}). */
    Namespace first() throws NvmeException {
        Map<Integer, Namespace> m = namespaces;
        if (m.isEmpty()) {
            throw new NvmeException(controller.uri().connectNqn() + " has no active namespace");
        }
        return m.values().iterator().next();
    }

    void addListener(NamespaceChangeListener listener) {
        listeners.add(listener);
    }

    void removeListener(NamespaceChangeListener listener) {
        listeners.remove(listener);
    }

    /** The first scan, at bring-up. */
    void scan() throws NvmeException {
        namespaces = scan(namespaces, null);
    }

    /**
     * After a "namespace attribute changed" event: reads the Changed Namespace List (LID 0x04, NSID 0xFFFFFFFF, RAE 0
     * clears the event, nvmeof-protocol.md §3.3), re-identifies the NSIDs listed (0xFFFFFFFF: all of them), updates
     * the map and tells the listeners.
     */
    void namespacesChanged() throws NvmeException {
        ByteBuffer log = controller.commands().getLogPage(0x04, 0xFFFFFFFF, 0, 4096, false);
        List<Integer> changed = new ArrayList<>();
        boolean all = log.getInt(0) == 0xFFFFFFFF; // more than 1024 changed (nvmeof-protocol.md §3.3)
        for (int i = 0; !all && i < 1024; i++) {
            int nsid = log.getInt(4 * i);
            if (nsid == 0) {
                break;
            }
            changed.add(nsid);
        }
        int gen;
        synchronized (this) {
            gen = generation;
        }
        Map<Integer, Namespace> before = namespaces;
        Map<Integer, Namespace> after = scan(before, all ? null : changed);
        synchronized (this) {
            if (gen != generation) {
                return; // a reconnect identified every namespace again meanwhile (verifyAfterReconnect)
            }
            namespaces = after;
        }
        List<Namespace> added = new ArrayList<>();
        List<Integer> removed = new ArrayList<>();
        for (Map.Entry<Integer, Namespace> e : after.entrySet()) {
            if (!before.containsKey(e.getKey())) {
                added.add(e.getValue());
            }
        }
        for (Map.Entry<Integer, Namespace> e : before.entrySet()) {
            if (!after.containsKey(e.getKey())) {
                removed.add(e.getKey());
                e.getValue().deactivate();
            }
        }
        if (all) {
            changed = new ArrayList<>(after.keySet());
            changed.addAll(removed);
        }
        NamespaceChangeEvent event = new NamespaceChangeEvent(controller, changed, added, removed);
        for (NamespaceChangeListener l : listeners) {
            try {
                l.namespacesChanged(event);
            } catch (RuntimeException ex) {
                LOG.log(Level.WARNING, "a namespace change listener threw", ex);
            }
        }
    }

    /**
     * After a reconnect, before the parked commands go out again: identifies every active namespace again and checks
     * that each one the application holds is the same namespace, by NGUID, EUI64 and UUID (as Linux's
     * nvme_ns_ids_equal) and block size. One that is gone or changed is deactivated and its parked commands fail with
     * {@link NvmeControllerLostException}; a changed one gets a new {@link Namespace} object; new ones are added. The
     * listeners hear of any change.
     */
    void verifyAfterReconnect() throws NvmeException {
        Map<Integer, Namespace> before;
        synchronized (this) {
            generation++; // an event rescan under way (begun on the old connection) will not publish
            before = namespaces;
        }
        Map<Integer, NamespaceIdentity> now = new TreeMap<>((x, y) -> Integer.compareUnsigned(x, y));
        for (int nsid : activeList()) {
            NamespaceIdentity id = identify(nsid);
            if (id != null && id.present()) {
                now.put(nsid, id);
            }
        }
        Map<Integer, Namespace> after = new TreeMap<>((x, y) -> Integer.compareUnsigned(x, y));
        List<Integer> changed = new ArrayList<>();
        List<Namespace> added = new ArrayList<>();
        List<Integer> removed = new ArrayList<>();
        for (Map.Entry<Integer, Namespace> e : before.entrySet()) {
            int nsid = e.getKey();
            Namespace old = e.getValue();
            NamespaceIdentity id = now.get(nsid);
            if (id != null && sameNamespace(old.identity(), id)) {
                old.update(id);
                after.put(nsid, old);
                continue;
            }
            old.deactivate();
            String why = id == null ? "is gone" : "is another namespace now (NGUID/EUI64/UUID or block size differ)";
            int failed = controller
                    .queues()
                    .failParked(
                            nsid,
                            new NvmeControllerLostException("namespace " + Integer.toUnsignedString(nsid) + " " + why
                                    + " after the reconnect"));
            LOG.log(
                    Level.WARNING,
                    "namespace " + Integer.toUnsignedString(nsid) + " of " + controller + " " + why
                            + " after the reconnect; " + failed + " waiting command(s) failed");
            changed.add(nsid);
            if (id == null) {
                removed.add(nsid);
            }
        }
        for (Map.Entry<Integer, NamespaceIdentity> e : now.entrySet()) {
            if (!after.containsKey(e.getKey())) {
                Namespace ns = new Namespace(controller, e.getValue());
                after.put(e.getKey(), ns);
                added.add(ns);
                if (!changed.contains(e.getKey())) {
                    changed.add(e.getKey());
                }
            }
        }
        namespaces = Collections.unmodifiableMap(after);
        if (!changed.isEmpty()) {
            NamespaceChangeEvent event = new NamespaceChangeEvent(controller, changed, added, removed);
            controller.asyncEvents().execute(() -> tell(event));
        }
    }

    /** The same namespace: equal NGUID, EUI64 and UUID (absent on both sides counts as equal) and block size. */
    static boolean sameNamespace(NamespaceIdentity a, NamespaceIdentity b) {
        return java.util.Objects.equals(a.nguid(), b.nguid())
                && java.util.Objects.equals(a.eui64(), b.eui64())
                && java.util.Objects.equals(a.uuid(), b.uuid())
                && a.lbads() == b.lbads();
    }

    private void tell(NamespaceChangeEvent event) {
        for (NamespaceChangeListener l : listeners) {
            try {
                l.namespacesChanged(event);
            } catch (RuntimeException ex) {
                LOG.log(Level.WARNING, "a namespace change listener threw", ex);
            }
        }
    }

    /** Deactivates every namespace (the controller closed). */
    void deactivateAll() {
        for (Namespace ns : namespaces.values()) {
            ns.deactivate();
        }
    }

    /**
     * Reads the active namespace list (Identify CNS 0x02) and identifies the namespaces that are new or in
     * {@code changed} (null: all). Existing {@link Namespace} objects are kept and updated.
     */
    private Map<Integer, Namespace> scan(Map<Integer, Namespace> current, List<Integer> changed) throws NvmeException {
        List<Integer> active = activeList();
        Map<Integer, Namespace> out = new TreeMap<>((x, y) -> Integer.compareUnsigned(x, y));
        for (int nsid : active) {
            Namespace existing = current.get(nsid);
            if (existing != null && (changed == null ? false : !changed.contains(nsid))) {
                out.put(nsid, existing);
                continue;
            }
            NamespaceIdentity id = identify(nsid);
            if (id == null || !id.present()) {
                continue; // NCAP 0: absent (nvmeof-protocol.md §3.2)
            }
            if (existing != null) {
                existing.update(id);
                out.put(nsid, existing);
            } else {
                out.put(nsid, new Namespace(controller, id));
            }
        }
        return Collections.unmodifiableMap(out);
    }

    /** The active NSIDs, ascending (Identify CNS 0x02, repeated while the page is full). */
    private List<Integer> activeList() throws NvmeException {
        List<Integer> active = new ArrayList<>();
        int after = 0;
        while (true) {
            // NSIDs greater than NSID, ascending, zero-terminated; repeat only while the page is full
            // (nvmeof-protocol.md §3.2).
            ByteBuffer page = controller.commands().identify(0x02, after);
            int n = 0;
            for (; n < 1024; n++) {
                int nsid = page.getInt(4 * n);
                if (nsid == 0) {
                    break;
                }
                active.add(nsid);
                after = nsid;
            }
            if (n < 1024) {
                break;
            }
        }
        return active;
    }

    /** Identify Namespace (CNS 0x00) and, from NVMe 1.3 on, its descriptors (CNS 0x03); null if unsupported. */
    private NamespaceIdentity identify(int nsid) throws NvmeException {
        AdminCommands commands = controller.commands();
        ByteBuffer page = commands.identify(0x00, nsid);
        ByteBuffer descriptors = null;
        if (controller.registers().vs() >= 0x00010300) {
            // CNS 0x03 exists from 1.3 on; Linux skips the namespace if it fails, we only lose the UUID
            // (nvmeof-protocol.md §3.2.4).
            try {
                descriptors = commands.identify(0x03, nsid);
            } catch (NvmeStatusException e) {
                descriptors = null;
            }
        }
        NamespaceIdentity id = NamespaceIdentity.parse(nsid, page, descriptors);
        if (id.present() && (id.ms() != 0 || id.lbads() < 9 || id.lbads() > 16)) {
            // Metadata without PI, or a block size outside 512 B..64 KiB: Linux sets capacity 0 for these
            // (nvmeof-protocol.md §7.5).
            LOG.log(
                    Level.WARNING,
                    "namespace " + nsid + " has an unsupported format (LBADS " + id.lbads() + ", MS " + id.ms()
                            + "); ignored");
            return null;
        }
        return id;
    }
}
