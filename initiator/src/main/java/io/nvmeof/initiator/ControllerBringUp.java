package io.nvmeof.initiator;

import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.core.tls.TlsPsk;
import io.nvmeof.core.wire.ConnectData;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Brings a {@link Controller} up the way the Linux host does, with the conservative initiator profile
 * (nvmeof-protocol.md §7.1, §7.8): admin queue and fabrics Connect (SQSIZE 31, KATO, CNTLID 0xFFFF), Property Get
 * CAP, the enable handshake, Identify Controller with the host checks of §7.5, Keep Alive, Set Features Number of
 * Queues and one Connect per I/O queue, Asynchronous Event Requests when OAES allows, and the namespace scan.
 *
 * <p>Runs once, on the connecting thread. {@link #run} only opens and records; on a failure {@link #open} closes
 * whatever was opened.
 */
final class ControllerBringUp {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");

    /** Admin queue entries: 32 (SQSIZE 31), Linux's NVME_AQ_DEPTH (nvmeof-protocol.md §8). */
    static final int ADMIN_QUEUE_SIZE = 32;
    /** Number of Queues (Set Features FID 0x07, nvmeof-protocol.md §3.4). */
    private static final int FID_NUMBER_OF_QUEUES = 0x07;
    /** Host Behavior Support (Set Features FID 0x16, 512 bytes of data; byte 0 ACRE), nvmeof-protocol.md §3.4. */
    private static final int FID_HOST_BEHAVIOR_SUPPORT = 0x16;
    /** CRDT1..3 in Identify Controller: three 16-bit values in 100 ms units from byte 128 (nvmeof-protocol.md §3.2.1). */
    private static final int IDENTIFY_CRDT = 128;

    private final Controller controller;
    private final NvmeUri uri;
    private final AdminCommands commands;
    private Transport transport;
    private InetSocketAddress address;
    /** The PSK identity and TLS PSK every queue offers, or null without TLS. */
    private TlsPsk tlsPsk;

    ControllerBringUp(Controller controller) {
        this.controller = controller;
        this.uri = controller.uri();
        this.commands = controller.commands();
    }

    /**
     * {@link #run}, then LIVE; on any failure the controller is FAILED and everything opened so far is closed again
     * ({@link ControllerTeardown#abort}) before the exception goes to the caller.
     */
    void open() throws NvmeException {
        try {
            run();
        } catch (NvmeException | RuntimeException | Error e) {
            controller
                    .states()
                    .changeFromAny(
                            ControllerState.FAILED,
                            "connect failed: " + e.getMessage(),
                            e instanceof NvmeException ne ? ne : new NvmeException(String.valueOf(e.getMessage()), e));
            controller.teardown().abort();
            throw e;
        }
        if (!controller.states().change(ControllerState.CONNECTING, ControllerState.LIVE, "connected", null)) {
            NvmeException f = controller.teardown().failure();
            controller.teardown().abort();
            throw f != null ? f : new NvmeTransportException("the controller failed while connecting");
        }
        LOG.log(Level.INFO, () -> "connected " + controller);
    }

    void run() throws NvmeException {
        transport = resolveTransport();
        try {
            address = new InetSocketAddress(InetAddress.getByName(uri.host()), uri.port());
        } catch (IOException e) {
            throw new NvmeTransportException("cannot resolve host '" + uri.host() + "': " + e.getMessage(), e);
        }
        controller.timer().startTimeoutScan(uri.timeout().toMillis());
        tlsPsk = uri.tls().tlsPsk(controller.host().hostNqn(), uri.connectNqn());

        CommandQueue admin = controller.queues().open(transport, queueOptions(0, ADMIN_QUEUE_SIZE, 0));
        // Admin Connect: QID 0, SQSIZE 31, KATO, CNTLID 0xFFFF for the dynamic controller model (nvmeof-protocol.md
        // §2.2, §7.1 step 3).
        CommandSlot.Completion connect = commands.connect(
                admin, ADMIN_QUEUE_SIZE - 1, controller.keepAliveTimeoutMillis(), ConnectData.CNTLID_DYNAMIC);
        controller.cntlid = connect.dw0() & 0xFFFF;
        authenticateIfAsked(admin, null, connect.dw0());
        controller.registers().readCapabilities();
        controller.registers().enable();

        controller.identifyPage = commands.identify(0x01, 0);
        controller.identity = ControllerIdentity.parse(controller.identifyPage);
        checkIdentity(controller.identity);

        if (controller.keepAliveTimeoutMillis() > 0) {
            controller.timer().startKeepAlive(controller.keepAliveTimeoutMillis());
        }
        if (!uri.isDiscovery()) {
            enableRetryDelays();
            createIoQueues();
            controller.asyncEvents().enable(controller.identity.oaes());
            controller.namespaceScanner().scan();
            if (uri.nsid() != 0 && !controller.namespaceScanner().current().containsKey(uri.nsid())) {
                throw new NvmeException("namespace " + Integer.toUnsignedString(uri.nsid()) + " is not active on "
                        + uri.subsystemNqn() + " (active: "
                        + controller.namespaceScanner().current().keySet() + ")");
            }
        }
    }

    /**
     * DH-HMAC-CHAP on {@code q} when the Connect response's AUTHREQ.ATR (DW0 bit 17) asks for it, as the Linux host
     * does on the admin and on each I/O queue (nvmeof-protocol.md §2.2, docs/security.md). AUTHREQ.ASCR (secure
     * channel concatenation) is not implemented. A host that wants to authenticate the controller
     * ({@code dhchap_ctrl_secret}) refuses a controller that does not ask. A reconnect does the same with the same
     * secrets, each I/O queue's exchange in its {@code connectSlot}; {@code slot} null: any free slot.
     */
    private void authenticateIfAsked(CommandQueue q, CommandSlot slot, int dw0) throws NvmeException {
        HostAuthentication auth = controller.authentication();
        String where = (q.qid == 0 ? "the admin queue" : "I/O queue " + q.qid) + " of " + uri.connectNqn() + " at "
                + controller.hostPort();
        if ((dw0 & AuthProtocol.CONNECT_AUTHREQ_ASCR) != 0) {
            throw new NvmeAuthenticationException(
                    "the controller requires secure channel concatenation (AUTHREQ.ASCR) on " + where
                            + ", which this initiator does not implement",
                    0);
        }
        if ((dw0 & AuthProtocol.CONNECT_AUTHREQ_ATR) == 0) {
            DhchapKeys keys =
                    controller.options().dhchap() != null ? controller.options().dhchap() : uri.dhchap();
            if (keys != null && keys.bidirectional()) {
                throw new NvmeAuthenticationException(
                        "dhchap_ctrl_secret asks to authenticate the controller, but it does not ask for"
                                + " DH-HMAC-CHAP on " + where + " (no host key configured for this host there?)",
                        0);
            }
            return;
        }
        if (auth == null) {
            throw new NvmeAuthenticationException(
                    "the controller requires DH-HMAC-CHAP authentication (AUTHREQ.ATR) on " + where
                            + "; give the host's secret with dhchap_secret=DHHC-1:...",
                    0);
        }
        auth.authenticate(q, slot);
    }

    /**
     * A reconnect ({@link ControllerRecovery}), on the reconnect thread with every queue gated: a new admin queue and
     * Connect with the same Host NQN and Host Identifier (DH-HMAC-CHAP when it asks, on this and each I/O queue,
     * with the same secrets), CAP and enable, Identify Controller (the same subsystem),
     * Number of Queues, each I/O queue on a new connection (the same QIDs and size), AERs, and the namespaces checked
     * against what the application holds ({@link NamespaceScanner#verifyAfterReconnect}). Keep Alive and the gates
     * are the caller's, once the controller is LIVE again. On a failure the caller closes what this opened.
     *
     * @throws NvmeControllerLostException if the controller came back unable to carry the same queues (fewer of them,
     *                                     or smaller): reconnecting again would not help
     */
    void reconnect() throws NvmeException {
        transport = resolveTransport();
        try {
            address = new InetSocketAddress(InetAddress.getByName(uri.host()), uri.port());
        } catch (IOException e) {
            throw new NvmeTransportException("cannot resolve host '" + uri.host() + "': " + e.getMessage(), e);
        }
        // every new connection does the TLS handshake again with the same PSK, as the Linux host does
        tlsPsk = uri.tls().tlsPsk(controller.host().hostNqn(), uri.connectNqn());
        CommandQueue admin = controller.queues().reopenAdmin(transport, queueOptions(0, ADMIN_QUEUE_SIZE, 0));
        CommandSlot.Completion connect = commands.connect(
                admin, ADMIN_QUEUE_SIZE - 1, controller.keepAliveTimeoutMillis(), ConnectData.CNTLID_DYNAMIC);
        int cntlid = connect.dw0() & 0xFFFF;
        // DH-HMAC-CHAP again when the new controller asks (as the Linux host does on every (re)connect); a refused key
        // ends the reconnect (NvmeAuthenticationException.keyRejected, ControllerRecovery).
        authenticateIfAsked(admin, null, connect.dw0());
        controller.registers().readCapabilities();
        controller.registers().enable();
        ByteBuffer page = commands.identify(0x01, 0);
        ControllerIdentity id = ControllerIdentity.parse(page);
        String before = controller.identity.subnqn();
        if (!before.equals(id.subnqn())) {
            throw new NvmeException("the controller at " + controller.hostPort() + " is now subsystem " + id.subnqn()
                    + ", not " + before);
        }
        controller.cntlid = cntlid;
        checkIdentity(id);
        controller.identifyPage = page;
        controller.identity = id;
        enableRetryDelays();
        reconnectIoQueues();
        controller.asyncEvents().enable(id.oaes());
        controller.namespaceScanner().verifyAfterReconnect();
    }

    private void reconnectIoQueues() throws NvmeException {
        CommandQueue[] io = controller.queues().io();
        int wanted = io.length;
        CommandSlot.Completion c =
                commands.setFeatures(FID_NUMBER_OF_QUEUES, (wanted - 1) | ((wanted - 1) << 16), true);
        int granted = Math.min(wanted, Math.min(c.dw0() & 0xFFFF, c.dw0() >>> 16) + 1);
        int size =
                Math.min(uri.depth(), Properties.capMqes(controller.registers().cap()) + 1);
        if (controller.identity.maxcmd() > 0) {
            size = Math.min(size, controller.identity.maxcmd());
        }
        if (granted < wanted || Math.max(2, size) < controller.ioQueueSize) {
            // The slots (and the commands parked in them) are per queue and per CID: they cannot move to fewer or
            // smaller queues. Linux shrinks its tag set; this initiator gives up instead.
            throw new NvmeControllerLostException("the controller came back with " + granted + " I/O queue(s) of "
                    + Math.max(2, size) + " entries, had " + wanted + " of " + controller.ioQueueSize);
        }
        int maxInCapsule = (int) Math.max(0, Math.min(Integer.MAX_VALUE, controller.identity.ioccsz() * 16 - 64));
        controller.maxInCapsule = maxInCapsule;
        for (CommandQueue q : io) {
            if (!q.connectSlot.isFree()) {
                // A Connect of an earlier attempt timed out and its connection has not reported its close yet: its
                // late outcome must not be taken for this one's. The next attempt will find it free.
                throw new NvmeTransportException(
                        "the Connect of an earlier attempt on " + q.name() + " is still outstanding");
            }
            controller.queues().reopen(q, transport, queueOptions(q.qid, controller.ioQueueSize, controller.cntlid));
            CommandSlot.Completion ioConnect = commands.reconnect(q, controller.ioQueueSize - 1, controller.cntlid);
            authenticateIfAsked(q, q.connectSlot, ioConnect.dw0());
            q.transport.maxInCapsuleData(maxInCapsule);
        }
    }

    /**
     * ACRE (nvmeof-protocol.md §3.4, NVMe Base 2.0 §5.27.1.18): when Identify Controller gives a Command Retry Delay
     * (CRDT1 ≠ 0), Set Features Host Behavior Support with ACRE, so that the controller may ask for a delay before a
     * retry (CRD); the delays then apply ({@link RetryRules}). A refusal leaves them off, as on Linux.
     */
    private void enableRetryDelays() throws NvmeException {
        ByteBuffer page = controller.identifyPage;
        int[] crdt = {
            (page.getShort(IDENTIFY_CRDT) & 0xFFFF) * 100,
            (page.getShort(IDENTIFY_CRDT + 2) & 0xFFFF) * 100,
            (page.getShort(IDENTIFY_CRDT + 4) & 0xFFFF) * 100
        };
        controller.commandRetryDelays = null;
        if (crdt[0] == 0) {
            return;
        }
        ByteBuffer data = ByteBuffer.allocateDirect(512).order(ByteOrder.LITTLE_ENDIAN);
        data.put(0, (byte) 1); // ACRE
        CommandSlot.Completion c = commands.setFeatures(FID_HOST_BEHAVIOR_SUPPORT, 0, data);
        if (c.ok()) {
            controller.commandRetryDelays = crdt;
        }
    }

    private Transport resolveTransport() throws NvmeException {
        Transport t = controller.options().transport();
        if (t == null) {
            try {
                t = Transport.find(uri.transport());
            } catch (IllegalArgumentException e) {
                throw new NvmeTransportException(
                        "the " + uri.transport() + " transport is not available: " + e.getMessage());
            }
        }
        if (!t.isAvailable()) {
            throw new NvmeTransportException(
                    "the " + t.name() + " transport is not available: " + t.unavailableReason());
        }
        return t;
    }

    private HostQueueOptions queueOptions(int qid, int size, int cntlid) {
        IoMode mode = controller.ioMode();
        return new HostQueueOptions(
                address,
                qid,
                size,
                cntlid,
                uri.headerDigest(),
                uri.dataDigest(),
                controller.options().connectTimeout(),
                // The admin queue sleeps even with hipri: it carries keep-alives and AERs, not the I/O.
                qid == 0 ? new IoMode(mode.engine(), false) : mode,
                tlsPsk);
    }

    /** The host-side checks of Identify Controller (nvmeof-protocol.md §3.2.1, §7.5). */
    private void checkIdentity(ControllerIdentity id) throws NvmeException {
        int cntlid = controller.cntlid;
        if (id.cntlid() != cntlid) {
            throw new NvmeException("Identify CNTLID " + id.cntlid() + " differs from the Connect CNTLID " + cntlid
                    + " (\"Mismatching cntlid\", nvmeof-protocol.md §7.5)");
        }
        if (uri.isDiscovery()) {
            if (!id.isDiscovery() && !Nqn.DISCOVERY.equals(id.subnqn())) {
                throw new NvmeException(
                        controller.hostPort() + " is not a discovery controller (CNTRLTYPE " + id.cntrltype() + ")");
            }
            return;
        }
        if (id.kas() == 0) {
            throw new NvmeException(
                    "controller reports KAS 0; keep alive support is mandatory for fabrics (nvmeof-protocol.md §3.2.1)");
        }
        if (id.ioccsz() < 4 || id.iorcsz() < 1) {
            throw new NvmeException("controller reports IOCCSZ " + id.ioccsz() + " / IORCSZ " + id.iorcsz()
                    + " (need ≥ 4 / ≥ 1, nvmeof-protocol.md §3.2.1)");
        }
        if (id.icdoff() != 0) {
            throw new NvmeException(
                    "controller reports ICDOFF " + id.icdoff() + "; only 0 is supported (nvmeof-protocol.md §3.2.1)");
        }
        if ("rdma".equals(transport.name()) ? (id.sgls() & 0x4) == 0 : (id.sgls() & 0x3) == 0) {
            throw new NvmeException("controller does not support the SGLs this transport needs (SGLS 0x"
                    + Long.toHexString(id.sgls()) + ", nvmeof-protocol.md §3.2.1)");
        }
    }

    private void createIoQueues() throws NvmeException {
        ControllerIdentity identity = controller.identity;
        int wanted = uri.queues();
        // Set Features Number of Queues, both counts 0's based (nvmeof-protocol.md §3.4, §7.1 step 17).
        CommandSlot.Completion c =
                commands.setFeatures(FID_NUMBER_OF_QUEUES, (wanted - 1) | ((wanted - 1) << 16), true);
        int granted = Math.min(wanted, Math.min(c.dw0() & 0xFFFF, c.dw0() >>> 16) + 1);
        // Queue size: min(depth, MQES + 1, MAXCMD) (nvmeof-protocol.md §3.2.1, §7.8).
        int size =
                Math.min(uri.depth(), Properties.capMqes(controller.registers().cap()) + 1);
        if (identity.maxcmd() > 0) {
            size = Math.min(size, identity.maxcmd());
        }
        int queueSize = Math.max(2, size);
        int maxInCapsule = (int) Math.max(0, Math.min(Integer.MAX_VALUE, identity.ioccsz() * 16 - 64));
        controller.ioQueueSize = queueSize;
        controller.maxInCapsule = maxInCapsule;
        for (int qid = 1; qid <= granted; qid++) {
            CommandQueue q = controller.queues().open(transport, queueOptions(qid, queueSize, controller.cntlid));
            // I/O Connect: KATO 0, the admin CNTLID (nvmeof-protocol.md §2.2, §7.1 step 19).
            CommandSlot.Completion ioConnect = commands.connect(q, queueSize - 1, 0, controller.cntlid);
            authenticateIfAsked(q, null, ioConnect.dw0());
            q.transport.maxInCapsuleData(maxInCapsule); // IOCCSZ×16−64 (nvmeof-protocol.md §3.2.1)
        }
    }
}
