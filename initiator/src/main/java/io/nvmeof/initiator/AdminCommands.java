package io.nvmeof.initiator;

import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.ConnectData;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

/**
 * The fabrics and admin commands the initiator itself sends (nvmeof-protocol.md §2, §3): Connect, Property Get/Set,
 * Identify, Get Log Page, Set Features, and the commands that wait for no one (Keep Alive, Asynchronous Event
 * Request). This is the one place where the controller's own commands take a {@link CommandSlot}, fill its SQE and
 * submit it; the blocking forms wait with {@link #await}.
 *
 * <p>Owned by one {@link Controller}; any thread may call it (the slot free list and the queue are thread-safe).
 */
final class AdminCommands {
    private final Controller controller;

    AdminCommands(Controller controller) {
        this.controller = controller;
    }

    // ---- fabrics commands (nvmeof-protocol.md §2) ----

    /**
     * Fabrics Connect on {@code q} (nvmeof-protocol.md §2.2): SQSIZE, KATO and CNTLID as given, HOSTID, HOSTNQN and
     * SUBNQN from the controller. A refusal names the field the target pointed at (IPO/IATTR).
     */
    CommandSlot.Completion connect(CommandQueue q, int sqsize, int kato, int cntlid) throws NvmeException {
        return connect(q, null, sqsize, kato, cntlid);
    }

    /**
     * Connect's CATTR (nvmeof-protocol.md §2.2): bit 2, disable SQ flow control, with the URI's {@code disable_sqflow}
     * (on every queue, as the Linux host does); priority class 0.
     */
    private static int connectAttributes(NvmeUri uri) {
        return uri.disableSqflow() ? SubmissionQueueEntry.CATTR_DISABLE_SQ_FLOW_CONTROL : 0;
    }

    private CommandSlot.Completion connect(CommandQueue q, CommandSlot slot, int sqsize, int kato, int cntlid)
            throws NvmeException {
        HostIdentity host = controller.host();
        NvmeUri uri = controller.uri();
        ByteBuffer data = ByteBuffer.allocateDirect(ConnectData.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        ConnectData cd = new ConnectData();
        cd.wrap(data, 0);
        cd.hostId(host.hostId()).cntlid(cntlid).subNqn(uri.connectNqn()).hostNqn(host.hostNqn());
        CommandSlot.Completion c = submitAndWait(
                q,
                slot,
                e -> e.opcode(FabricsCommandType.OPCODE)
                        .fctype(FabricsCommandType.CONNECT.code())
                        .connect(0, q.qid, sqsize, connectAttributes(uri), kato),
                data,
                ConnectData.LENGTH,
                false);
        if (!c.ok()) {
            String detail = "";
            if (Status.is(c.status(), Status.CONNECT_INVALID_PARAMETERS)) {
                // IPO/IATTR say which field was refused (nvmeof-protocol.md §2.2).
                int ipo = c.dw0() & 0xFFFF;
                boolean inData = ((c.dw0() >>> 16) & 1) != 0;
                detail = " (bad " + (inData ? "Connect data" : "command") + " field at byte " + ipo
                        + (inData && ipo == 256 ? ": unknown subsystem NQN" : inData && ipo == 512 ? ": host NQN" : "")
                        + ")";
            }
            throw NvmeStatusException.of(
                    c.status(),
                    FabricsCommandType.OPCODE,
                    "Connect of "
                            + (q.qid == 0 ? "the admin queue" : "I/O queue " + q.qid) + " to " + uri.connectNqn()
                            + " at "
                            + controller.hostPort() + " as " + host.hostNqn() + detail);
        }
        return c;
    }

    /**
     * Authentication Send (nvmeof-protocol.md §2.5) of {@code message} on {@code q}: SECP E9h, SPSP0/1 01h, TL; in
     * {@code slot}, or any free slot if null (a reconnect uses the I/O queue's {@link CommandQueue#connectSlot}).
     */
    void authenticationSend(CommandQueue q, CommandSlot slot, byte[] message) throws NvmeException {
        ByteBuffer data = ByteBuffer.allocateDirect(message.length).order(ByteOrder.LITTLE_ENDIAN);
        data.put(0, message);
        submitAndWait(
                q,
                slot,
                e -> e.opcode(FabricsCommandType.OPCODE)
                        .fctype(FabricsCommandType.AUTHENTICATION_SEND.code())
                        .auth(AuthProtocol.SECP_DHCHAP, AuthProtocol.SPSP, AuthProtocol.SPSP, message.length),
                data,
                message.length,
                true);
    }

    /** Authentication Receive (nvmeof-protocol.md §2.5) of up to {@code al} bytes on {@code q}, in {@code slot} as above. */
    byte[] authenticationReceive(CommandQueue q, CommandSlot slot, int al) throws NvmeException {
        ByteBuffer data = ByteBuffer.allocateDirect(al).order(ByteOrder.LITTLE_ENDIAN);
        submitAndWait(
                q,
                slot,
                e -> e.opcode(FabricsCommandType.OPCODE)
                        .fctype(FabricsCommandType.AUTHENTICATION_RECEIVE.code())
                        .auth(AuthProtocol.SECP_DHCHAP, AuthProtocol.SPSP, AuthProtocol.SPSP, al),
                data,
                al,
                true);
        byte[] out = new byte[al];
        data.get(0, out);
        return out;
    }

    /** Property Get (nvmeof-protocol.md §2.3): 4 or 8 bytes at {@code offset}. */
    long propertyGet(int offset, boolean eightBytes) throws NvmeException {
        return adminOk(
                                e -> e.opcode(FabricsCommandType.OPCODE)
                                        .fctype(FabricsCommandType.PROPERTY_GET.code())
                                        .property(eightBytes ? Properties.SIZE_8 : Properties.SIZE_4, offset, 0),
                                null,
                                0)
                        .result64()
                & (eightBytes ? -1L : 0xFFFFFFFFL);
    }

    /** Property Set (nvmeof-protocol.md §2.3) of a 4-byte property. */
    void propertySet(int offset, int value) throws NvmeException {
        adminOk(
                e -> e.opcode(FabricsCommandType.OPCODE)
                        .fctype(FabricsCommandType.PROPERTY_SET.code())
                        .property(Properties.SIZE_4, offset, value & 0xFFFFFFFFL),
                null,
                0);
    }

    // ---- admin commands (nvmeof-protocol.md §3) ----

    /** Identify (nvmeof-protocol.md §3.2): a 4096-byte page. */
    ByteBuffer identify(int cns, int nsid) throws NvmeException {
        ByteBuffer page = ByteBuffer.allocateDirect(ControllerIdentity.SIZE).order(ByteOrder.LITTLE_ENDIAN);
        adminOk(e -> e.opcode(AdminOpcode.IDENTIFY.code()).nsid(nsid).cdw(10, cns), page, ControllerIdentity.SIZE);
        return page;
    }

    /** Get Log Page (nvmeof-protocol.md §3.3): {@code length} bytes (a multiple of 4) from byte offset {@code lpo}. */
    ByteBuffer getLogPage(int lid, int nsid, long lpo, int length, boolean rae) throws NvmeException {
        ByteBuffer buf = ByteBuffer.allocateDirect(length).order(ByteOrder.LITTLE_ENDIAN);
        int numd = length / 4 - 1; // 0's based dword count, split in NUMDL/NUMDU
        adminOk(
                e -> e.opcode(AdminOpcode.GET_LOG_PAGE.code())
                        .nsid(nsid)
                        .cdw(10, (lid & 0xFF) | (rae ? 0x8000 : 0) | ((numd & 0xFFFF) << 16))
                        .cdw(11, numd >>> 16)
                        .cdw(12, (int) lpo)
                        .cdw(13, (int) (lpo >>> 32)),
                buf,
                length);
        return buf;
    }

    /**
     * Set Features (nvmeof-protocol.md §3.4) of feature {@code fid} with CDW11 {@code value}; the completion whatever
     * its status, or an {@link NvmeStatusException} if {@code requireSuccess}.
     */
    CommandSlot.Completion setFeatures(int fid, int value, boolean requireSuccess) throws NvmeException {
        return submitAndWait(
                controller.queues().admin(),
                null,
                e -> e.opcode(AdminOpcode.SET_FEATURES.code()).cdw(10, fid).cdw(11, value),
                null,
                0,
                requireSuccess);
    }

    /** Set Features with a data buffer (Host Behavior Support); the completion whatever its status. */
    CommandSlot.Completion setFeatures(int fid, int value, ByteBuffer data) throws NvmeException {
        return submitAndWait(
                controller.queues().admin(),
                null,
                e -> e.opcode(AdminOpcode.SET_FEATURES.code()).cdw(10, fid).cdw(11, value),
                data,
                data.capacity(),
                false);
    }

    /**
     * Sends an admin command with no data and no other field but its opcode (Keep Alive, Asynchronous Event Request)
     * if an admin slot is free, and never waits; null when every slot is taken.
     *
     * @param timeoutNanos the command's timeout, 0 for none
     */
    CompletableFuture<CommandSlot.Completion> trySubmit(AdminOpcode opcode, long timeoutNanos) {
        CommandQueue q = controller.queues().admin();
        CommandSlot s = q.tryAcquire();
        if (s == null) {
            return null;
        }
        s.prepare().opcode(opcode.code());
        pastTheGate(q, s);
        return s.submit(null, 0, 0, timeoutNanos);
    }

    private CommandSlot.Completion adminOk(Consumer<SubmissionQueueEntry> fill, ByteBuffer data, int length)
            throws NvmeException {
        return submitAndWait(controller.queues().admin(), null, fill, data, length, true);
    }

    private CommandSlot.Completion submitAndWait(
            CommandQueue q,
            CommandSlot slot,
            Consumer<SubmissionQueueEntry> fill,
            ByteBuffer data,
            int length,
            boolean requireSuccess)
            throws NvmeException {
        NvmeException failed = controller.failure();
        if (failed != null) {
            // Not unusable(): the shutdown handshake runs after close() started.
            throw new NvmeTransportException("controller failed: " + failed.getMessage(), failed);
        }
        long timeoutNanos = controller.timeoutNanos();
        if (slot == null && !controller.recovery().isWorker()) {
            // An application's admin command (or a rescan) while the controller reconnects: wait for it, up to the
            // command timeout, instead of failing at once (admin commands are not parked; the queue is replaced).
            q = controller.recovery().awaitNotReconnecting(q, timeoutNanos);
        }
        CommandSlot s = slot != null ? slot : q.acquire(timeoutNanos);
        SubmissionQueueEntry e = s.prepare();
        fill.accept(e);
        pastTheGate(q, s);
        String what = requireSuccess ? s.describe() : null;
        int opcode = e.opcode();
        CompletableFuture<CommandSlot.Completion> f = s.submit(data, 0, length, timeoutNanos);
        CommandSlot.Completion c = await(f, timeoutNanos, null);
        if (requireSuccess && !c.ok()) {
            throw NvmeStatusException.of(c.status(), opcode, what);
        }
        return c;
    }

    /** The reconnect thread's commands go out on the queue's new connection while the queue is still gated. */
    private void pastTheGate(CommandQueue q, CommandSlot s) {
        if (controller.recovery().isWorker()) {
            s.via(q.transport);
        }
    }

    /**
     * Fabrics Connect of an I/O queue on its new connection during a reconnect, in the queue's
     * {@link CommandQueue#connectSlot} (CID 0: nothing else is in flight on a new connection).
     */
    CommandSlot.Completion reconnect(CommandQueue q, int sqsize, int cntlid) throws NvmeException {
        return connect(q, q.connectSlot, sqsize, 0, cntlid);
    }

    /** Waits for a command future; the command's own timeout bounds it, the extra margin only guards bugs. */
    static <T> T await(CompletableFuture<T> f, long timeoutNanos, java.util.function.BooleanSupplier keepWaiting)
            throws NvmeException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get(timeoutNanos + TimeUnit.SECONDS.toNanos(10), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    // The command owns its buffer until it completes, which the command timeout guarantees.
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable cause = e.getCause();
                    if (cause instanceof NvmeException ne) {
                        throw rethrown(ne);
                    }
                    throw new NvmeException("command failed: " + cause, cause);
                } catch (TimeoutException e) {
                    if (keepWaiting != null && keepWaiting.getAsBoolean()) {
                        continue;
                    }
                    throw new NvmeTimeoutException(
                            "no completion within the command timeout (internal error: " + "the timer did not fire)");
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * The same exception type with the caller's stack added as the cause's context, so a blocking caller sees where
     * it called from and the original completion stack.
     */
    private static NvmeException rethrown(NvmeException e) {
        NvmeException copy;
        if (e instanceof NvmeStatusException se) {
            copy = NvmeStatusException.of(se.status(), se.opcode(), se.command());
        } else if (e instanceof NvmeTimeoutException) {
            copy = new NvmeTimeoutException(e.getMessage());
        } else if (e instanceof NvmeControllerLostException) {
            copy = new NvmeControllerLostException(e.getMessage(), e.getCause());
        } else if (e instanceof NvmeFastIoFailException) {
            copy = new NvmeFastIoFailException(e.getMessage(), e.getCause());
        } else if (e instanceof NvmeTransportException) {
            copy = new NvmeTransportException(e.getMessage(), e.getCause());
        } else {
            copy = new NvmeException(e.getMessage(), e.getCause());
        }
        copy.addSuppressed(e);
        return copy;
    }
}
