package io.nvmeof.target;

import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.ConnectData;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The fabrics commands of one queue (opcode 7Fh, nvmeof-protocol.md §2): Connect, which binds the queue to a new
 * controller (QID 0) or to an existing one (QID &gt; 0), Property Get and Set on the admin queue, and Disconnect of an
 * I/O queue. Owned by its {@link QueueSession} and used only on that queue's thread; it completes every command
 * through the session. Fabrics commands are not on the I/O path: the log lines and the Connect data's strings may
 * allocate.
 */
final class FabricsCommands {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");

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

    private final QueueSession session;
    private final NvmeTarget target;
    private final QueueChannel channel;
    private final ConnectData connectData = new ConnectData();
    private final AuthenticationCommands authentication;
    /** The HOSTNQN of the Connect being run, once read from its data, for the refusal log lines; else null. */
    private String connectingHost;

    FabricsCommands(QueueSession session, NvmeTarget target, QueueChannel channel) {
        this.session = session;
        this.target = target;
        this.channel = channel;
        this.authentication = new AuthenticationCommands(session);
    }

    /** Whether {@code c} is Authentication Send or Receive, the commands a queue takes before it is authenticated. */
    static boolean isAuthentication(SubmissionQueueEntry c) {
        return c.opcode() == FabricsCommandType.OPCODE
                && (c.fctype() == FabricsCommandType.AUTHENTICATION_SEND.code()
                        || c.fctype() == FabricsCommandType.AUTHENTICATION_RECEIVE.code());
    }

    /** The data of a fabrics command has arrived: Connect's or Authentication Send's. */
    void dataReceived(TargetRequest request, SubmissionQueueEntry c) {
        if (c.fctype() == FabricsCommandType.AUTHENTICATION_SEND.code()) {
            authentication.sendData(request, c);
        } else {
            connect(request, c);
        }
    }

    /** A fabrics command (opcode 7Fh) on this queue, connected or not. */
    void execute(TargetRequest request, SubmissionQueueEntry c) {
        FabricsCommandType fctype = FabricsCommandType.of(c.fctype());
        if (fctype == FabricsCommandType.CONNECT) {
            if (session.qid() >= 0) {
                // A second Connect on a queue (nvmeof-protocol.md §2.1).
                session.refuse(request, Status.dnr(Status.COMMAND_SEQUENCE_ERROR), null, "a second Connect");
            } else if (request.dataLength() != CONNECT_DATA_LENGTH) {
                session.refuse(
                        request,
                        Status.dnr(Status.DATA_SGL_LENGTH_INVALID),
                        null,
                        "Connect with " + request.dataLength() + " bytes of data (1024)");
            } else {
                request.receiveData(session); // continues in connect()
            }
            return;
        }
        if (session.qid() < 0 || fctype == null) {
            session.refuse(
                    request,
                    Status.dnr(Status.INVALID_OPCODE),
                    null,
                    (fctype == null ? "unknown FCTYPE 0x" + Integer.toHexString(c.fctype()) : fctype.name())
                            + (session.qid() < 0 ? " before Connect" : ""));
            return;
        }
        switch (fctype) {
            case PROPERTY_GET:
                session.complete(
                        request,
                        session.qid() == 0
                                ? session.controller().propertyGet(request, c)
                                : Status.dnr(Status.INVALID_OPCODE));
                return;
            case PROPERTY_SET:
                session.complete(
                        request,
                        session.qid() == 0 ? session.controller().propertySet(c) : Status.dnr(Status.INVALID_OPCODE));
                return;
            case DISCONNECT:
                disconnect(request);
                return;
            case AUTHENTICATION_SEND:
                authentication.send(request, c);
                return;
            case AUTHENTICATION_RECEIVE:
                authentication.receive(request, c);
                return;
            default:
                session.complete(request, Status.dnr(Status.INVALID_OPCODE));
        }
    }

    /** Connect, once its 1024 bytes of data are in (nvmeof-protocol.md §2.2). */
    void connect(TargetRequest request, SubmissionQueueEntry c) {
        connectingHost = null;
        if (c.connectRecfmt() != 0) {
            session.refuse(
                    request,
                    Status.dnr(Status.CONNECT_INCOMPATIBLE_FORMAT),
                    null,
                    "Connect RECFMT " + c.connectRecfmt() + " (0)");
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
        // An NQN field without its NUL terminator is read as its first 255 bytes, as nvmet reads it (the spec asks
        // for the NUL; a host that forgets it still connects, with a warning).
        String subnqn = d.subNqn();
        if (subnqn == null) {
            subnqn = d.nqnTruncated(ConnectData.SUBNQN_OFFSET);
            LOG.log(Level.WARNING, "Connect: SUBNQN without a NUL terminator, read as " + subnqn);
        }
        String hostnqn = d.hostNqn();
        if (hostnqn == null) {
            hostnqn = d.nqnTruncated(ConnectData.HOSTNQN_OFFSET);
            LOG.log(Level.WARNING, "Connect: HOSTNQN without a NUL terminator, read as " + hostnqn);
        }
        connectingHost = hostnqn;
        Subsystem s = target.subsystemForConnect(subnqn);
        if (s == null) {
            invalidParameters(
                    request, IATTR_DATA, IPO_SUBNQN, "unknown subsystem " + subnqn + " (host " + hostnqn + ")");
            return;
        }
        if (!s.allows(hostnqn)) {
            request.response().dw0(IATTR_DATA | IPO_HOSTNQN);
            session.refuse(request, Status.dnr(Status.CONNECT_INVALID_HOST), hostnqn, "host not allowed on " + subnqn);
            return;
        }
        PortInfo port = session.channel().portInfo();
        if (port != null && !s.reachableOn(port.portId())) {
            // Not added to this listener: SPDK answers Connect Invalid Host, as for a host not allowed (nvmf
            // ctrlr.c, nvmf_qpair_access_allowed); nvmet, where a subsystem is linked to ports, finds no such
            // subsystem on the port (Connect Invalid Parameters on SUBNQN).
            request.response().dw0(IATTR_DATA | IPO_HOSTNQN);
            session.refuse(
                    request,
                    Status.dnr(Status.CONNECT_INVALID_HOST),
                    hostnqn,
                    subnqn + " is not reachable on port ID " + port.portId());
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
        Controller ctrl = s.createController(id -> new Controller(target, s, id, hostnqn, hostId, session, kato));
        if (ctrl == null) {
            session.refuse(
                    request, Status.dnr(Status.CONNECT_CONTROLLER_BUSY), hostnqn, "no free CNTLID in " + s.nqn());
            return;
        }
        session.bind(ctrl, s, 0, newSqsize, noFlowControl);
        ctrl.armKeepAlive();
        LOG.log(
                Level.INFO,
                "connect: host " + hostnqn + " → " + s.nqn() + ", CNTLID " + ctrl.cntlid() + ", QID 0 (admin), "
                        + channel.remoteAddress() + ", KATO " + ctrl.katoMillis() + " ms");
        request.response().dw0(ctrl.cntlid() | authenticationRequest(s, hostnqn, 0));
        session.complete(request, Status.SUCCESS);
    }

    /**
     * AUTHREQ for the Connect response: ATR (DW0 bit 17) when the host has DH-HMAC-CHAP settings on the subsystem,
     * after which the queue must authenticate (docs/security.md); nvmet asks it on the admin and on every I/O queue.
     */
    private int authenticationRequest(Subsystem s, String hostnqn, int qid) {
        io.nvmeof.target.config.HostAuth auth = s.hostAuth(hostnqn);
        if (auth == null) {
            return 0;
        }
        session.requireAuthentication(new QueueAuthentication(s, auth, qid));
        LOG.log(Level.INFO, "connect: host " + hostnqn + " must authenticate QID " + qid + " (DH-HMAC-CHAP)");
        return io.nvmeof.core.auth.AuthProtocol.CONNECT_AUTHREQ_ATR;
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
            // I/O queues connect to an enabled controller
            session.refuse(
                    request,
                    Status.COMMAND_SEQUENCE_ERROR,
                    hostnqn,
                    "I/O Connect to controller " + ctrl.cntlid() + " before CC.EN = 1");
            return;
        }
        if (!ctrl.attach(newQid, session)) {
            session.refuse(
                    request,
                    Status.dnr(Status.COMMAND_SEQUENCE_ERROR),
                    hostnqn,
                    "QID " + newQid + " of controller " + ctrl.cntlid() + " (" + s.nqn() + ") is already connected");
            return;
        }
        if (ctrl.isClosed()) { // torn down while we attached
            ctrl.detach(newQid, session);
            invalidParameters(request, IATTR_DATA, IPO_CNTLID, "controller " + ctrl.cntlid() + " went away");
            return;
        }
        session.bind(ctrl, s, newQid, newSqsize, noFlowControl);
        LOG.log(
                Level.INFO,
                "connect: host " + hostnqn + " → " + s.nqn() + ", CNTLID " + ctrl.cntlid() + ", QID " + newQid
                        + ", SQSIZE " + newSqsize + ", " + channel.remoteAddress());
        request.response().dw0(ctrl.cntlid() | authenticationRequest(s, hostnqn, newQid));
        session.complete(request, Status.SUCCESS);
    }

    private void invalidParameters(TargetRequest request, int iattr, int ipo, String what) {
        request.response().dw0(iattr | ipo);
        session.refuse(
                request,
                Status.dnr(Status.CONNECT_INVALID_PARAMETERS),
                connectingHost,
                "Connect (IATTR " + (iattr >>> 16) + ", IPO " + ipo + "): " + what);
    }

    private void disconnect(TargetRequest request) {
        if (session.qid() == 0) {
            // The admin queue cannot be disconnected (nvmeof-protocol.md §2.4).
            session.complete(request, Status.dnr(Status.INVALID_QUEUE_TYPE));
            return;
        }
        Controller ctrl = session.controller();
        int oldQid = session.qid();
        session.complete(request, Status.SUCCESS);
        ctrl.detach(oldQid, session);
        session.unbind();
        LOG.log(
                Level.INFO,
                "Disconnect: I/O queue " + oldQid + " of controller " + ctrl.cntlid() + " ("
                        + session.subsystem().nqn() + ") deleted by the host");
    }
}
