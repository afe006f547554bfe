package io.nvmeof.target;

import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The target's side of one queue: parses every command, checks it, runs it or hands it to its controller, and
 * completes it with SQHD/SQID filled in. One instance per queue, used only on that queue's thread, so its fields need
 * no synchronisation. It is also the queue's {@link DataReceiver}, so asking the transport for write data allocates
 * nothing.
 *
 * <p>Before Connect the queue belongs to no controller; a successful Connect (nvmeof-protocol.md §2.2) binds it as the admin queue of a new
 * controller (QID 0) or as an I/O queue of an existing one. Every failure is a completion status: an unexpected
 * exception completes the command with Internal Error and is logged, and never reaches the transport.
 *
 * <p>The commands themselves run in one class per role, each owned by this session: {@link FabricsCommands}
 * (nvmeof-protocol.md §2), the controller's admin commands on the admin queue (§3), and {@link NvmCommands} on an
 * I/O queue (§4), whose path takes no lock and allocates nothing.
 */
final class QueueSession implements QueueHandler, DataReceiver {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");
    /** Returned by handlers that keep the request to complete later (an AER, nvmeof-protocol.md §3.6). */
    static final int PENDING = -1;

    /** FLAGS must have PSDT 01 (nvmeof-protocol.md §1.1): the mask of the checked bits and the value. */
    private static final int FLAGS_PSDT = 0xC0;

    private static final int FLAGS_REQUIRED = SubmissionQueueEntry.FLAGS_SGL;

    private final QueueChannel channel;
    private final FabricsCommands fabrics;
    private final NvmCommands nvm;
    private final Refusals refusals = new Refusals(this);
    private final StatsRegistry stats;
    /** This queue's statistics from Connect to close or Disconnect; null otherwise. */
    private QueueCounters counters;

    private Controller controller;
    private Subsystem subsystem;
    /** -1 until Connect, then 0 (admin) or 1..N. */
    private int qid = -1;

    /** DH-HMAC-CHAP on this queue, or null when its host need not authenticate (docs/security.md). */
    private QueueAuthentication authentication;

    private int sqsize;
    private boolean sqFlowControlDisabled;
    private int sqhd;
    /** The request last completed, so the exception guard never completes one twice. */
    private TargetRequest completed;

    QueueSession(NvmeTarget target, QueueChannel channel) {
        this.channel = channel;
        this.stats = target.statsRegistry();
        this.fabrics = new FabricsCommands(this, target, channel);
        this.nvm = new NvmCommands(this);
    }

    QueueChannel channel() {
        return channel;
    }

    int qid() {
        return qid;
    }

    /** NVM commands this I/O queue accepted for processing (NvmCommands). */
    long processedCommands() {
        return nvm.processed();
    }

    /** The controller this queue belongs to, or null before Connect. */
    Controller controller() {
        return controller;
    }

    /** This queue's DH-HMAC-CHAP state, or null when its host need not authenticate. */
    QueueAuthentication authentication() {
        return authentication;
    }

    /** The subsystem of that controller, or null before Connect. */
    Subsystem subsystem() {
        return subsystem;
    }

    // ---- QueueHandler ----

    @Override
    public void onCommand(TargetRequest request) {
        completed = null;
        if (counters != null && request.command().opcode() != FabricsCommandType.OPCODE) {
            counters.arrived();
        }
        try {
            dispatch(request);
        } catch (RuntimeException e) {
            internalError(request, e);
        }
    }

    @Override
    public void onData(TargetRequest request, int status) {
        completed = null;
        try {
            SubmissionQueueEntry c = request.command();
            if (status != Status.SUCCESS) {
                if (c.opcode() == FabricsCommandType.OPCODE || qid <= 0) {
                    complete(request, status);
                } else {
                    nvm.dataFailed(request, c, status); // a write in progress or a fused pair ends too
                }
                return;
            }
            if (c.opcode() == FabricsCommandType.OPCODE) {
                fabrics.dataReceived(request, c); // Connect or Authentication Send
            } else {
                nvm.dataReceived(request, c);
            }
        } catch (RuntimeException e) {
            internalError(request, e);
        }
    }

    @Override
    public void onClose(Throwable cause) {
        Controller c = controller;
        if (c != null) {
            if (qid == 0) {
                c.adminClosed(cause);
            } else {
                c.detach(qid, this);
                LOG.log(
                        Level.INFO,
                        "I/O queue " + qid + " of controller " + c.cntlid() + " (" + subsystem.nqn() + ", "
                                + channel.remoteAddress() + ") closed" + (cause == null ? "" : ": " + cause));
            }
        }
        nvm.detach();
        retireCounters();
        controller = null;
        authentication = null;
        qid = -1;
    }

    private void retireCounters() {
        if (counters != null) {
            stats.retire(counters);
            counters = null;
        }
    }

    // ---- dispatch ----

    private void dispatch(TargetRequest request) {
        int transportStatus = request.transportStatus();
        if (transportStatus != 0) {
            refuse(request, transportStatus, null, "the transport refused its data pointer or in-capsule data");
            return;
        }
        SubmissionQueueEntry c = request.command();
        if ((c.flags() & FLAGS_PSDT) != FLAGS_REQUIRED) {
            // PSDT must be SGL (nvmeof-protocol.md §1.1)
            refuse(request, Status.dnr(Status.INVALID_FIELD), null, "PSDT is not 01b (SGL)");
            return;
        }
        int fuse = c.fuse();
        if (fuse != FusedCompareAndWrite.FUSE_NONE
                && (qid <= 0 || fuse != FusedCompareAndWrite.FUSE_FIRST && fuse != FusedCompareAndWrite.FUSE_SECOND)) {
            // Only NVM commands fuse (Compare and Write, NVMe Base 2.0c §3.4.2); FUSE 11b is reserved.
            refuse(request, Status.dnr(Status.INVALID_FIELD), null, "FUSE " + fuse + " on queue " + qid);
            return;
        }
        QueueAuthentication auth = authentication;
        if (auth != null && !auth.authenticated() && !FabricsCommands.isAuthentication(c)) {
            // Until DH-HMAC-CHAP succeeds only Authentication Send/Receive run (NVMe Base 2.0 §8.13; nvmet answers
            // every other command so too).
            refuse(
                    request,
                    Status.dnr(Status.AUTHENTICATION_REQUIRED),
                    null,
                    "a command before DH-HMAC-CHAP succeeded");
            return;
        }
        if (c.opcode() == FabricsCommandType.OPCODE) {
            fabrics.execute(request, c);
            return;
        }
        if (qid < 0) {
            // only Connect on an unconnected queue (nvmeof-protocol.md §2.1)
            refuse(request, Status.dnr(Status.INVALID_OPCODE), null, "a command before Connect");
            return; // no controller yet: no Error Information entry
        }
        Controller ctrl = controller;
        if (!ctrl.ready()) {
            // Before CC.EN/CSTS.RDY (nvmeof-protocol.md §2.3); a discovery controller answers Invalid Opcode like
            // nvmet.
            // No Error Information entry (and no M) for a controller that is not enabled: nvmet makes none here
            // either (it has no parameter error location for a state error); the log is optional (NVMe Base 2.0
            // §5.16.1.2).
            int status = Status.dnr(ctrl.isDiscovery() ? Status.INVALID_OPCODE : Status.COMMAND_SEQUENCE_ERROR);
            refusals.refused(request, status, null, "a command before CC.EN = 1 and CSTS.RDY = 1");
            completeWithoutErrorEntry(request, status);
            return;
        }
        if (qid == 0) {
            int status = ctrl.executeAdmin(request, c);
            if (status != PENDING) {
                complete(request, status);
            }
            return;
        }
        nvm.execute(request, c);
    }

    // ---- binding (Connect and Disconnect, FabricsCommands) ----

    /** Connect succeeded: the queue is now QID {@code newQid} of {@code ctrl}. */
    void bind(Controller ctrl, Subsystem s, int newQid, int newSqsize, boolean noFlowControl) {
        controller = ctrl;
        subsystem = s;
        qid = newQid;
        sqsize = newSqsize;
        sqFlowControlDisabled = noFlowControl;
        sqhd = 0;
        if (newQid > 0) {
            nvm.attach(s);
        }
        retireCounters();
        counters = new QueueCounters(s, ctrl, newQid);
        stats.register(counters);
        channel.connected(newQid, newSqsize, noFlowControl);
    }

    /** The queue's host must authenticate with these settings before anything but Authentication Send/Receive runs. */
    void requireAuthentication(QueueAuthentication auth) {
        authentication = auth;
    }

    /** Disconnect: the queue belongs to no controller any more. */
    void unbind() {
        authentication = null;
        nvm.detach();
        retireCounters();
        controller = null;
        qid = -1;
    }

    // ---- completion ----

    /**
     * Completes a command refused for a reason other than a plain NVMe error (a transport status, a bad PSDT or FUSE,
     * a command out of sequence, a refused Connect), with a rate-limited WARNING that names the host and the reason.
     * {@code hostNqn} is the Connect data's when the queue is not bound yet, else null.
     */
    void refuse(TargetRequest request, int status, String hostNqn, String why) {
        refusals.refused(request, status, hostNqn, why);
        complete(request, status);
    }

    /** Fills SQHD, SQID and STATUS and hands the request back to the transport (nvmeof-protocol.md §1.2). */
    void complete(TargetRequest request, int status) {
        complete(request, status, true);
    }

    /** As {@link #complete(TargetRequest, int)}, but a failure makes no Error Information entry and has no M. */
    void completeWithoutErrorEntry(TargetRequest request, int status) {
        complete(request, status, false);
    }

    private void complete(TargetRequest request, int status, boolean errorEntry) {
        CompletionQueueEntry response = request.response();
        if (status != Status.SUCCESS && errorEntry && controller != null) {
            // Cold path: an Error Information entry, and More (M) in the CQE says there is one (NVMe Base 2.0
            // §4.6.1 Figure 92, §5.16.1.2), as nvmet does.
            controller.recordError(
                    qid, request.command().cid(), status, request.command().nsid());
            status |= Status.MORE_BIT;
        }
        response.status(status);
        response.sqid(qid < 0 ? 0 : qid);
        response.sqhd(nextSqhd());
        SubmissionQueueEntry c = request.command();
        if (counters != null && c.opcode() != FabricsCommandType.OPCODE) {
            counters.completed(
                    c.opcode(), c.nsid(), status & ~Status.MORE_BIT, request.dataLength(), request.arrivalNanos());
        }
        completed = request;
        request.complete();
    }

    /** (sqhd + 1) mod (SQSIZE + 1) per completion, or 0xFFFF with SQ flow control disabled (nvmeof-protocol.md §1.2, §2.2). */
    private int nextSqhd() {
        if (sqFlowControlDisabled) {
            return 0xFFFF;
        }
        if (qid < 0) {
            return 0;
        }
        int h = sqhd + 1;
        if (h > sqsize) {
            h = 0;
        }
        sqhd = h;
        return h;
    }

    private void internalError(TargetRequest request, RuntimeException e) {
        LOG.log(
                Level.ERROR,
                "internal error on queue " + qid + " (" + channel.remoteAddress() + ") running "
                        + safeDescribe(request),
                e);
        if (completed == request) {
            return;
        }
        try {
            complete(request, Status.INTERNAL_ERROR);
        } catch (RuntimeException again) {
            LOG.log(Level.ERROR, "could not complete the failed command either", again);
        }
    }

    private static String safeDescribe(TargetRequest request) {
        try {
            return String.valueOf(request.command());
        } catch (RuntimeException e) {
            return "a command";
        }
    }
}
