package io.nvmeof.initiator.multipath;

import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.BlockNamespace;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.DiscoveryLog;
import io.nvmeof.initiator.FutureCallback;
import io.nvmeof.initiator.IoCallback;
import io.nvmeof.initiator.LbaRange;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.NamespaceIdentity;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeTransportException;
import io.nvmeof.initiator.NvmeUri;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * One namespace reached through several controllers of its subsystem (several addresses or transports): NVMe
 * multipath as the Linux host does it, with the same I/O API as a single-path {@link Namespace}
 * ({@link BlockNamespace}). Made by {@link #connect(String)} with a URI of several addresses
 * ({@code nvme+tcp://a:4420,b:4420/NQN}), from URIs ({@link #connect(List, MultipathOptions)}) or from a discovery
 * log ({@link #fromDiscovery}).
 *
 * <p><b>Paths.</b> Each path is a controller of the subsystem and its namespace with the same NSID; a namespace whose
 * NGUID, EUI64 or UUID (Identify Namespace and its Namespace Identification Descriptor list) differs from the first
 * path's, or that has none of them, is not used: connecting fails. A path that fails later is connected again every
 * reconnect delay and rejoins once its namespace is checked again.
 *
 * <p><b>ANA.</b> Each path reads the ANA log page (LID 0Ch) when it connects, after every ANA change notice (an
 * asynchronous event) and after an ANA status on I/O, and takes the state of the namespace's group on its controller.
 * Commands go to optimized paths first, then non-optimized ones, never to inaccessible, persistent loss or change
 * paths; which path of a kind is chosen by the {@link IoPolicy} (the URI's {@code iopolicy=}).
 *
 * <p><b>Failover.</b> A command that fails with a path error is sent again on another path; a command with no usable
 * path waits, bounded, until one is usable again (see {@link RequestDispatcher}). {@link #failovers()} counts them.
 * Callbacks run on the queue thread of the path that completed the command.
 *
 * <p>Thread-safe. {@link #close()} closes every path's controller.
 */
public final class MultipathNamespace implements BlockNamespace, AutoCloseable {
    private final String nqn;
    private final NamespacePath[] paths;
    private final PathSelector selector;
    private final RequestDispatcher dispatcher;
    private final NamespaceIdentity reference;
    private final Duration commandTimeout;
    private final Duration waitBound;
    private volatile BlockDevice blockDevice;
    private volatile boolean closed;

    MultipathNamespace(
            String nqn,
            NamespacePath[] paths,
            PathSelector selector,
            RequestDispatcher dispatcher,
            NamespaceIdentity reference,
            Duration commandTimeout,
            Duration noPathTimeout) {
        this.nqn = nqn;
        this.paths = paths;
        this.selector = selector;
        this.dispatcher = dispatcher;
        this.reference = reference;
        this.commandTimeout = commandTimeout;
        // A command may time out on one path, wait for a path, then take a command timeout on the next one.
        this.waitBound = commandTimeout.multipliedBy(2).plus(noPathTimeout);
    }

    /** Connects every address of a multipath URI ({@code nvme+tcp://a:4420,b:4420/NQN?iopolicy=...}). */
    public static MultipathNamespace connect(String uri) throws NvmeException {
        return MultipathConnector.connect(NvmeUri.parse(uri).paths(), MultipathOptions.defaults());
    }

    /** Connects {@code uri}'s addresses ({@link NvmeUri#paths()}) with {@code options}. */
    public static MultipathNamespace connect(NvmeUri uri, MultipathOptions options) throws NvmeException {
        return MultipathConnector.connect(uri.paths(), options);
    }

    /**
     * Connects the given paths (one address each; transports may differ, e.g. one tcp and one rdma), which must name
     * one subsystem; the namespace is the first URI's {@code nsid=}, else the first path's first active namespace.
     */
    public static MultipathNamespace connect(List<NvmeUri> paths, MultipathOptions options) throws NvmeException {
        return MultipathConnector.connect(paths, options);
    }

    /**
     * The namespace over every NVM subsystem entry of {@code log} for {@code subnqn} (each port and transport the
     * discovery controller lists for it), with the options of {@code discoveryUri} ({@link NvmeUri#forEntry}).
     *
     * @throws IllegalArgumentException if the log lists no such subsystem
     */
    public static MultipathNamespace fromDiscovery(
            NvmeUri discoveryUri, DiscoveryLog log, String subnqn, MultipathOptions options) throws NvmeException {
        return MultipathConnector.fromDiscovery(discoveryUri, log, subnqn, options);
    }

    /** Reads the discovery log at {@code discoveryUri}, then as {@link #fromDiscovery(NvmeUri, DiscoveryLog, String, MultipathOptions)}. */
    public static MultipathNamespace fromDiscovery(NvmeUri discoveryUri, String subnqn, MultipathOptions options)
            throws NvmeException {
        return MultipathConnector.fromDiscovery(discoveryUri, subnqn, options);
    }

    // ---- paths ----

    /** The subsystem NQN. */
    public String subsystemNqn() {
        return nqn;
    }

    /** Every path, in the order given, as it is now. */
    public List<PathStatus> paths() {
        List<PathStatus> out = new ArrayList<>(paths.length);
        for (NamespacePath p : paths) {
            out.add(p.status());
        }
        return out;
    }

    /** The controller of path {@code index} (in the order given), or null while that path is not connected. */
    public Controller controller(int index) {
        return paths[index].controller();
    }

    /** Commands sent again after a path error (on another path, or on the same one once usable again). */
    public long failovers() {
        return dispatcher.failovers();
    }

    public IoPolicy policy() {
        return selector.policy();
    }

    /** Changes the path selection policy for the commands sent from now on. */
    public void policy(IoPolicy policy) {
        selector.policy(java.util.Objects.requireNonNull(policy));
    }

    // ---- identity ----

    @Override
    public int nsid() {
        return reference.nsid();
    }

    @Override
    public NamespaceIdentity identity() {
        return reference;
    }

    @Override
    public long sizeBytes() {
        return reference.sizeBytes();
    }

    @Override
    public int blockSize() {
        return reference.blockSize();
    }

    @Override
    public long blockCount() {
        return reference.nsze();
    }

    @Override
    public boolean readOnly() {
        return reference.readOnly();
    }

    /** False once closed. A namespace with no usable path is still active: its commands wait for one. */
    @Override
    public boolean isActive() {
        return !closed;
    }

    /** The least of the paths' limits (paths not connected now are skipped). */
    @Override
    public int maxBlocksPerCommand() {
        int max = Namespace.MAX_NLB;
        boolean any = false;
        for (NamespacePath p : paths) {
            Namespace n = p.namespace();
            if (n != null) {
                max = Math.min(max, n.maxBlocksPerCommand());
                any = true;
            }
        }
        return any ? max : Math.max(1, Math.min(Namespace.MAX_NLB, Namespace.MAX_TRANSFER_BYTES / blockSize()));
    }

    /**
     * How long a command may take at most before it completes one way or the other: twice the paths' command
     * timeout (a timeout on one path, then on the next) plus the no-path timeout.
     */
    @Override
    public Duration commandTimeout() {
        return waitBound;
    }

    /**
     * A buffer from the first connected path's controller. Over NVMe/TCP a plain direct buffer; over NVMe/RDMA it is
     * registered with that controller only, so commands on other paths copy it once.
     */
    @Override
    public ByteBuffer allocateBuffer(int blocks) throws NvmeException {
        for (NamespacePath p : paths) {
            Namespace n = p.namespace();
            if (n != null) {
                try {
                    return n.allocateBuffer(blocks);
                } catch (NvmeTransportException e) {
                    // that path just went away: try the next
                }
            }
        }
        if (blocks <= 0 || (long) blocks * blockSize() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("blocks must be 1.." + Integer.MAX_VALUE / blockSize() + ": " + blocks);
        }
        return ByteBuffer.allocateDirect(blocks * blockSize()).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    }

    @Override
    public BlockDevice blockDevice() {
        BlockDevice d = blockDevice;
        if (d == null) {
            synchronized (this) {
                d = blockDevice;
                if (d == null) {
                    d = BlockDevice.of(this);
                    blockDevice = d;
                }
            }
        }
        return d;
    }

    // ---- I/O ----

    @Override
    public void read(long lba, int blocks, ByteBuffer dst) throws NvmeException {
        await(readAsync(lba, blocks, dst));
    }

    @Override
    public void read(long lba, int blocks, ByteBuffer dst, IoCallback callback, Object attachment) {
        io(true, MultipathRequest.READ, lba, blocks, dst, true, callback, attachment);
    }

    @Override
    public boolean tryRead(long lba, int blocks, ByteBuffer dst, IoCallback callback, Object attachment) {
        return io(false, MultipathRequest.READ, lba, blocks, dst, true, callback, attachment);
    }

    @Override
    public void write(long lba, int blocks, ByteBuffer src) throws NvmeException {
        await(writeAsync(lba, blocks, src));
    }

    @Override
    public void write(long lba, int blocks, ByteBuffer src, IoCallback callback, Object attachment) {
        io(true, MultipathRequest.WRITE, lba, blocks, src, false, callback, attachment);
    }

    @Override
    public boolean tryWrite(long lba, int blocks, ByteBuffer src, IoCallback callback, Object attachment) {
        return io(false, MultipathRequest.WRITE, lba, blocks, src, false, callback, attachment);
    }

    @Override
    public void compare(long lba, int blocks, ByteBuffer expected) throws NvmeException {
        await(compareAsync(lba, blocks, expected));
    }

    @Override
    public void compare(long lba, int blocks, ByteBuffer expected, IoCallback callback, Object attachment) {
        io(true, MultipathRequest.COMPARE, lba, blocks, expected, false, callback, attachment);
    }

    @Override
    public boolean tryCompare(long lba, int blocks, ByteBuffer expected, IoCallback callback, Object attachment) {
        return io(false, MultipathRequest.COMPARE, lba, blocks, expected, false, callback, attachment);
    }

    @Override
    public void flush() throws NvmeException {
        await(flushAsync());
    }

    @Override
    public void flush(IoCallback callback, Object attachment) {
        check(callback);
        dispatcher.submit(true, MultipathRequest.FLUSH, 0, 0, null, null, callback, attachment);
    }

    @Override
    public boolean tryFlush(IoCallback callback, Object attachment) {
        check(callback);
        return dispatcher.submit(false, MultipathRequest.FLUSH, 0, 0, null, null, callback, attachment);
    }

    @Override
    public void writeZeroes(long lba, int blocks) throws NvmeException {
        await(writeZeroesAsync(lba, blocks));
    }

    @Override
    public void writeZeroes(long lba, int blocks, IoCallback callback, Object attachment) {
        check(callback);
        checkLba(lba, blocks, Namespace.MAX_NLB);
        dispatcher.submit(true, MultipathRequest.WRITE_ZEROES, lba, blocks, null, null, callback, attachment);
    }

    @Override
    public void deallocate(LbaRange... ranges) throws NvmeException {
        await(deallocateAsync(List.of(ranges)));
    }

    @Override
    public CompletableFuture<Void> deallocateAsync(List<LbaRange> ranges) {
        if (ranges.isEmpty() || ranges.size() > Namespace.MAX_DSM_RANGES) {
            throw new IllegalArgumentException(
                    "deallocate takes 1.." + Namespace.MAX_DSM_RANGES + " ranges: " + ranges.size());
        }
        for (LbaRange r : ranges) {
            if (Long.compareUnsigned(r.lba() + r.blocks(), blockCount()) > 0) {
                throw new IllegalArgumentException(
                        "range " + r + " goes beyond the namespace (" + blockCount() + " blocks)");
            }
        }
        CompletableFuture<Void> f = new CompletableFuture<>();
        dispatcher.submit(
                true, MultipathRequest.DEALLOCATE, 0, 0, null, List.copyOf(ranges), FutureCallback.INSTANCE, f);
        return f;
    }

    private boolean io(
            boolean wait,
            int op,
            long lba,
            int blocks,
            ByteBuffer buf,
            boolean toHost,
            IoCallback callback,
            Object attachment) {
        check(callback);
        checkLba(lba, blocks, maxBlocksPerCommand());
        if (buf == null) {
            throw new IllegalArgumentException("no buffer");
        }
        long len = (long) blocks * blockSize();
        if (buf.remaining() < len) {
            throw new IllegalArgumentException(blocks + " block(s) of " + blockSize() + " bytes need " + len
                    + " bytes but the buffer has " + buf.remaining() + " remaining");
        }
        if (toHost && buf.isReadOnly()) {
            throw new IllegalArgumentException("cannot read into a read-only buffer");
        }
        return dispatcher.submit(wait, op, lba, blocks, buf, null, callback, attachment);
    }

    private static void check(IoCallback callback) {
        if (callback == null) {
            throw new IllegalArgumentException("no callback");
        }
    }

    private static void checkLba(long lba, int blocks, int max) {
        if (blocks < 1 || blocks > max) {
            throw new IllegalArgumentException("blocks must be 1.." + max + " per command: " + blocks);
        }
        if (lba < 0) {
            throw new IllegalArgumentException("lba must not be negative: " + lba);
        }
    }

    private void await(CompletableFuture<Void> f) throws NvmeException {
        MultipathConnector.await(f, waitBound);
    }

    // ---- lifecycle ----

    /** Closes every path; commands still waiting for a path fail with {@link NvmeTransportException}. Idempotent. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        dispatcher.close(new NvmeTransportException("the multipath namespace was closed"));
        for (NamespacePath p : paths) {
            p.close();
        }
    }

    void pathChanged() {
        dispatcher.kick();
    }

    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("multipath namespace ")
                .append(Integer.toUnsignedString(nsid()))
                .append(" of ")
                .append(nqn)
                .append(" (")
                .append(selector.policy().linuxName())
                .append("):");
        for (NamespacePath p : paths) {
            b.append(' ').append(p);
        }
        return b.toString();
    }
}
