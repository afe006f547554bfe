package io.nvmeof.target;

import io.nvmeof.core.command.Status;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * The reservation of one namespace (NVMe Base 2.0, Reservations, §8.19): the registered hosts and their keys, the
 * reservation type and holder, and the generation counter. One instance per namespace, owned by its
 * {@link Subsystem}; the commands ({@link ReservationCommands}) run on the I/O queue threads of any controller.
 *
 * <p><b>Design.</b> Reads and writes must decide "may this host do this now?" without a lock or an allocation, while
 * the reservation commands are rare. So the state has two forms:
 * <ul>
 *   <li>the mutable state below (a map of registrants in registration order, the holder, the type), changed only by
 *       Reservation Register / Acquire / Release under this object's monitor: the small per-namespace lock, taken by
 *       the reservation commands and never by reads or writes;</li>
 *   <li>after every change, an immutable {@link ReservationSnapshot} published through the volatile {@link #snapshot}
 *       field. {@code NvmCommands} reads that field once per I/O and decides with array scans; a command admitted
 *       against one snapshot runs to completion, except that write data arriving after a Preempt and Abort that
 *       preempted its host completes with Command Aborted due to Preempt and Abort.</li>
 * </ul>
 *
 * <p><b>Hosts.</b> A host is the 128-bit Host Identifier of the Connect data: controllers with the same Host ID are one
 * host and share its registration (NVMe Base 2.0 §8.19: reservations belong to hosts, not controllers). A controller
 * whose Host ID is zero has no host identity ("not associated with any other controller", Host Identifier feature):
 * {@link ReservationCommands} refuses it the reservation commands with Command Sequence Error, and it is never a
 * registrant, so the access rules treat it as a non-registrant. nvmet does not check (nvmeof-protocol.md is silent;
 * /docs/conformance.md "Reservations" lists the differences).
 *
 * <p>Notices (Registration Preempted, Reservation Released, Reservation Preempted) go to every controller of the
 * affected hosts through its {@link ReservationNotices}. Registrations are not persistent (RESCAP.PTPLS = 0): they
 * live as long as the target process, across controller disconnects, as nvmet's do.
 */
final class Reservations {
    /** RREGA, RACQA and RRELA values (NVMe Base 2.0 Reservation Register / Acquire / Release, CDW10 bits 2:0). */
    static final int REGISTER = 0;

    static final int UNREGISTER = 1;
    static final int REPLACE = 2;
    static final int ACQUIRE = 0;
    static final int PREEMPT = 1;
    static final int PREEMPT_AND_ABORT = 2;
    static final int RELEASE = 0;
    static final int CLEAR = 1;

    /** Reservation Report, extended data structure (EDS = 1): a 64-byte header and one 64-byte entry per registrant. */
    static final int REPORT_HEADER = 64;

    static final int REPORT_ENTRY = 64;

    private final Subsystem subsystem;
    private final int nsid;

    // The mutable state, guarded by this.
    private final LinkedHashMap<UUID, Long> registrants = new LinkedHashMap<>();
    private final Set<UUID> abortedHosts = new LinkedHashSet<>();
    private UUID holder;
    private int type = ReservationSnapshot.NONE;
    private int generation;

    /** The state the I/O path reads: replaced, never changed. */
    private volatile ReservationSnapshot snapshot = ReservationSnapshot.EMPTY;

    Reservations(Subsystem subsystem, int nsid) {
        this.subsystem = subsystem;
        this.nsid = nsid;
    }

    /** The current state, for the I/O path: one volatile read. */
    ReservationSnapshot snapshot() {
        return snapshot;
    }

    private static boolean allRegistrants(int t) {
        return t == ReservationSnapshot.WRITE_EXCLUSIVE_ALL_REGISTRANTS
                || t == ReservationSnapshot.EXCLUSIVE_ACCESS_ALL_REGISTRANTS;
    }

    private boolean isHolder(UUID host) {
        return type != ReservationSnapshot.NONE
                && (allRegistrants(type) ? registrants.containsKey(host) : host.equals(holder));
    }

    // ---- Reservation Register (RREGA) ----

    synchronized int register(UUID host, int action, boolean iekey, long crkey, long nrkey) {
        Long current = registrants.get(host);
        switch (action) {
            case REGISTER:
                if (current != null) {
                    // Registering again with the same key is a no-op; another key is a conflict.
                    return current == nrkey ? changed() : conflict();
                }
                registrants.put(host, nrkey);
                abortedHosts.remove(host);
                return changed();
            case UNREGISTER: {
                if (current == null || (!iekey && current != crkey)) {
                    return conflict();
                }
                registrants.remove(host);
                if (allRegistrants(type)) {
                    if (registrants.isEmpty()) {
                        release(); // the last registrant of an All Registrants reservation releases it
                    }
                } else if (host.equals(holder)) {
                    int was = type;
                    release();
                    if (was == ReservationSnapshot.WRITE_EXCLUSIVE_REGISTRANTS_ONLY
                            || was == ReservationSnapshot.EXCLUSIVE_ACCESS_REGISTRANTS_ONLY) {
                        notifyAll(registrants.keySet(), host, ReservationNotices.RESERVATION_RELEASED);
                    }
                }
                return changed();
            }
            case REPLACE:
                if (current == null || (!iekey && current != crkey)) {
                    return conflict(); // like nvmet, Replace does not register a host that is not registered
                }
                registrants.put(host, nrkey);
                return changed();
            default:
                return Status.dnr(Status.INVALID_FIELD);
        }
    }

    // ---- Reservation Acquire (RACQA) ----

    synchronized int acquire(UUID host, int action, int rtype, long crkey, long prkey) {
        Long current = registrants.get(host);
        if (current == null || current != crkey) {
            return conflict();
        }
        if (action == ACQUIRE) {
            if (type == ReservationSnapshot.NONE) {
                take(host, rtype);
                publish();
                return Status.SUCCESS;
            }
            return isHolder(host) && type == rtype ? Status.SUCCESS : conflict();
        }
        if (action != PREEMPT && action != PREEMPT_AND_ABORT) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        List<UUID> preempted;
        if (type == ReservationSnapshot.NONE) {
            preempted = withKey(prkey, host);
            if (preempted.isEmpty()) {
                return conflict();
            }
        } else if (allRegistrants(type)) {
            if (prkey == 0) {
                // Preempting an All Registrants reservation with PRKEY 0: the caller takes it, everyone else goes.
                preempted = new ArrayList<>(registrants.keySet());
                preempted.remove(host);
                take(host, rtype);
            } else {
                preempted = withKey(prkey, host);
                if (preempted.isEmpty()) {
                    return conflict();
                }
            }
        } else if (prkey == registrants.get(holder)) {
            // PRKEY is the holder's key: the caller becomes the holder (a holder may preempt itself to change the
            // type).
            boolean self = host.equals(holder);
            int was = type;
            preempted = withKey(prkey, host);
            take(host, rtype);
            if (self && was != rtype) {
                List<UUID> others = new ArrayList<>(registrants.keySet());
                others.removeAll(preempted);
                notifyAll(others, host, ReservationNotices.RESERVATION_RELEASED);
            }
        } else if (prkey != 0) {
            preempted = withKey(prkey, host);
            if (preempted.isEmpty()) {
                return conflict();
            }
        } else {
            return Status.dnr(Status.INVALID_FIELD); // PRKEY 0 only preempts an All Registrants reservation
        }
        for (UUID p : preempted) {
            registrants.remove(p);
        }
        if (action == PREEMPT_AND_ABORT) {
            abortedHosts.clear();
            abortedHosts.addAll(preempted);
        }
        notifyAll(preempted, host, ReservationNotices.REGISTRATION_PREEMPTED);
        if (!preempted.isEmpty()) {
            generation++;
        }
        publish();
        return Status.SUCCESS;
    }

    // ---- Reservation Release (RRELA) ----

    synchronized int release(UUID host, int action, int rtype, long crkey) {
        Long current = registrants.get(host);
        if (current == null || current != crkey) {
            return conflict();
        }
        if (action == RELEASE) {
            if (!isHolder(host)) {
                return Status.SUCCESS; // a registrant that holds nothing: no effect
            }
            if (rtype != type) {
                return Status.dnr(Status.INVALID_FIELD);
            }
            int was = type;
            release();
            publish();
            if (was != ReservationSnapshot.WRITE_EXCLUSIVE && was != ReservationSnapshot.EXCLUSIVE_ACCESS) {
                notifyAll(registrants.keySet(), host, ReservationNotices.RESERVATION_RELEASED);
            }
            return Status.SUCCESS;
        }
        if (action == CLEAR) {
            List<UUID> others = new ArrayList<>(registrants.keySet());
            registrants.clear();
            release();
            generation++;
            publish();
            notifyAll(others, host, ReservationNotices.RESERVATION_PREEMPTED);
            return Status.SUCCESS;
        }
        return Status.dnr(Status.INVALID_FIELD);
    }

    // ---- Reservation Report ----

    /**
     * The extended Reservation Status data structure (EDS = 1): GEN at 0, RTYPE at 4, REGCTL at 5, PTPLS at 9 (0);
     * per registrant from byte 64: CNTLID FFFFh (registrations belong to hosts; dynamic controllers), RCSTS bit 0
     * (holds the reservation), RKEY at 8, HOSTID at 16. REGCTL counts every registrant; the caller truncates.
     */
    synchronized ByteBuffer report() {
        ByteBuffer b = ByteBuffer.allocate(REPORT_HEADER + REPORT_ENTRY * registrants.size())
                .order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, generation);
        b.put(4, (byte) type);
        b.putShort(5, (short) registrants.size());
        int at = REPORT_HEADER;
        for (Map.Entry<UUID, Long> r : registrants.entrySet()) {
            b.putShort(at, (short) LogPages.CNTLID_DYNAMIC);
            b.put(at + 2, (byte) (isHolder(r.getKey()) ? 1 : 0));
            b.putLong(at + 8, r.getValue());
            IdentifyPages.putUuid(b, at + 16, r.getKey());
            at += REPORT_ENTRY;
        }
        return b;
    }

    // ---- helpers (all under this) ----

    private void take(UUID host, int rtype) {
        type = rtype;
        holder = allRegistrants(rtype) ? null : host;
    }

    private void release() {
        type = ReservationSnapshot.NONE;
        holder = null;
    }

    /** Registered hosts other than {@code except} whose key is {@code key}. */
    private List<UUID> withKey(long key, UUID except) {
        List<UUID> out = new ArrayList<>();
        for (Map.Entry<UUID, Long> r : registrants.entrySet()) {
            if (r.getValue() == key && !r.getKey().equals(except)) {
                out.add(r.getKey());
            }
        }
        return out;
    }

    /** A successful Reservation Register: the generation counts it, as nvmet does, and a new snapshot goes out. */
    private int changed() {
        generation++;
        publish();
        return Status.SUCCESS;
    }

    private static int conflict() {
        return Status.dnr(Status.RESERVATION_CONFLICT);
    }

    private void publish() {
        int n = registrants.size();
        long[] msb = new long[n];
        long[] lsb = new long[n];
        int holderIndex = -1;
        int i = 0;
        for (UUID host : registrants.keySet()) {
            msb[i] = host.getMostSignificantBits();
            lsb[i] = host.getLeastSignificantBits();
            if (host.equals(holder)) {
                holderIndex = i;
            }
            i++;
        }
        long[] abortedMsb = new long[abortedHosts.size()];
        long[] abortedLsb = new long[abortedHosts.size()];
        Iterator<UUID> it = abortedHosts.iterator();
        for (int k = 0; it.hasNext(); k++) {
            UUID host = it.next();
            abortedMsb[k] = host.getMostSignificantBits();
            abortedLsb[k] = host.getLeastSignificantBits();
        }
        snapshot = new ReservationSnapshot(type, holderIndex, msb, lsb, abortedMsb, abortedLsb);
    }

    /** Posts notice {@code kind} for this namespace to every controller of each host in {@code hosts} but {@code caller}. */
    private void notifyAll(Iterable<UUID> hosts, UUID caller, int kind) {
        List<Controller> controllers = subsystem.controllers();
        for (UUID host : hosts) {
            if (host.equals(caller)) {
                continue;
            }
            for (Controller c : controllers) {
                if (host.equals(c.hostId())) {
                    c.reservationNotices().post(kind, nsid);
                }
            }
        }
    }
}
