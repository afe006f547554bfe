/**
 * The software RNIC ("soft" provider, {@link io.nvmeof.transport.rdma.soft.SoftRdmaProvider}): the verbs interface
 * between threads or processes of one host, through shared memory, for machines without RDMA hardware. Every result
 * produced over it is labelled "software RNIC (emulated)".
 *
 * <h2>Memory and keys</h2>
 * One device per JVM ({@code SoftDevice}) with one protection domain. {@code ProtectionDomain.allocate(n)} maps a new
 * file {@code /dev/shm/nvmeof-softrnic/<pid>-m<k>} (directory: {@code -Dnvmeof.softrnic.dir}). Registering memory
 * fills a 64-byte slot of the process's registry file {@code <pid>-reg}: key (slot &lt;&lt; 8 | an 8-bit generation
 * that changes with every registration of the slot), synthetic base address ({@code 0x1000_0000_0000 + slot << 32};
 * {@code address()} + offset is what a peer names), length, access flags, PD, and the backing file and offset (found by
 * the buffer's native address, so slices of an allocation work). The key is written last with release semantics;
 * deregistration and remote invalidation clear it with a CAS, so they take effect for every peer at once: a peer reads
 * the slot on every access (seqlock-style: key, fields, fence, key again). A peer maps a region's file on first
 * access and caches the mapping per registration serial. A plain direct buffer can be registered: it works locally
 * and for peers in the same JVM (they use the registering process's own view), but a peer in another process gets
 * REM_ACCESS_ERR for RDMA to it, and a Send into a receive posted on it fails (LOC_PROT_ERR at the receiver).
 * lkey == rkey.
 *
 * <h2>Queues</h2>
 * Each QP has a file {@code <pid>-q<k>} with its receive ring (WQEs: wrId, lkey, offset, length; the owner publishes
 * the tail with release, consumers CAS the head) and its completion ring (a bounded multi-producer ring with a
 * sequence word per entry: producers CAS the tail, fill the entry, publish the sequence with release; the owner polls
 * allocation-free). The peer maps the file at connect, and the name is deleted as soon as it is mapped. The sending
 * thread plays both RNICs: for a Send it takes the peer's next posted receive, checks the length (too long: the
 * receiver gets LOC_LEN_ERR, the sender REM_INV_REQ_ERR, both QPs go to ERROR), resolves the receive's lkey in the
 * peer's registry (needs LOCAL_WRITE, else LOC_PROT_ERR at the receiver and REM_INV_REQ_ERR at the sender, where a
 * real RNIC reports REM_OP_ERR, which the interface does not have), copies, and writes the RECV completion into the
 * peer's CQ; Send with Invalidate also clears the named key in the peer's registry (the RECV completion reports it).
 * RDMA Write/Read check rkey and generation, PD, REMOTE_WRITE/REMOTE_READ and bounds (REM_ACCESS_ERR, both QPs to
 * ERROR) and copy straight into/out of the peer's region: the peer's threads take no part. Local checks: the region
 * belongs to this device and PD and is valid, the segment is inside it, LOCAL_WRITE for a Read's destination
 * (LOC_PROT_ERR; only this QP goes to ERROR).
 *
 * <p>Shared CQs and shared receive queues ({@code ProtectionDomain.createCompletionQueue} /
 * {@code createSharedReceiveQueue}): a CQ file {@code <pid>-c<k>} and an SRQ file {@code <pid>-s<k>} with the same
 * ring layouts (ring from offset 256, capacity at 16). A QP created with them has empty rings of its own and names the
 * files (and its slot on the CQ) in its header; its peer maps them at connect, takes receives from the SRQ (CAS on its
 * head, whichever of our QPs it sends to) and writes RECV completions into the CQ with our slot in bits 13..31 of the
 * CQE's opcode word; our own completions carry it too. The CQ's poll reports each completion's QP number, retires
 * that QP's send-queue entries, retries the sends of QPs waiting for a receiver and flushes QPs that went to ERROR
 * (only when there are such). A QP in ERROR does not flush the SRQ. The files' names stay until they are closed.
 *
 * <p>Receiver not ready: a Send that finds no posted receive waits in the QP's local send queue, with everything posted
 * after it (RC ordering), and is retried when the owner posts, polls or awaits, until the RNR timeout
 * ({@code -Dnvmeof.softrnic.rnrTimeoutMs}, default 1000; rnr_retry 7 treated as "this long") gives
 * RNR_RETRY_EXC_ERR. So a waiting Send makes progress only while its owner thread polls or awaits its CQ (as every
 * NVMe/RDMA queue thread does). A peer QP found in ERROR (it failed on its own) gives RETRY_EXC_ERR at once, where
 * hardware would retry until its transport timer expires.
 *
 * <p>States: INIT at creation, RTR when the connect request is sent (receives can arrive as soon as the peer accepts),
 * RTS when accepted. ERROR on an error completion, on disconnect and when the CM socket closes. A QP in ERROR
 * completes new posts with WR_FLUSH_ERR, and on its owner's next poll flushes its waiting sends and posted receives
 * (WR_FLUSH_ERR, every work request gets a completion, signaled or not). Send-queue slots are freed as on hardware:
 * when a completion is polled, for it and every unsignaled work request before it.
 *
 * <h2>Connection management</h2>
 * A loopback TCP socket at the listener's address: REQ (pid, QP file, attributes, PD, private data up to 56 bytes),
 * REP (the same back, up to 196 bytes) or REJ (up to 148 bytes: {@code RdmaRejectedException}); the initiator depth is
 * min(ours, the peer's responder resources). Disconnect: the QPs of both sides go to ERROR in shared memory at once,
 * then DREQ goes both ways; the socket closing (the peer process died) does the same. {@code onDisconnect} listeners
 * run once, on the connection's CM thread.
 *
 * <h2>Data path</h2>
 * Posting, copying and polling take no lock and allocate nothing: plain, acquire/release and CAS accesses through
 * VarHandles on mapped memory, and {@code ByteBuffer.put(int, ByteBuffer, int, int)} for the copy. {@code await}
 * spins 20 µs, then parks in slices growing to 200 µs (a peer in another process cannot unpark us; one in the same
 * JVM does) and is interruptible. Busy polling sees a completion as soon as the peer's store is visible.
 *
 * <h2>Files</h2>
 * A process deletes its files when they are closed and at exit (shutdown hook); allocations when their buffer is
 * unreachable. When a device starts, it deletes files of processes that no longer exist (or whose pid now belongs to a
 * process started after the file was written). The trust model is the user's: any process of the same user can map
 * the files.
 */
package io.nvmeof.transport.rdma.soft;
