package io.nvmeof.transport.rdma.soft;

import static io.nvmeof.transport.rdma.soft.Shm.INT;
import static io.nvmeof.transport.rdma.soft.Shm.LONG;
import static io.nvmeof.transport.rdma.soft.SoftQueuePair.ERROR;
import static io.nvmeof.transport.rdma.soft.SoftQueuePair.LOC_LEN_ERR;
import static io.nvmeof.transport.rdma.soft.SoftQueuePair.LOC_PROT_ERR;
import static io.nvmeof.transport.rdma.soft.SoftQueuePair.OP_RECV;
import static io.nvmeof.transport.rdma.soft.SoftQueuePair.REM_ACCESS_ERR;
import static io.nvmeof.transport.rdma.soft.SoftQueuePair.REM_INV_REQ_ERR;
import static io.nvmeof.transport.rdma.soft.SoftQueuePair.SUCCESS;

import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import java.io.IOException;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/**
 * The responder RNIC of one {@link SoftQueuePair}'s connection, played by the QP's posting thread on the peer's
 * mapped memory: for a Send it takes the peer's next posted receive (its QP file's ring or its SRQ's), checks it and
 * copies into it, and writes the RECV completion into the peer's CQ (its QP file's ring or its shared CQ's); for RDMA
 * Write/Read it makes the checks a responder makes against the peer's registry (rkey and its generation, PD, access
 * flags, bounds) and copies straight into or out of the peer's region; Send with Invalidate clears the key in the
 * peer's registry. Made once when the QP connects (before the connection is handed to its owner) and owned by that
 * QP; used by its posting (owner) thread only, except {@link #peerToError} (any thread). Nothing per operation locks or
 * allocates.
 */
final class SoftResponder {
    /** {@link #send}'s answer when the peer has no receive posted (receiver not ready). */
    static final int NOT_READY = -1;

    private final SoftQueuePair qp;
    /** The peer's QP file, its receive ring (its file or its SRQ's) and completion ring (its file or its shared CQ's). */
    private final ByteBuffer pq;

    private final ByteBuffer pRq;
    private final int pRqMask;
    private final ByteBuffer pCq;
    private final int pCqBase;
    private final int pCqMask;
    private final int pCqSlotBits;
    private final SoftDevice.Peer peer;
    private final int peerPd;
    /** The peer QP when it lives in this JVM (woken when its completions arrive), else null. */
    private final SoftQueuePair localPeer;

    // Scratch (owner thread): the receive taken, and the bytes resolve() named.
    private final PostedReceive taken = new PostedReceive();
    private ByteBuffer rBuf;
    private int rIndex;

    /** Maps the peer's queue file and deletes its name (both sides hold mappings now). Cold path. */
    SoftResponder(
            SoftQueuePair qp,
            long peerPid,
            String peerFile,
            QueuePairAttributes peerAttributes,
            int peerPdId,
            SoftQueuePair localPeer)
            throws IOException {
        SoftDevice device = qp.device;
        Path p = device.file(peerFile);
        ByteBuffer b = Shm.open(p);
        if ((int) INT.getAcquire(b, QueueFile.H_MAGIC) != SoftQueuePair.MAGIC) {
            throw new IOException("software RNIC: " + p + " is not a queue pair");
        }
        int cqFile = (int) INT.get(b, QueueFile.H_CQ_FILE);
        int srqFile = (int) INT.get(b, QueueFile.H_SRQ_FILE);
        int rqCap = srqFile != 0 ? 1 : Shm.pow2(peerAttributes.maxRecvWr());
        int cqCap = cqFile != 0 ? 1 : Shm.pow2(peerAttributes.cqSize());
        if (b.capacity() != QueueFile.RQ_BASE + rqCap * QueueFile.RQE + cqCap * QueueFile.CQE) {
            throw new IOException("software RNIC: " + p + " does not match the peer's attributes");
        }
        this.qp = qp;
        this.peer = device.peer(peerPid);
        this.pq = b;
        if (srqFile != 0) {
            this.pRq = SoftSharedReceiveQueue.map(device, peerPid, srqFile);
            this.pRqMask = (int) INT.get(pRq, SoftSharedReceiveQueue.H_CAPACITY) - 1;
        } else {
            this.pRq = b;
            this.pRqMask = rqCap - 1;
        }
        if (cqFile != 0) {
            this.pCq = SoftCompletionQueue.map(device, peerPid, cqFile);
            this.pCqBase = QueueFile.RQ_BASE;
            this.pCqMask = (int) INT.get(pCq, SoftCompletionQueue.H_CAPACITY) - 1;
            this.pCqSlotBits = (int) INT.get(b, QueueFile.H_CQ_SLOT) << SoftCompletionQueue.SLOT_SHIFT;
        } else {
            this.pCq = b;
            this.pCqBase = QueueFile.RQ_BASE + rqCap * QueueFile.RQE;
            this.pCqMask = cqCap - 1;
            this.pCqSlotBits = 0;
        }
        this.peerPd = peerPdId;
        this.localPeer = localPeer;
        Shm.delete(p);
    }

    /** Whether the peer's QP is in ERROR (it drops everything). */
    boolean peerInError() {
        return (int) INT.getVolatile(pq, QueueFile.H_STATE) == ERROR;
    }

    /** Moves the peer's QP to ERROR and wakes its poller (any thread). */
    void peerToError() {
        INT.setVolatile(pq, QueueFile.H_STATE, ERROR);
        SoftQueuePair.errored(localPeer);
    }

    /**
     * A Send of {@code length} bytes of {@code m} at {@code offset} into the peer's next posted receive; {@code inv}: 0
     * plain, -1 invalidate rkey 0 (never valid), else the rkey to invalidate. Returns SUCCESS (the RECV completion is
     * in the peer's CQ), {@link #NOT_READY} (nothing taken), or REM_INV_REQ_ERR (the receive completed in error: the
     * caller completes the Send so and moves both QPs to ERROR).
     */
    int send(SoftMemoryRegion m, int offset, int length, int inv) {
        if (!taken.take(pRq, pRqMask)) {
            return NOT_READY;
        }
        int rst = length > taken.length
                ? LOC_LEN_ERR
                : resolve(taken.key, taken.offset, false, length, ProtectionDomain.ACCESS_LOCAL_WRITE)
                        ? SUCCESS
                        : LOC_PROT_ERR;
        if (rst == SUCCESS && inv != 0 && !invalidate(inv)) {
            rst = LOC_PROT_ERR;
        }
        if (rst != SUCCESS) {
            // The responder completes the receive in error and moves to ERROR; the requester sees a NAK.
            putPeer(taken.wrId, OP_RECV, rst, 0, 0, false);
            return REM_INV_REQ_ERR;
        }
        rBuf.put(rIndex, m.view, offset, length);
        putPeer(taken.wrId, OP_RECV, SUCCESS, length, inv == -1 ? 0 : inv, inv != 0);
        return SUCCESS;
    }

    /** An RDMA Write into the peer's region: SUCCESS, or REM_ACCESS_ERR when the responder's checks fail. */
    int write(SoftMemoryRegion m, int offset, int length, long raddr, int rkey) {
        if (!resolve(rkey, raddr, true, length, ProtectionDomain.ACCESS_REMOTE_WRITE)) {
            return REM_ACCESS_ERR;
        }
        rBuf.put(rIndex, m.view, offset, length);
        return SUCCESS;
    }

    /** An RDMA Read out of the peer's region: SUCCESS, or REM_ACCESS_ERR when the responder's checks fail. */
    int read(SoftMemoryRegion m, int offset, int length, long raddr, int rkey) {
        if (!resolve(rkey, raddr, true, length, ProtectionDomain.ACCESS_REMOTE_READ)) {
            return REM_ACCESS_ERR;
        }
        m.view.put(offset, rBuf, rIndex, length);
        return SUCCESS;
    }

    /**
     * The checks a responder makes on (key, address or offset, length) against the peer's registry: the key and its
     * generation, the PD of the peer's QP, the access flags, the bounds. On success rBuf/rIndex name the bytes.
     */
    private boolean resolve(int key, long where, boolean byAddress, int length, int need) {
        int slot = key >>> 8;
        if (slot <= 0 || slot >= SoftDevice.SLOTS) {
            return false;
        }
        ByteBuffer reg = peer.registry;
        int o = SoftDevice.REG_HEADER + slot * SoftDevice.SLOT_SIZE;
        if ((int) INT.getAcquire(reg, o + SoftDevice.S_STATE) != key) {
            return false;
        }
        long serial = (long) LONG.get(reg, o + SoftDevice.S_SERIAL);
        long base = (long) LONG.get(reg, o + SoftDevice.S_BASE);
        long len = (long) LONG.get(reg, o + SoftDevice.S_LENGTH);
        long fileId = (long) LONG.get(reg, o + SoftDevice.S_FILE);
        long fileOffset = (long) LONG.get(reg, o + SoftDevice.S_FILE_OFF);
        int access = (int) INT.get(reg, o + SoftDevice.S_ACCESS);
        int regionPd = (int) INT.get(reg, o + SoftDevice.S_PD);
        VarHandle.acquireFence();
        if ((int) INT.getOpaque(reg, o + SoftDevice.S_STATE) != key || (access & need) != need || regionPd != peerPd) {
            return false;
        }
        long off = byAddress ? where - base : where;
        if (off < 0 || length < 0 || off > len - length) {
            return false;
        }
        SoftDevice.RegionView v = peer.views.get(slot);
        if (v == null || v.serial() != serial) {
            v = peer.map(slot, serial, fileId, fileOffset, len);
            if (v == null) {
                return false;
            }
        }
        rBuf = v.buffer();
        rIndex = (int) off;
        return true;
    }

    /** Send with Invalidate at the responder: the key must be a valid region of the peer's PD. */
    private boolean invalidate(int inv) {
        int slot = inv >>> 8;
        if (inv == -1 || slot <= 0 || slot >= SoftDevice.SLOTS) {
            return false;
        }
        int o = SoftDevice.REG_HEADER + slot * SoftDevice.SLOT_SIZE;
        return (int) INT.get(peer.registry, o + SoftDevice.S_PD) == peerPd
                && INT.compareAndSet(peer.registry, o + SoftDevice.S_STATE, inv, 0);
    }

    /** A completion into the peer's CQ (an overrun moves both QPs to ERROR); wakes a same-JVM peer. */
    private void putPeer(long wrId, int op, int status, int length, int inv, boolean withInv) {
        int word = op | status << 4 | (withInv ? 1 << 12 : 0) | pCqSlotBits;
        if (!QueueFile.putCompletion(pCq, pCqBase, pCqMask, wrId, word, length, inv, 0)) {
            qp.toError(true);
        }
        SoftQueuePair.wake(localPeer);
    }
}
