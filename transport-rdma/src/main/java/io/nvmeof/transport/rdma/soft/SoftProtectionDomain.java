package io.nvmeof.transport.rdma.soft;

import io.nvmeof.transport.rdma.verbs.CompletionQueue;
import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import io.nvmeof.transport.rdma.verbs.ProtectionDomain;
import io.nvmeof.transport.rdma.verbs.SharedReceiveQueue;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The software RNIC's protection domain (one per process, shared by all its connections, as the kernel's nvme-rdma
 * uses one PD per device). Memory from {@link #allocate} is a memory-mapped file in the shared directory, so a
 * peer process can map it: only such memory (or a slice of it) is remotely accessible. A plain direct buffer can be
 * registered too: it works for local use and for peers in the same JVM, but a peer in another process gets
 * REM_ACCESS_ERR for RDMA on it, and a Send into a receive posted on it fails (LOC_PROT_ERR at the receiver).
 */
final class SoftProtectionDomain implements ProtectionDomain {
    final SoftDevice device;
    final int id;

    SoftProtectionDomain(SoftDevice device, int id) {
        this.device = device;
        this.id = id;
    }

    @Override
    public MemoryRegion register(ByteBuffer buffer, int access) throws IOException {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException("only direct buffers can be registered");
        }
        if ((access & ~(ACCESS_LOCAL_WRITE | ACCESS_REMOTE_WRITE | ACCESS_REMOTE_READ)) != 0) {
            throw new IllegalArgumentException("unknown access flags 0x" + Integer.toHexString(access));
        }
        if ((access & ACCESS_REMOTE_WRITE) != 0 && (access & ACCESS_LOCAL_WRITE) == 0) {
            // ibv_reg_mr: EINVAL, remote write requires local write
            throw new IllegalArgumentException("ACCESS_REMOTE_WRITE requires ACCESS_LOCAL_WRITE");
        }
        long[] base = new long[1];
        int key = device.register(buffer, access, id, base);
        return new SoftMemoryRegion(this, buffer, key, base[0], access);
    }

    @Override
    public ByteBuffer allocate(int size) throws IOException {
        return device.allocate(size);
    }

    @Override
    public CompletionQueue createCompletionQueue(int entries) throws IOException {
        return new SoftCompletionQueue(device, entries);
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr) throws IOException {
        return new SoftSharedReceiveQueue(device, maxWr);
    }

    @Override
    public String toString() {
        return "soft PD " + id + " of process " + device.pid;
    }
}
