package io.nvmeof.transport.tcp;

import io.netty.buffer.AbstractReferenceCountedByteBuf;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.EventExecutor;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.util.DirectBuffers;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.ReadOnlyBufferException;
import java.nio.channels.FileChannel;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;

/**
 * A reusable, read-only {@link ByteBuf} view of a region of somebody else's {@link ByteBuffer}: how
 * {@code TargetRequest.addData} segments go to the socket without a copy.
 *
 * <p><b>Ownership.</b> {@link #reset} takes the segment and its {@link DataRelease}; the view starts with a reference
 * count of 1 and is handed to Netty with {@code write}. When Netty releases it (written, failed, or the channel
 * closed), {@link #deallocate()} calls the {@code DataRelease} exactly once and gives the view back to its
 * {@link Pool} for the next segment. The view never frees or modifies the memory it shows.
 *
 * <p><b>Allocation.</b> None per use for a direct source when {@code sun.misc.Unsafe} is available: the epoll
 * transport writes from {@link #memoryAddress()} and {@link Crc32c} reads through {@link #internalNioBuffer}. That
 * NIO view is a {@code duplicate()} of the source, made once per distinct source buffer and cached (namespace memory
 * and pooled buffers are long-lived, so it is usually reused); the NIO transport and data digests need it. A heap
 * source is copied to a direct buffer by Netty itself before the write (as the JDK would).
 */
public final class SegmentByteBuf extends AbstractReferenceCountedByteBuf {
    /**
     * A free list of views, owned by one event loop (one connection). Views released on another thread are dropped
     * rather than returned, so the list needs no lock.
     */
    public static final class Pool {
        private final EventExecutor owner;
        private SegmentByteBuf[] free = new SegmentByteBuf[16];
        private int size;
        private int created;

        /** @param owner the event loop that takes and returns views */
        public Pool(EventExecutor owner) {
            this.owner = owner;
        }

        /** A view over {@code source[offset, offset + length)} with reference count 1. */
        public SegmentByteBuf take(ByteBuffer source, int offset, int length, DataRelease release) {
            SegmentByteBuf view = size > 0 ? free[--size] : newView();
            free[size] = null;
            view.reset(source, offset, length, release);
            return view;
        }

        private SegmentByteBuf newView() {
            created++;
            return new SegmentByteBuf(this);
        }

        void giveBack(SegmentByteBuf view) {
            if (!owner.inEventLoop()) {
                return;
            }
            if (size == free.length) {
                SegmentByteBuf[] bigger = new SegmentByteBuf[size * 2];
                System.arraycopy(free, 0, bigger, 0, size);
                free = bigger;
            }
            free[size++] = view;
        }

        /** Views ever created (for tests: stays flat in steady state). */
        public int created() {
            return created;
        }

        /** Views on the free list. */
        public int available() {
            return size;
        }
    }

    private final Pool pool;
    private ByteBuffer source;
    private int base;
    private int length;
    private DataRelease release;
    private long address;
    private ByteBuffer nioSource;
    private ByteBuffer nioView;

    private SegmentByteBuf(Pool pool) {
        super(0);
        this.pool = pool;
    }

    private void reset(ByteBuffer source, int offset, int length, DataRelease release) {
        if (offset < 0 || length < 0 || offset > source.capacity() - length) {
            throw new IndexOutOfBoundsException("segment [" + offset + ", " + offset + "+" + length
                    + ") outside a buffer of capacity " + source.capacity());
        }
        this.source = source;
        this.base = offset;
        this.length = length;
        this.release = release == null ? DataRelease.NONE : release;
        long start = DirectBuffers.address(source); // 0 for a heap buffer, or where the address cannot be read
        this.address = start != 0L ? start + offset : 0L;
        maxCapacity(length);
        setIndex(0, length);
        resetRefCnt();
    }

    @Override
    protected void deallocate() {
        DataRelease r = release;
        release = null;
        source = null;
        address = 0L;
        try {
            if (r != null) {
                r.release();
            }
        } finally {
            pool.giveBack(this);
        }
    }

    /** A NIO view of the source with position {@code base + index} and limit {@code + len}. */
    private ByteBuffer nio(int index, int len) {
        if (nioSource != source) {
            nioView = source.duplicate();
            nioSource = source;
        }
        nioView.clear().position(base + index).limit(base + index + len);
        return nioView;
    }

    @Override
    public int capacity() {
        return length;
    }

    @Override
    public ByteBuf capacity(int newCapacity) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBufAllocator alloc() {
        return ByteBufAllocator.DEFAULT;
    }

    @Override
    @SuppressWarnings("deprecation")
    public ByteOrder order() {
        return ByteOrder.BIG_ENDIAN;
    }

    @Override
    public ByteBuf unwrap() {
        return null;
    }

    @Override
    public boolean isDirect() {
        return source != null && source.isDirect();
    }

    @Override
    public boolean isReadOnly() {
        return true;
    }

    @Override
    protected byte _getByte(int index) {
        return source.get(base + index);
    }

    @Override
    protected short _getShort(int index) {
        return (short) ((_getByte(index) << 8) | (_getByte(index + 1) & 0xFF));
    }

    @Override
    protected short _getShortLE(int index) {
        return (short) ((_getByte(index) & 0xFF) | (_getByte(index + 1) << 8));
    }

    @Override
    protected int _getUnsignedMedium(int index) {
        return ((_getByte(index) & 0xFF) << 16) | ((_getByte(index + 1) & 0xFF) << 8) | (_getByte(index + 2) & 0xFF);
    }

    @Override
    protected int _getUnsignedMediumLE(int index) {
        return (_getByte(index) & 0xFF) | ((_getByte(index + 1) & 0xFF) << 8) | ((_getByte(index + 2) & 0xFF) << 16);
    }

    @Override
    protected int _getInt(int index) {
        return ((_getShort(index) & 0xFFFF) << 16) | (_getShort(index + 2) & 0xFFFF);
    }

    @Override
    protected int _getIntLE(int index) {
        return (_getShortLE(index) & 0xFFFF) | ((_getShortLE(index + 2) & 0xFFFF) << 16);
    }

    @Override
    protected long _getLong(int index) {
        return ((_getInt(index) & 0xFFFFFFFFL) << 32) | (_getInt(index + 4) & 0xFFFFFFFFL);
    }

    @Override
    protected long _getLongLE(int index) {
        return (_getIntLE(index) & 0xFFFFFFFFL) | ((_getIntLE(index + 4) & 0xFFFFFFFFL) << 32);
    }

    @Override
    protected void _setByte(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShort(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setShortLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMedium(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setMediumLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setInt(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setIntLE(int index, int value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLong(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    protected void _setLongLE(int index, long value) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuf dst, int dstIndex, int len) {
        checkDstIndex(index, len, dstIndex, dst.capacity());
        if (source.hasArray()) {
            dst.setBytes(dstIndex, source.array(), source.arrayOffset() + base + index, len);
        } else {
            dst.setBytes(dstIndex, nio(index, len));
        }
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, byte[] dst, int dstIndex, int len) {
        checkDstIndex(index, len, dstIndex, dst.length);
        source.get(base + index, dst, dstIndex, len);
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, ByteBuffer dst) {
        int len = dst.remaining();
        checkIndex(index, len);
        dst.put(nio(index, len));
        return this;
    }

    @Override
    public ByteBuf getBytes(int index, OutputStream out, int len) throws IOException {
        checkIndex(index, len);
        byte[] tmp = new byte[len];
        getBytes(index, tmp, 0, len);
        out.write(tmp);
        return this;
    }

    @Override
    public int getBytes(int index, GatheringByteChannel out, int len) throws IOException {
        checkIndex(index, len);
        return out.write(nio(index, len));
    }

    @Override
    public int getBytes(int index, FileChannel out, long position, int len) throws IOException {
        checkIndex(index, len);
        return out.write(nio(index, len), position);
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuf src, int srcIndex, int len) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, byte[] src, int srcIndex, int len) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf setBytes(int index, ByteBuffer src) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, InputStream in, int len) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, ScatteringByteChannel in, int len) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public int setBytes(int index, FileChannel in, long position, int len) {
        throw new ReadOnlyBufferException();
    }

    @Override
    public ByteBuf copy(int index, int len) {
        checkIndex(index, len);
        ByteBuf copy = Unpooled.buffer(len);
        getBytes(index, copy, 0, len);
        return copy.writerIndex(len);
    }

    @Override
    public int nioBufferCount() {
        return 1;
    }

    @Override
    public ByteBuffer nioBuffer(int index, int len) {
        checkIndex(index, len);
        return nio(index, len).slice();
    }

    @Override
    public ByteBuffer internalNioBuffer(int index, int len) {
        checkIndex(index, len);
        return nio(index, len);
    }

    @Override
    public ByteBuffer[] nioBuffers(int index, int len) {
        return new ByteBuffer[] {nioBuffer(index, len)};
    }

    @Override
    public boolean hasArray() {
        return source != null && source.hasArray() && !source.isReadOnly();
    }

    @Override
    public byte[] array() {
        if (!hasArray()) {
            throw new UnsupportedOperationException("not a heap segment");
        }
        return source.array();
    }

    @Override
    public int arrayOffset() {
        return source.arrayOffset() + base;
    }

    @Override
    public boolean hasMemoryAddress() {
        return address != 0L;
    }

    @Override
    public long memoryAddress() {
        if (address == 0L) {
            throw new UnsupportedOperationException("no memory address");
        }
        return address;
    }

    @Override
    public boolean isContiguous() {
        return true;
    }

    @Override
    public String toString() {
        return "SegmentByteBuf(len=" + length + ", refCnt=" + refCnt() + ")";
    }
}
