package io.nvmeof.target;

import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.namespace.RamNamespace;

/**
 * The fused Compare and Write of one I/O queue (NVMe Base 2.0c §3.4.2; Identify Controller FUSES bit 0): a Compare
 * with FUSE 01b followed at once by a Write with FUSE 10b of the same blocks. When both commands' data are in, the
 * blocks are compared and, if equal, written, with no write of any other queue in between ({@link FusedGate}). On a
 * miscompare the Compare completes with Compare Failure and the Write with Command Aborted due to Failed Fused
 * Command; a first command whose second never comes (any other command follows it) completes with Missing Fused, as
 * does a second without a first. The Compare completes before the Write. Owned by its queue's {@link NvmCommands};
 * queue thread only; nothing here is on the ordinary I/O path.
 */
final class FusedCompareAndWrite {
    static final int FUSE_NONE = 0;
    static final int FUSE_FIRST = 1;
    static final int FUSE_SECOND = 2;

    private final QueueSession session;
    private final Runnable attempt = this::attempt;

    private TargetRequest first;
    private boolean firstDataIn;
    /** The first's second never came: complete it with Missing Fused once its data is in. */
    private boolean firstOrphaned;

    private TargetRequest second;
    private boolean secondDataIn;
    private RamNamespace ns;
    private FusedGate gate;

    FusedCompareAndWrite(QueueSession session) {
        this.session = session;
    }

    /** Whether a first command waits for its second. Cheap: the ordinary path asks this once per command. */
    boolean waitingForSecond() {
        return first != null && second == null && !firstOrphaned;
    }

    /** A command other than the awaited second came: the first is orphaned (Missing Fused). */
    void orphanFirst() {
        firstOrphaned = true;
        if (firstDataIn) {
            finishOrphan();
        }
    }

    /** A command with FUSE 01b or 10b on this queue. */
    void execute(TargetRequest request, SubmissionQueueEntry c, RamNamespace namespace) {
        if (c.fuse() == FUSE_FIRST) {
            if (waitingForSecond()) {
                orphanFirst();
            }
            if (first != null) {
                // The previous pair is still running (its data or the gate): only one pair per queue at a time.
                session.complete(request, Status.dnr(Status.ABORTED_MISSING_FUSED));
                return;
            }
            if (NvmOpcode.of(c.opcode()) != NvmOpcode.COMPARE) {
                session.complete(request, Status.dnr(Status.INVALID_OPCODE)); // only Compare may come first (as SPDK)
                return;
            }
            int status = NvmCommands.checkTransfer(request, c, namespace);
            if (status != Status.SUCCESS) {
                session.complete(request, status);
                return;
            }
            first = request;
            firstDataIn = false;
            firstOrphaned = false;
            ns = namespace;
            request.receiveData(session); // continues in dataIn()
            return;
        }
        // FUSE_SECOND
        if (!waitingForSecond()) {
            session.complete(request, Status.dnr(Status.ABORTED_MISSING_FUSED));
            return;
        }
        SubmissionQueueEntry f = first.command();
        int status;
        if (NvmOpcode.of(c.opcode()) != NvmOpcode.WRITE) {
            status = Status.dnr(Status.INVALID_OPCODE); // only Write may come second
        } else if (c.nsid() != f.nsid() || c.slba() != f.slba() || c.nlb() != f.nlb()) {
            status = Status.dnr(Status.INVALID_FIELD); // both name the same blocks
        } else if (namespace.readOnly()) {
            status = Status.dnr(Status.NAMESPACE_WRITE_PROTECTED);
        } else {
            status = NvmCommands.checkTransfer(request, c, namespace);
        }
        if (status != Status.SUCCESS) {
            session.complete(request, status);
            orphanFirst();
            return;
        }
        second = request;
        secondDataIn = false;
        request.receiveData(session); // continues in dataIn()
    }

    /** The data of the first or the second arrived (status 0). */
    void dataIn(TargetRequest request) {
        if (request == first) {
            firstDataIn = true;
            if (firstOrphaned) {
                finishOrphan();
                return;
            }
        } else if (request == second) {
            secondDataIn = true;
            if (first == null) { // the first failed meanwhile
                second = null;
                session.complete(request, Status.dnr(Status.ABORTED_FAILED_FUSED));
                return;
            }
        } else {
            session.complete(request, Status.INTERNAL_ERROR);
            return;
        }
        if (firstDataIn && second != null && secondDataIn) {
            gate = session.subsystem().fusedGate();
            gate.open(); // writes of every queue wait from now on
            attempt();
        }
    }

    /** The data of the first or the second failed: the pair fails. */
    void dataFailed(TargetRequest request, int status) {
        if (request == first) {
            clearFirst();
            session.complete(request, status);
            if (second != null && secondDataIn) {
                TargetRequest s = second;
                second = null;
                session.complete(s, Status.dnr(Status.ABORTED_FAILED_FUSED));
            } // else the second completes with Failed Fused when its data comes (dataIn without a first)
        } else if (request == second) {
            second = null;
            session.complete(request, status);
            orphanFirst();
        } else {
            session.complete(request, status);
        }
    }

    /** Runs on the queue thread until every write that started before the gate opened is done, then the pair. */
    private void attempt() {
        if (!gate.writersDrained()) {
            session.channel().execute(attempt); // try again after this thread's other work; never block
            return;
        }
        int shift = ns.blockShift();
        long offset = first.command().slba() << shift;
        int length = first.dataLength();
        int compared;
        int written = Status.SUCCESS;
        synchronized (gate) { // fused pairs exclude each other; no ordinary write takes this lock
            compared = ns.compare(first.data(), 0, offset, length);
            if (compared == Status.SUCCESS) {
                written = ns.write(second.data(), 0, offset, length);
            }
        }
        gate.close();
        TargetRequest f = first;
        TargetRequest s = second;
        clearFirst();
        second = null;
        if (compared != Status.SUCCESS) {
            session.complete(f, Status.dnr(compared));
            session.complete(s, Status.dnr(Status.ABORTED_FAILED_FUSED));
        } else if (written != Status.SUCCESS) {
            session.complete(f, Status.dnr(Status.ABORTED_FAILED_FUSED));
            session.complete(s, written);
        } else {
            session.complete(f, Status.SUCCESS);
            session.complete(s, Status.SUCCESS);
        }
    }

    private void finishOrphan() {
        TargetRequest f = first;
        clearFirst();
        session.complete(f, Status.dnr(Status.ABORTED_MISSING_FUSED));
    }

    private void clearFirst() {
        first = null;
        firstDataIn = false;
        firstOrphaned = false;
    }
}
