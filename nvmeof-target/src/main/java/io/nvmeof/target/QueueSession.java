package io.nvmeof.target;

import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.ConnectData;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.namespace.RamNamespace;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;

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
 * <p>The NVM I/O path (Read, Write, Flush, Write Zeroes, Dataset Management, Compare; nvmeof-protocol.md §4) takes no lock and allocates
 * nothing: the namespace lookup is a volatile array read, the checks are arithmetic, and data moves between the
 * transport's buffers and namespace chunks directly.
 */
final class QueueSession implements QueueHandler, DataReceiver {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");
    /** Returned by handlers that keep the request to complete later (an AER, nvmeof-protocol.md §3.6). */
    static final int PENDING = -1;

    /** FLAGS must be exactly PSDT 01 and no FUSE: the mask of the checked bits and the value (nvmeof-protocol.md §1.1). */
    private static final int FLAGS_CHECKED = 0xC3;

    private static final int FLAGS_REQUIRED = SubmissionQueueEntry.FLAGS_SGL;
    /** Connect data is exactly 1024 bytes (nvmeof-protocol.md §2.2). */
    private static final int CONNECT_DATA_LENGTH = ConnectData.LENGTH;
    /** Connect Invalid Parameters DW0: IATTR bit 16 = the offset is in the Connect data (nvmeof-protocol.md §2.2). */
    private static final int IATTR_DATA = 1 << 16;
    /** IPO values (nvmeof-protocol.md §2.2): byte offsets in the SQE (QID, SQSIZE) or in the data (CNTLID, SUBNQN, HOSTNQN). */
    private static final int IPO_QID = SubmissionQueueEntry.CONNECT_QID_OFFSET;

    private static final int IPO_SQSIZE = SubmissionQueueEntry.CONNECT_SQSIZE_OFFSET;
    private static final int IPO_CNTLID = ConnectData.CNTLID_OFFSET;
    private static final int IPO_SUBNQN = ConnectData.SUBNQN_OFFSET;
    private static final int IPO_HOSTNQN = ConnectData.HOSTNQN_OFFSET;
    /** Write Zeroes CDW12 bit 25: DEAC (nvmeof-protocol.md §4.4). Dataset Management CDW11 bit 2: AD (nvmeof-protocol.md §4.5). */
    private static final int WRITE_ZEROES_DEAC = 1 << 25;

    private static final int DSM_AD = 1 << 2;
    /** A DSM range is 16 bytes: context attributes, NLB (a count) at 4, SLBA at 8 (nvmeof-protocol.md §4.5). */
    private static final int DSM_RANGE = 16;

    private final NvmeTarget target;
    private final QueueChannel channel;
    private final ConnectData connectData = new ConnectData();

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
        this.target = target;
        this.channel = channel;
    }

    QueueChannel channel() {
        return channel;
    }

    int qid() {
        return qid;
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
            NvmOpcode opcode = NvmOpcode.of(c.opcode());
            if (opcode == null) {
                complete(request, Status.INTERNAL_ERROR);
                return;
            }
            switch (opcode) {
                case FABRICS:
                    connect(request, c);
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
                default:
                    complete(request, Status.INTERNAL_ERROR);
                    break;
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
            fabrics(request, c);
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
        io(request, c);
    }

    // ---- fabrics (nvmeof-protocol.md §2) ----

    private void fabrics(TargetRequest request, SubmissionQueueEntry c) {
        FabricsCommandType fctype = FabricsCommandType.of(c.fctype());
        if (fctype == FabricsCommandType.CONNECT) {
            if (qid >= 0) {
                complete(
                        request,
                        Status.dnr(
                                Status.COMMAND_SEQUENCE_ERROR)); // second Connect on a queue (nvmeof-protocol.md §2.1)
            } else if (request.dataLength() != CONNECT_DATA_LENGTH) {
                complete(request, Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
            } else {
                request.receiveData(this); // continues in connect()
            }
            return;
        }
        if (qid < 0 || fctype == null) {
            complete(request, Status.dnr(Status.INVALID_OPCODE));
            return;
        }
        switch (fctype) {
            case PROPERTY_GET:
                complete(request, qid == 0 ? controller.propertyGet(request, c) : Status.dnr(Status.INVALID_OPCODE));
                return;
            case PROPERTY_SET:
                complete(request, qid == 0 ? controller.propertySet(c) : Status.dnr(Status.INVALID_OPCODE));
                return;
            case DISCONNECT:
                disconnect(request);
                return;
            default:
                complete(request, Status.dnr(Status.INVALID_OPCODE));
        }
    }

    private void connect(TargetRequest request, SubmissionQueueEntry c) {
        if (c.connectRecfmt() != 0) {
            complete(request, Status.dnr(Status.CONNECT_INCOMPATIBLE_FORMAT));
            return;
        }
        int newQid = c.connectQid();
        int newSqsize = c.connectSqsize();
        if (newSqsize == 0) {
            invalidParameters(request, 0, IPO_SQSIZE, "SQSIZE 0");
            return;
        }
        ConnectData d = connectData;
        d.wrap(request.data(), 0);
        String subnqn = d.subNqn();
        if (subnqn == null) {
            invalidParameters(request, IATTR_DATA, IPO_SUBNQN, "SUBNQN not NUL-terminated");
            return;
        }
        String hostnqn = d.hostNqn();
        if (hostnqn == null) {
            invalidParameters(request, IATTR_DATA, IPO_HOSTNQN, "HOSTNQN not NUL-terminated");
            return;
        }
        Subsystem s = target.subsystemForConnect(subnqn);
        if (s == null) {
            invalidParameters(
                    request, IATTR_DATA, IPO_SUBNQN, "unknown subsystem " + subnqn + " (host " + hostnqn + ")");
            return;
        }
        if (!s.allows(hostnqn)) {
            LOG.log(
                    Level.WARNING,
                    "Connect refused: host " + hostnqn + " is not allowed on " + subnqn + " (" + channel.remoteAddress()
                            + ")");
            request.response().dw0(IATTR_DATA | IPO_HOSTNQN);
            complete(request, Status.dnr(Status.CONNECT_INVALID_HOST));
            return;
        }
        boolean noFlowControl = (c.connectCattr() & SubmissionQueueEntry.CATTR_DISABLE_SQ_FLOW_CONTROL) != 0;
        if (newQid == 0) {
            connectAdmin(request, c, d, s, hostnqn, newSqsize, noFlowControl);
        } else {
            connectIo(request, d, s, hostnqn, newQid, newSqsize, noFlowControl);
        }
    }

    private void connectAdmin(
            TargetRequest request,
            SubmissionQueueEntry c,
            ConnectData d,
            Subsystem s,
            String hostnqn,
            int newSqsize,
            boolean noFlowControl) {
        if (d.cntlid() != ConnectData.CNTLID_DYNAMIC) {
            invalidParameters(
                    request,
                    IATTR_DATA,
                    IPO_CNTLID,
                    "admin Connect with CNTLID 0x" + Integer.toHexString(d.cntlid())
                            + " (only the dynamic model, 0xFFFF, is supported)");
            return;
        }
        if (newSqsize > ControllerProfile.ADMIN_QUEUE_SIZE - 1) {
            invalidParameters(request, 0, IPO_SQSIZE, "admin SQSIZE " + newSqsize);
            return;
        }
        java.util.UUID hostId = d.hostId();
        int kato = c.connectKato();
        Controller ctrl = s.createController(id -> new Controller(target, s, id, hostnqn, hostId, this, kato));
        if (ctrl == null) {
            LOG.log(Level.WARNING, "Connect refused: no free CNTLID in " + s.nqn() + " for host " + hostnqn);
            complete(request, Status.dnr(Status.CONNECT_CONTROLLER_BUSY));
            return;
        }
        bind(ctrl, s, 0, newSqsize, noFlowControl);
        ctrl.armKeepAlive();
        LOG.log(
                Level.INFO,
                "connect: host " + hostnqn + " → " + s.nqn() + ", CNTLID " + ctrl.cntlid() + ", QID 0 (admin), "
                        + channel.remoteAddress() + ", KATO " + ctrl.katoMillis() + " ms");
        request.response().dw0(ctrl.cntlid());
        complete(request, Status.SUCCESS);
    }

    private void connectIo(
            TargetRequest request,
            ConnectData d,
            Subsystem s,
            String hostnqn,
            int newQid,
            int newSqsize,
            boolean noFlowControl) {
        if (s.isDiscovery() || newQid > ControllerProfile.MAX_IO_QUEUES) {
            invalidParameters(request, 0, IPO_QID, "QID " + newQid);
            return;
        }
        Controller ctrl = s.controller(d.cntlid());
        if (ctrl == null || ctrl.isClosed() || !ctrl.hostNqn().equals(hostnqn)) {
            invalidParameters(
                    request,
                    IATTR_DATA,
                    IPO_CNTLID,
                    "I/O Connect to unknown controller " + d.cntlid() + " of " + s.nqn() + " by host " + hostnqn);
            return;
        }
        if (newSqsize > ctrl.port().maxQueueSize() - 1) {
            invalidParameters(request, 0, IPO_SQSIZE, "I/O SQSIZE " + newSqsize + " > MQES");
            return;
        }
        if (!ctrl.ready()) {
            complete(request, Status.COMMAND_SEQUENCE_ERROR); // I/O queues connect to an enabled controller
            return;
        }
        if (!ctrl.attach(newQid, this)) {
            LOG.log(
                    Level.WARNING,
                    "Connect refused: QID " + newQid + " of controller " + ctrl.cntlid() + " (" + s.nqn()
                            + ") is already connected");
            complete(request, Status.dnr(Status.COMMAND_SEQUENCE_ERROR));
            return;
        }
        if (ctrl.isClosed()) { // torn down while we attached
            ctrl.detach(newQid, this);
            invalidParameters(request, IATTR_DATA, IPO_CNTLID, "controller " + ctrl.cntlid() + " went away");
            return;
        }
        bind(ctrl, s, newQid, newSqsize, noFlowControl);
        LOG.log(
                Level.INFO,
                "connect: host " + hostnqn + " → " + s.nqn() + ", CNTLID " + ctrl.cntlid() + ", QID " + newQid
                        + ", SQSIZE " + newSqsize + ", " + channel.remoteAddress());
        request.response().dw0(ctrl.cntlid());
        complete(request, Status.SUCCESS);
    }

    private void bind(Controller ctrl, Subsystem s, int newQid, int newSqsize, boolean noFlowControl) {
        controller = ctrl;
        subsystem = s;
        qid = newQid;
        sqsize = newSqsize;
        sqFlowControlDisabled = noFlowControl;
        sqhd = 0;
        channel.connected(newQid, newSqsize, noFlowControl);
    }

    private void invalidParameters(TargetRequest request, int iattr, int ipo, String what) {
        LOG.log(
                Level.WARNING,
                "Connect refused (Invalid Parameters, IPO " + ipo + "): " + what + " from " + channel.remoteAddress());
        request.response().dw0(iattr | ipo);
        complete(request, Status.dnr(Status.CONNECT_INVALID_PARAMETERS));
    }

    private void disconnect(TargetRequest request) {
        if (qid == 0) {
            complete(
                    request,
                    Status.dnr(
                            Status.INVALID_QUEUE_TYPE)); // the admin queue cannot be disconnected (nvmeof-protocol.md
            // §2.4)
            return;
        }
        Controller ctrl = controller;
        int oldQid = qid;
        complete(request, Status.SUCCESS);
        ctrl.detach(oldQid, this);
        controller = null;
        qid = -1;
        LOG.log(
                Level.INFO,
                "Disconnect: I/O queue " + oldQid + " of controller " + ctrl.cntlid() + " (" + subsystem.nqn()
                        + ") deleted by the host");
    }

    // ---- NVM I/O (nvmeof-protocol.md §4) ----

    private void io(TargetRequest request, SubmissionQueueEntry c) {
        NvmOpcode opcode = NvmOpcode.of(c.opcode());
        int nsid = c.nsid();
        RamNamespace ns = subsystem.namespace(nsid);
        if (ns == null) {
            // Flush of all namespaces (nvmeof-protocol.md §4.3) has nothing to do in RAM.
            complete(
                    request,
                    opcode == NvmOpcode.FLUSH && nsid == 0xFFFFFFFF
                            ? Status.SUCCESS
                            : Status.dnr(Status.INVALID_NAMESPACE));
            return;
        }
        if (opcode == null) {
            complete(request, Status.dnr(Status.INVALID_OPCODE));
            return;
        }
        switch (opcode) {
            case READ: {
                int status = checkTransfer(request, c, ns);
                if (status != Status.SUCCESS) {
                    complete(request, status);
                    return;
                }
                ns.read(request, c.slba() << ns.blockShift(), request.dataLength());
                complete(request, Status.SUCCESS);
                return;
            }
            case WRITE: {
                int status =
                        ns.readOnly() ? Status.dnr(Status.NAMESPACE_WRITE_PROTECTED) : checkTransfer(request, c, ns);
                if (status != Status.SUCCESS) {
                    complete(request, status);
                    return;
                }
                if (request.directDataPlacement()) {
                    // Zero copy: the transport moves the data straight into namespace memory (RDMA Read).
                    status = ns.placeWrite(request, c.slba() << ns.blockShift(), request.dataLength());
                    if (status != Status.SUCCESS) {
                        complete(request, status); // the transport releases the chunks already named
                        return;
                    }
                }
                request.receiveData(this); // continues in writeData()
                return;
            }
            case COMPARE: {
                int status = checkTransfer(request, c, ns);
                if (status != Status.SUCCESS) {
                    complete(request, status);
                    return;
                }
                request.receiveData(this); // continues in compareData()
                return;
            }
            case FLUSH:
                complete(request, Status.SUCCESS); // RAM: written data is already where reads find it
                return;
            case WRITE_ZEROES: {
                if (ns.readOnly()) {
                    complete(request, Status.dnr(Status.NAMESPACE_WRITE_PROTECTED));
                    return;
                }
                int status = checkRange(c, ns);
                if (status == Status.SUCCESS) {
                    int shift = ns.blockShift();
                    ns.zero(c.slba() << shift, (long) (c.nlb() + 1) << shift, (c.cdw12() & WRITE_ZEROES_DEAC) != 0);
                }
                complete(request, status);
                return;
            }
            case DATASET_MANAGEMENT: {
                int ranges = (c.cdw10() & 0xFF) + 1; // NR is 0's based (nvmeof-protocol.md §4.5)
                if (request.dataLength() < ranges * DSM_RANGE) {
                    complete(request, Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
                    return;
                }
                if ((c.cdw11() & DSM_AD) == 0) {
                    complete(request, Status.SUCCESS); // only hints (IDR/IDW): nothing to do in RAM
                    return;
                }
                if (ns.readOnly()) {
                    complete(request, Status.dnr(Status.NAMESPACE_WRITE_PROTECTED));
                    return;
                }
                request.receiveData(this); // continues in dsmData()
                return;
            }
            default:
                complete(request, Status.dnr(Status.INVALID_OPCODE));
        }
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

    /** Range, then SGL length = (NLB + 1) × block size exactly, like nvmet (nvmeof-protocol.md §4.1). */
    private static int checkTransfer(TargetRequest request, SubmissionQueueEntry c, RamNamespace ns) {
        int status = checkRange(c, ns);
        if (status != Status.SUCCESS) {
            return status;
        }
        if (request.dataLength() != (c.nlb() + 1) << ns.blockShift()) {
            return Status.dnr(Status.DATA_SGL_LENGTH_INVALID);
        }
        return Status.SUCCESS;
    }

    private void writeData(TargetRequest request, SubmissionQueueEntry c) {
        RamNamespace ns = subsystem.namespace(c.nsid());
        if (ns == null) {
            complete(request, Status.dnr(Status.INVALID_NAMESPACE)); // removed while the data was on its way
            return;
        }
        if (request.directDataPlacement()) {
            ns.wrote(request.dataLength()); // already in namespace memory (placeWrite)
            complete(request, Status.SUCCESS);
            return;
        }
        complete(request, ns.write(request.data(), 0, c.slba() << ns.blockShift(), request.dataLength()));
    }

    private void compareData(TargetRequest request, SubmissionQueueEntry c) {
        RamNamespace ns = subsystem.namespace(c.nsid());
        if (ns == null) {
            complete(request, Status.dnr(Status.INVALID_NAMESPACE));
            return;
        }
        int status = ns.compare(request.data(), 0, c.slba() << ns.blockShift(), request.dataLength());
        complete(request, status == Status.SUCCESS ? status : Status.dnr(status));
    }

    private void dsmData(TargetRequest request, SubmissionQueueEntry c) {
        RamNamespace ns = subsystem.namespace(c.nsid());
        if (ns == null) {
            complete(request, Status.dnr(Status.INVALID_NAMESPACE));
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
                complete(request, Status.dnr(Status.LBA_OUT_OF_RANGE));
                return;
            }
        }
        int shift = ns.blockShift();
        for (int i = 0; i < ranges; i++) {
            long nlb = data.getInt(i * DSM_RANGE + 4) & 0xFFFFFFFFL;
            long slba = data.getLong(i * DSM_RANGE + 8);
            ns.zero(slba << shift, nlb << shift, true);
        }
        complete(request, Status.SUCCESS);
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
