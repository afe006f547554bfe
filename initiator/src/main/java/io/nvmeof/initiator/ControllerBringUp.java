package io.nvmeof.initiator;

import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.spi.HostQueueOptions;
import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.Transport;
import io.nvmeof.core.tls.TlsPsk;
import io.nvmeof.core.wire.ConnectData;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * Brings a {@link Controller} up the way the Linux host does, with the conservative initiator profile
 * (nvmeof-protocol.md §7.1, §7.8): admin queue and fabrics Connect (SQSIZE 31, KATO, CNTLID 0xFFFF), Property Get
 * CAP, the enable handshake, Identify Controller with the host checks of §7.5, Keep Alive, Set Features Number of
 * Queues and one Connect per I/O queue, Asynchronous Event Requests when OAES allows, and the namespace scan.
 *
 * <p>Runs once, on the connecting thread. It only opens and records; on a failure {@link Controller#open} closes
 * whatever was opened.
 */
final class ControllerBringUp {
    /** Admin queue entries: 32 (SQSIZE 31), Linux's NVME_AQ_DEPTH (nvmeof-protocol.md §8). */
    static final int ADMIN_QUEUE_SIZE = 32;
    /** Number of Queues (Set Features FID 0x07, nvmeof-protocol.md §3.4). */
    private static final int FID_NUMBER_OF_QUEUES = 0x07;

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
        CommandSlot.Completion connect =
                commands.connect(admin, ADMIN_QUEUE_SIZE - 1, uri.katoMillis(), ConnectData.CNTLID_DYNAMIC);
        controller.cntlid = connect.dw0() & 0xFFFF;
        int authreq = connect.dw0() >>> 16;
        if ((authreq & 0x6) != 0) {
            // AUTHREQ ATR/ASCR (bits 17/18 of DW0): DH-HMAC-CHAP is not implemented (nvmeof-protocol.md §2.5).
            throw new NvmeException("the controller requires in-band authentication (AUTHREQ 0x"
                    + Integer.toHexString(authreq) + "), which this initiator does not implement");
        }
        controller.registers().readCapabilities();
        controller.registers().enable();

        controller.identifyPage = commands.identify(0x01, 0);
        controller.identity = ControllerIdentity.parse(controller.identifyPage);
        checkIdentity(controller.identity);

        if (uri.katoMillis() > 0) {
            controller.timer().startKeepAlive(uri.katoMillis());
        }
        if (!uri.isDiscovery()) {
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
            commands.connect(q, queueSize - 1, 0, controller.cntlid);
            q.transport.maxInCapsuleData(maxInCapsule); // IOCCSZ×16−64 (nvmeof-protocol.md §3.2.1)
        }
    }
}
