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

    /** FLAGS must be exactly PSDT 01 and no FUSE: the mask of the checked bits and the value (nvmeof-protocol.md §1.1). */
    private static final int FLAGS_CHECKED = 0xC3;

    private static final int FLAGS_REQUIRED = SubmissionQueueEntry.FLAGS_SGL;

    private final QueueChannel channel;
    private final FabricsCommands fabrics;
    private final NvmCommands nvm;

    private Controller controller;
    private Subsystem subsystem;
    /** -1 until Connect, then 0 (admin) or 1..N. */
    private int qid = -1;

    private int sqsize;
    private boolean sqFlowControlDisabled;
    private int sqhd;
    /** The request last completed, so the exception guard never completes one twice. */
    private TargetRequest completed;

    QueueSession(NvmeTarget target, QueueChannel channel) {
        this.channel = channel;
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

    /** The subsystem of that controller, or null before Connect. */
    Subsystem subsystem() {
        return subsystem;
    }

    // ---- QueueHandler ----

    @Override
    public void onCommand(TargetRequest request) {
        completed = null;
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
            if (status != Status.SUCCESS) {
                complete(request, status);
                return;
            }
            SubmissionQueueEntry c = request.command();
            if (c.opcode() == FabricsCommandType.OPCODE) {
                fabrics.connect(request, c); // the only fabrics command with data
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
        controller = null;
        qid = -1;
    }

    // ---- dispatch ----

    private void dispatch(TargetRequest request) {
        int transportStatus = request.transportStatus();
        if (transportStatus != 0) {
            complete(request, transportStatus);
            return;
        }
        SubmissionQueueEntry c = request.command();
        if ((c.flags() & FLAGS_CHECKED) != FLAGS_REQUIRED) {
            complete(request, Status.dnr(Status.INVALID_FIELD)); // PSDT must be SGL, FUSE 0 (nvmeof-protocol.md §1.1)
            return;
        }
        if (c.opcode() == FabricsCommandType.OPCODE) {
            fabrics.execute(request, c);
            return;
        }
        if (qid < 0) {
            complete(
                    request,
                    Status.dnr(
                            Status.INVALID_OPCODE)); // only Connect on an unconnected queue (nvmeof-protocol.md §2.1)
            return;
        }
        Controller ctrl = controller;
        if (!ctrl.ready()) {
            // Before CC.EN/CSTS.RDY (nvmeof-protocol.md §2.3); a discovery controller answers Invalid Opcode like
            // nvmet.
            complete(request, Status.dnr(ctrl.isDiscovery() ? Status.INVALID_OPCODE : Status.COMMAND_SEQUENCE_ERROR));
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
        channel.connected(newQid, newSqsize, noFlowControl);
    }

    /** Disconnect: the queue belongs to no controller any more. */
    void unbind() {
        controller = null;
        qid = -1;
    }

    // ---- completion ----

    /** Fills SQHD, SQID and STATUS and hands the request back to the transport (nvmeof-protocol.md §1.2). */
    void complete(TargetRequest request, int status) {
        CompletionQueueEntry response = request.response();
        response.status(status);
        response.sqid(qid < 0 ? 0 : qid);
        response.sqhd(nextSqhd());
        if (status != Status.SUCCESS && controller != null) {
            controller.recordError(
                    qid, request.command().cid(), status, request.command().nsid());
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
