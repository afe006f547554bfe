package io.nvmeof.target;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.namespace.RamNamespace;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The NVM command set I/O commands of one I/O queue (nvmeof-protocol.md §4): Read, Write, Compare, Flush, Write
 * Zeroes, Dataset Management, Verify and Copy ({@link NvmCopy}) on the queue's subsystem's RAM namespaces, and fused
 * Compare and Write ({@link FusedCompareAndWrite}). Every change of namespace memory is bracketed by this queue's
 * {@link FusedGate.Mark} (two volatile stores and a volatile load) so fused pairs are atomic without a lock here. Owned by its {@link QueueSession}, used
 * only on that queue's thread; it completes every command through the session, and the session is the
 * {@code DataReceiver} that brings write data back here ({@link #dataReceived}).
 *
 * <p>This is the I/O path: it takes no lock and allocates nothing. The namespace lookup is a volatile array read, the
 * checks are arithmetic, and data moves between the transport's buffers and namespace chunks directly.
 */
final class NvmCommands {
    /** Write Zeroes CDW12 bit 25: DEAC (nvmeof-protocol.md §4.4). Dataset Management CDW11 bit 2: AD (nvmeof-protocol.md §4.5). */
    private static final int WRITE_ZEROES_DEAC = 1 << 25;

    private static final int DSM_AD = 1 << 2;
    /** Write and Write Zeroes CDW12 bit 30: FUA, force unit access (nvmeof-protocol.md §4.2). */
    private static final int FUA = 1 << 30;
    /** A DSM range is 16 bytes: context attributes, NLB (a count) at 4, SLBA at 8 (nvmeof-protocol.md §4.5). */
    private static final int DSM_RANGE = 16;

    private final QueueSession session;
    private final FusedCompareAndWrite fused;
    private final NvmCopy copy = new NvmCopy();
    private final ReservationCommands reservations;
    /** This queue's writes in progress, which a fused Compare and Write waits for (FusedGate). */
    private final FusedGate.Mark writing = new FusedGate.Mark();
    /** {@link #endWrite} as a task, for work finished on the queue's thread after a worker (allocated once). */
    private final Runnable endWrite = this::endWrite;

    private FusedGate gate;

    /**
     * NVM commands this queue accepted for processing (past the namespace and ANA checks): per-path statistics for
     * {@link Controller#ioCommands()}. Written only by this queue's thread (a release store, no lock), read by any.
     */
    private final AtomicLong processed = new AtomicLong();

    NvmCommands(QueueSession session) {
        this.session = session;
        this.fused = new FusedCompareAndWrite(session);
        this.reservations = new ReservationCommands(session);
    }

    /** The queue became an I/O queue of {@code subsystem}: its writes count for fused pairs from now on. */
    void attach(Subsystem subsystem) {
        gate = subsystem.fusedGate();
        gate.register(writing);
    }

    /** The queue left its subsystem. */
    void detach() {
        if (gate != null) {
            gate.unregister(writing);
            gate = null;
        }
    }

    /**
     * Enters a write that changes namespace memory; false if a fused pair runs, and then the caller hands the command
     * to {@link #retryLater} (FusedGate: the write waits, the thread does not). Pair with {@link #endWrite()}. Takes no
     * retry task itself, so that a write allocates none unless it has to wait (a capturing lambda built on every write
     * is only free where C2's escape analysis removes it: 24 B per write in the interpreter, C1 code and after a
     * deoptimization).
     */
    private boolean beginWrite() {
        writing.enter();
        FusedGate g = gate; // null once the queue left its subsystem: no pair can wait for it any more
        if (g != null && g.active()) {
            writing.exit();
            return false;
        }
        return true;
    }

    /** Runs {@code retry} later on this queue's thread: a write that {@link #beginWrite} turned away. */
    private void retryLater(Runnable retry) {
        session.channel().execute(retry);
    }

    private void endWrite() {
        writing.exit();
    }

    /** An NVM command on this I/O queue: checks it, then runs it or asks for its data. */
    void execute(TargetRequest request, SubmissionQueueEntry c) {
        if (fused.waitingForSecond() && c.fuse() != FusedCompareAndWrite.FUSE_SECOND) {
            fused.orphanFirst(); // a fused first must be followed at once by its second (NVMe Base 2.0c §3.4.2)
        }
        run(request, c);
    }

    /** Runs a command that arrived (or, deferred by the FusedGate, runs it again: no fused-order check then). */
    private void run(TargetRequest request, SubmissionQueueEntry c) {
        NvmOpcode opcode = NvmOpcode.of(c.opcode());
        int nsid = c.nsid();
        RamNamespace ns = session.subsystem().namespace(nsid);
        if (ns == null) {
            if (opcode == NvmOpcode.FLUSH && nsid == 0xFFFFFFFF) {
                // Flush of all namespaces (nvmeof-protocol.md §4.3) has nothing to do in RAM; file-backed ones are
                // forced (flushFiles completes the request then).
                int status = checkNoData(request);
                if (status != Status.SUCCESS || !flushFiles(request)) {
                    session.complete(request, status);
                }
                return;
            }
            session.complete(request, Status.dnr(Status.INVALID_NAMESPACE));
            return;
        }
        // ANA (AnaPath): a group inaccessible, persistently lost or changing on this path fails every I/O command with
        // the path status and no DNR, before the opcode is looked at, as nvmet does.
        int anaStatus = session.controller().anaPath().ioStatus(nsid);
        if (anaStatus != Status.SUCCESS) {
            session.complete(request, anaStatus);
            return;
        }
        processed.lazySet(processed.get() + 1);
        if (opcode == null) {
            session.complete(request, Status.dnr(Status.INVALID_OPCODE));
            return;
        }
        // Reservations (NVMe Base 2.0 §8.19): one volatile read of the namespace's snapshot, no lock.
        int access = session.subsystem().reservations(nsid).snapshot().access(c.opcode(), hostMsb(), hostLsb());
        if (access != Status.SUCCESS) {
            session.complete(request, access);
            return;
        }
        if (c.fuse() != FusedCompareAndWrite.FUSE_NONE) {
            fused.execute(request, c, ns);
            return;
        }
        switch (opcode) {
            case RESERVATION_REGISTER:
            case RESERVATION_REPORT:
            case RESERVATION_ACQUIRE:
            case RESERVATION_RELEASE:
                reservations.execute(request, c, opcode);
                return;
            case READ: {
                int status = checkTransfer(request, c, ns);
                if (status != Status.SUCCESS) {
                    session.complete(request, status);
                    return;
                }
                ns.read(request, c.slba() << ns.blockShift(), request.dataLength());
                session.complete(request, Status.SUCCESS);
                return;
            }
            case WRITE: {
                int status =
                        ns.readOnly() ? Status.dnr(Status.NAMESPACE_WRITE_PROTECTED) : checkTransfer(request, c, ns);
                if (status != Status.SUCCESS) {
                    session.complete(request, status);
                    return;
                }
                if (request.directDataPlacement()) {
                    // Zero copy: the transport moves the data straight into namespace memory (RDMA Read). The
                    // write is in progress from here until its data is in (writeData or dataFailed).
                    if (!beginWrite()) {
                        retryLater(() -> run(request, c));
                        return;
                    }
                    status = ns.placeWrite(request, c.slba() << ns.blockShift(), request.dataLength());
                    if (status != Status.SUCCESS) {
                        endWrite();
                        session.complete(request, status); // the transport releases the chunks already named
                        return;
                    }
                }
                request.receiveData(session); // continues in writeData()
                return;
            }
            case COMPARE: {
                int status = checkTransfer(request, c, ns);
                if (status != Status.SUCCESS) {
                    session.complete(request, status);
                    return;
                }
                request.receiveData(session); // continues in compareData()
                return;
            }
            case FLUSH: {
                int status = checkNoData(request);
                if (status == Status.SUCCESS && ns.persistent()) {
                    // A file: completes once every write completed before it is on the device (msync).
                    NamespaceFlusher.forceThenComplete(session, request, ns, 0, -1, Status.SUCCESS);
                    return;
                }
                session.complete(request, status); // RAM: written data is already where reads find it
                return;
            }
            case WRITE_ZEROES: {
                if (ns.readOnly()) {
                    session.complete(request, Status.dnr(Status.NAMESPACE_WRITE_PROTECTED));
                    return;
                }
                int status = checkNoData(request);
                if (status == Status.SUCCESS) {
                    status = checkRange(c, ns);
                }
                if (status == Status.SUCCESS) {
                    if (!beginWrite()) {
                        retryLater(() -> run(request, c));
                        return;
                    }
                    int shift = ns.blockShift();
                    long offset = c.slba() << shift;
                    long length = (long) (c.nlb() + 1) << shift;
                    boolean deac = (c.cdw12() & WRITE_ZEROES_DEAC) != 0;
                    if (deac && ns.persistent() && ns.deallocates()) {
                        // Punching holes in a file blocks: a worker does it, the write mark is held until it is done.
                        NamespaceFlusher.deallocateThenComplete(
                                session, request, ns, new long[] {offset, length}, (c.cdw12() & FUA) != 0, endWrite);
                        return;
                    }
                    ns.zero(offset, length, deac);
                    endWrite();
                    if ((c.cdw12() & FUA) != 0 && ns.persistent()) {
                        NamespaceFlusher.forceThenComplete(
                                session, request, ns, c.slba() << shift, (long) (c.nlb() + 1) << shift, status);
                        return;
                    }
                }
                session.complete(request, status);
                return;
            }
            case VERIFY: {
                // Verify (NVM Command Set 1.0c §3.3.4): RAM holds no unreadable block, so a range that exists
                // verifies. No data moves; FUA, LR and PRINFO change nothing here.
                int status = checkNoData(request);
                session.complete(request, status == Status.SUCCESS ? checkRange(c, ns) : status);
                return;
            }
            case COPY: {
                int status = NvmCopy.check(request, c, ns);
                if (status != Status.SUCCESS) {
                    session.complete(request, status);
                    return;
                }
                request.receiveData(session); // the source range list; continues in dataReceived()
                return;
            }
            case DATASET_MANAGEMENT: {
                int ranges = (c.cdw10() & 0xFF) + 1; // NR is 0's based (nvmeof-protocol.md §4.5)
                if (request.dataLength() < ranges * DSM_RANGE) {
                    session.complete(request, Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
                    return;
                }
                if ((c.cdw11() & DSM_AD) == 0) {
                    session.complete(request, Status.SUCCESS); // only hints (IDR/IDW): nothing to do in RAM
                    return;
                }
                if (ns.readOnly()) {
                    session.complete(request, Status.dnr(Status.NAMESPACE_WRITE_PROTECTED));
                    return;
                }
                request.receiveData(session); // continues in dsmData()
                return;
            }
            default:
                session.complete(request, Status.dnr(Status.INVALID_OPCODE));
        }
    }

    /** NVM commands accepted on this queue so far. */
    long processed() {
        return processed.get();
    }

    /** SLBA + NLB within the namespace, unsigned (nvmeof-protocol.md §4.6). */
    private static int checkRange(SubmissionQueueEntry c, RamNamespace ns) {
        long slba = c.slba();
        long blocks = ns.blocks();
        // blocks < 2^55, so once slba < blocks the sum cannot overflow.
        if (Long.compareUnsigned(slba, blocks) >= 0 || slba + c.nlb() + 1 > blocks) {
            return Status.dnr(Status.LBA_OUT_OF_RANGE);
        }
        return Status.SUCCESS;
    }

    /**
     * A command that moves no data (Flush, Write Zeroes, Verify) with a data SGL longer than 0 bytes: Data SGL Length
     * Invalid, as nvmet answers. Our Identify Controller leaves SGLS bit 18 clear (no SGL longer than the data to be
     * transferred), and for such a controller a longer SGL is that status (NVMe Base 2.0c, Generic Command Status
     * values, "Data SGL Length Invalid").
     */
    static int checkNoData(TargetRequest request) {
        return request.dataLength() == 0 ? Status.SUCCESS : Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
    }

    /** Range, then SGL length = (NLB + 1) × block size exactly, like nvmet (nvmeof-protocol.md §4.1). */
    static int checkTransfer(TargetRequest request, SubmissionQueueEntry c, RamNamespace ns) {
        int status = checkRange(c, ns);
        if (status != Status.SUCCESS) {
            return status;
        }
        if (request.dataLength() != (c.nlb() + 1) << ns.blockShift()) {
            return Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
        }
        return Status.SUCCESS;
    }

    /** The data of a Write, Compare or Dataset Management arrived (status 0): finishes the command. */
    void dataReceived(TargetRequest request, SubmissionQueueEntry c) {
        if (c.fuse() != FusedCompareAndWrite.FUSE_NONE) {
            fused.dataIn(request);
            return;
        }
        NvmOpcode opcode = NvmOpcode.of(c.opcode());
        if (opcode == null) {
            session.complete(request, Status.INTERNAL_ERROR);
            return;
        }
        if (!preemptCheck(request, c)) {
            return;
        }
        switch (opcode) {
            case RESERVATION_REGISTER:
            case RESERVATION_ACQUIRE:
            case RESERVATION_RELEASE:
                reservations.dataReceived(request, c, opcode);
                break;
            case WRITE:
                writeData(request, c);
                break;
            case COMPARE:
                compareData(request, c);
                break;
            case DATASET_MANAGEMENT:
                dsmData(request, c);
                break;
            case COPY:
                copyData(request, c);
                break;
            default:
                session.complete(request, Status.INTERNAL_ERROR);
                break;
        }
    }

    /**
     * Data arrived for a command admitted earlier: if a Preempt and Abort preempted its host meanwhile, it completes
     * with Command Aborted due to Preempt and Abort instead (false). Allocation-free.
     */
    private boolean preemptCheck(TargetRequest request, SubmissionQueueEntry c) {
        Reservations r = session.subsystem().reservations(c.nsid());
        int status = r == null ? Status.SUCCESS : r.snapshot().abortedByPreempt(c.opcode(), hostMsb(), hostLsb());
        if (status != Status.SUCCESS) {
            session.complete(request, status);
            return false;
        }
        return true;
    }

    private long hostMsb() {
        return session.controller().hostId().getMostSignificantBits();
    }

    private long hostLsb() {
        return session.controller().hostId().getLeastSignificantBits();
    }

    private void writeData(TargetRequest request, SubmissionQueueEntry c) {
        RamNamespace ns = session.subsystem().namespace(c.nsid());
        if (ns == null) {
            session.complete(request, Status.dnr(Status.INVALID_NAMESPACE)); // removed while the data was on its way
            return;
        }
        if (request.directDataPlacement()) {
            endWrite(); // begun before placeWrite
            ns.wrote(request.dataLength()); // already in namespace memory (placeWrite)
            completeWrite(request, c, ns, Status.SUCCESS);
            return;
        }
        if (!beginWrite()) {
            retryLater(() -> writeData(request, c));
            return;
        }
        int status = ns.write(request.data(), 0, c.slba() << ns.blockShift(), request.dataLength());
        endWrite();
        completeWrite(request, c, ns, status);
    }

    /** A write is in namespace memory: completes it, after forcing it to the file first if it has FUA. */
    private void completeWrite(TargetRequest request, SubmissionQueueEntry c, RamNamespace ns, int status) {
        if (status == Status.SUCCESS && (c.cdw12() & FUA) != 0 && ns.persistent()) {
            NamespaceFlusher.forceThenComplete(
                    session, request, ns, c.slba() << ns.blockShift(), request.dataLength(), status);
            return;
        }
        session.complete(request, status);
    }

    /** Flush of every namespace: forces the subsystem's file-backed ones; false if it has none (nothing to wait for). */
    private boolean flushFiles(TargetRequest request) {
        java.util.List<RamNamespace> files = new java.util.ArrayList<>();
        for (RamNamespace n : session.subsystem().namespaces()) {
            if (n.persistent()) {
                files.add(n);
            }
        }
        if (files.isEmpty()) {
            return false;
        }
        NamespaceFlusher.forceThenComplete(session, request, files, 0, -1, Status.SUCCESS);
        return true;
    }

    /** The data of a command failed to arrive (status non-zero): completes it, and its fused partner if any. */
    void dataFailed(TargetRequest request, SubmissionQueueEntry c, int status) {
        if (c.fuse() != FusedCompareAndWrite.FUSE_NONE) {
            fused.dataFailed(request, status);
            return;
        }
        if (NvmOpcode.of(c.opcode()) == NvmOpcode.WRITE && request.directDataPlacement()) {
            endWrite(); // begun before placeWrite
        }
        session.complete(request, status);
    }

    private void copyData(TargetRequest request, SubmissionQueueEntry c) {
        RamNamespace ns = session.subsystem().namespace(c.nsid());
        if (ns == null) {
            session.complete(request, Status.dnr(Status.INVALID_NAMESPACE));
            return;
        }
        if (!beginWrite()) {
            retryLater(() -> copyData(request, c));
            return;
        }
        int status = copy.copy(request.data(), c, ns);
        endWrite();
        session.complete(request, status);
    }

    private void compareData(TargetRequest request, SubmissionQueueEntry c) {
        RamNamespace ns = session.subsystem().namespace(c.nsid());
        if (ns == null) {
            session.complete(request, Status.dnr(Status.INVALID_NAMESPACE));
            return;
        }
        int status = ns.compare(request.data(), 0, c.slba() << ns.blockShift(), request.dataLength());
        session.complete(request, status == Status.SUCCESS ? status : Status.dnr(status));
    }

    private void dsmData(TargetRequest request, SubmissionQueueEntry c) {
        RamNamespace ns = session.subsystem().namespace(c.nsid());
        if (ns == null) {
            session.complete(request, Status.dnr(Status.INVALID_NAMESPACE));
            return;
        }
        ByteBuffer data = request.data();
        int ranges = (c.cdw10() & 0xFF) + 1;
        long blocks = ns.blocks();
        // Check every range first, so a bad one changes nothing.
        for (int i = 0; i < ranges; i++) {
            long nlb = data.getInt(i * DSM_RANGE + 4) & 0xFFFFFFFFL; // a count, not 0's based (nvmeof-protocol.md §4.5)
            long slba = data.getLong(i * DSM_RANGE + 8);
            if (Long.compareUnsigned(slba, blocks) > 0 || slba + nlb > blocks) {
                session.complete(request, Status.dnr(Status.LBA_OUT_OF_RANGE));
                return;
            }
        }
        if (!ns.deallocates()) {
            // A file-backed namespace keeps its blocks (deallocate is advisory; see RamNamespace.deallocates).
            session.complete(request, Status.SUCCESS);
            return;
        }
        if (!beginWrite()) {
            retryLater(() -> dsmData(request, c));
            return;
        }
        int shift = ns.blockShift();
        if (ns.persistent()) {
            // Holes punched in a file (a blocking system call, possibly long for a whole-device discard): a worker
            // does it, the write mark is held until it is done.
            long[] byteRanges = new long[2 * ranges];
            for (int i = 0; i < ranges; i++) {
                byteRanges[2 * i] = data.getLong(i * DSM_RANGE + 8) << shift;
                byteRanges[2 * i + 1] = (data.getInt(i * DSM_RANGE + 4) & 0xFFFFFFFFL) << shift;
            }
            NamespaceFlusher.deallocateThenComplete(session, request, ns, byteRanges, false, endWrite);
            return;
        }
        for (int i = 0; i < ranges; i++) {
            long nlb = data.getInt(i * DSM_RANGE + 4) & 0xFFFFFFFFL;
            long slba = data.getLong(i * DSM_RANGE + 8);
            ns.zero(slba << shift, nlb << shift, true);
        }
        endWrite();
        session.complete(request, Status.SUCCESS);
    }
}
