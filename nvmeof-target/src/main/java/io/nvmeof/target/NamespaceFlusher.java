package io.nvmeof.target;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.target.namespace.RamNamespace;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * Makes file-backed namespace data durable ({@link RamNamespace#force}, i.e. {@code msync}) for Flush and FUA writes,
 * and deallocates file blocks (holes punched by {@link RamNamespace#zero}) for Dataset Management and Write Zeroes
 * with DEAC, without blocking a queue's thread: the work runs on one shared daemon thread, and the command is
 * completed back on its queue's thread ({@code QueueChannel.execute}) once it is done. A failed force or punch
 * completes the command with Write Fault.
 *
 * <p>Only file-backed namespaces come here: RAM namespaces complete Flush and FUA at once, so the RAM I/O path
 * allocates nothing. A force of a file namespace allocates its two small tasks; forces run one after another.
 */
final class NamespaceFlusher {
    private static final Logger LOG = System.getLogger("io.nvmeof.target.namespace");
    private static final ExecutorService THREAD = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "nvmeof-namespace-flush");
        t.setDaemon(true);
        return t;
    });

    private NamespaceFlusher() {}

    /**
     * Forces {@code length} bytes at byte {@code offset} of {@code ns} (everything if {@code length} &lt; 0), then
     * completes {@code request} with {@code status} on {@code session}'s thread.
     */
    static void forceThenComplete(
            QueueSession session, TargetRequest request, RamNamespace ns, long offset, long length, int status) {
        forceThenComplete(session, request, List.of(ns), offset, length, status);
    }

    /** As above for several namespaces (a Flush of every namespace, NSID FFFFFFFFh). */
    static void forceThenComplete(
            QueueSession session,
            TargetRequest request,
            List<RamNamespace> namespaces,
            long offset,
            long length,
            int status) {
        THREAD.execute(() -> {
            int result = status;
            for (RamNamespace ns : namespaces) {
                try {
                    ns.force(offset, length);
                } catch (RuntimeException e) {
                    LOG.log(Level.ERROR, "making " + ns + " in " + ns.file() + " durable failed", e);
                    result = Status.WRITE_FAULT;
                }
            }
            int done = result;
            session.channel().execute(() -> session.complete(request, done));
        });
    }

    /**
     * Deallocates the byte ranges {@code ranges} (offset, length pairs) of the file-backed {@code ns}, forces them if
     * {@code force} (FUA), then on {@code session}'s thread runs {@code then} and completes {@code request}.
     */
    static void deallocateThenComplete(
            QueueSession session, TargetRequest request, RamNamespace ns, long[] ranges, boolean force, Runnable then) {
        THREAD.execute(() -> {
            int result = Status.SUCCESS;
            try {
                for (int i = 0; i < ranges.length; i += 2) {
                    ns.zero(ranges[i], ranges[i + 1], true);
                    if (force) {
                        ns.force(ranges[i], ranges[i + 1]);
                    }
                }
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "deallocating blocks of " + ns + " in " + ns.file() + " failed", e);
                result = Status.WRITE_FAULT;
            }
            int done = result;
            session.channel().execute(() -> {
                then.run();
                session.complete(request, done);
            });
        });
    }
}
