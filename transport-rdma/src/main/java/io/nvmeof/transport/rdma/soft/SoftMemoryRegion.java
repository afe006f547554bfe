package io.nvmeof.transport.rdma.soft;

import io.nvmeof.transport.rdma.verbs.MemoryRegion;
import java.nio.ByteBuffer;

/** A registered region: lkey == rkey, a synthetic {@link #address()}, validity read from the shared registry. */
final class SoftMemoryRegion implements MemoryRegion {
    final SoftProtectionDomain pd;
    final SoftDevice device;
    final ByteBuffer view;
    private final ByteBuffer registered;
    final int key;
    final long address;
    final int length;
    final int access;
    private volatile boolean closed;

    SoftMemoryRegion(SoftProtectionDomain pd, ByteBuffer buffer, int key, long address, int access) {
        this.pd = pd;
        this.device = pd.device;
        this.registered = buffer;
        this.view = Shm.view(buffer);
        this.key = key;
        this.address = address;
        this.length = buffer.capacity();
        this.access = access;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public int length() {
        return length;
    }

    @Override
    public int lkey() {
        return key;
    }

    @Override
    public int rkey() {
        return key;
    }

    @Override
    public int access() {
        return access;
    }

    @Override
    public ByteBuffer buffer() {
        return Shm.view(registered);
    }

    /** False once deregistered here or invalidated by a peer's Send with Invalidate. */
    boolean valid() {
        return device.isValid(key);
    }

    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        device.deregister(key);
    }

    @Override
    public String toString() {
        return "soft MR key=0x" + Integer.toHexString(key) + " addr=0x" + Long.toHexString(address) + " len=" + length;
    }
}
