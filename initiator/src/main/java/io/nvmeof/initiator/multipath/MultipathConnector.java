package io.nvmeof.initiator.multipath;

import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.DiscoveryLog;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.NamespaceIdentity;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.NvmeTimeoutException;
import io.nvmeof.initiator.NvmeTransportException;
import io.nvmeof.initiator.NvmeUri;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Builds a {@link MultipathNamespace}: checks the paths name one subsystem, connects them (all with one host
 * identity), takes the first connected path's namespace as the reference every other path must match, and starts
 * the paths' health checks. Also the {@link NamespacePath.Owner} of the paths: the reference identity, and the
 * dispatcher to wake when a path changes.
 */
final class MultipathConnector implements NamespacePath.Owner {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator.multipath");
    private static final AtomicInteger IDS = new AtomicInteger();

    private volatile NamespaceIdentity reference;
    private volatile RequestDispatcher dispatcher;

    private MultipathConnector() {}

    @Override
    public void pathChanged(NamespacePath path) {
        RequestDispatcher d = dispatcher;
        if (d != null) {
            d.kick();
        }
    }

    @Override
    public NamespaceIdentity reference() {
        return reference;
    }

    /**
     * The multipath namespace over every NVM subsystem entry of {@code log} for {@code subnqn} (all its ports and
     * transports), with the options of {@code discoveryUri} (as {@link NvmeUri#forEntry}).
     *
     * @throws IllegalArgumentException if the log has no entry for {@code subnqn}
     */
    static MultipathNamespace fromDiscovery(
            NvmeUri discoveryUri, DiscoveryLog log, String subnqn, MultipathOptions options) throws NvmeException {
        List<NvmeUri> uris = new ArrayList<>();
        for (DiscoveryEntry e : log.entries()) {
            if (e.isNvmSubsystem() && subnqn.equals(e.subnqn())) {
                NvmeUri u = discoveryUri.forEntry(e);
                if (!uris.contains(u)) {
                    uris.add(u);
                }
            }
        }
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("the discovery log lists no NVM subsystem " + subnqn);
        }
        return connect(uris, options);
    }

    /** Reads the discovery log at {@code discoveryUri}, then {@link #fromDiscovery(NvmeUri, DiscoveryLog, String, MultipathOptions)}. */
    static MultipathNamespace fromDiscovery(NvmeUri discoveryUri, String subnqn, MultipathOptions options)
            throws NvmeException {
        return fromDiscovery(discoveryUri, Nvme.discover(discoveryUri, options.connect()), subnqn, options);
    }

    static MultipathNamespace connect(List<NvmeUri> uris, MultipathOptions options) throws NvmeException {
        if (uris.isEmpty()) {
            throw new IllegalArgumentException("no path given");
        }
        String nqn = uris.get(0).subsystemNqn();
        for (NvmeUri u : uris) {
            if (u.isMultipath()) {
                throw new IllegalArgumentException("one address per path: " + u);
            }
            if (u.isDiscovery()) {
                throw new IllegalArgumentException("a multipath namespace needs a subsystem NQN: " + u);
            }
            if (!u.subsystemNqn().equals(nqn)) {
                throw new IllegalArgumentException(
                        "the paths name different subsystems: " + nqn + " and " + u.subsystemNqn());
            }
        }
        NvmeUri first = uris.get(0);
        // One host identity for every path, and ctrl_loss_tmo 0: a path's controller neither reconnects nor retries
        // by itself. A path error comes straight here and fails over (Linux's FAILOVER disposition for multipath
        // requests); other errors are retried here (RETRY); a lost path is connected again by its NamespacePath.
        ConnectOptions user = options.connect();
        ConnectOptions co = new ConnectOptions(
                user.hostIdentity() != null ? user.hostIdentity() : HostIdentity.of(first.hostNqn()),
                user.connectTimeout(),
                user.transport(),
                user.ioMode(),
                user.keepAliveTmo(),
                options.reconnectDelay() != null ? options.reconnectDelay() : user.reconnectDelay(),
                Duration.ZERO,
                user.fastIoFailTmo(),
                user.stateListeners(),
                user.dhchap()); // null: each path's URI's secrets
        IoPolicy policy = options.policy() != null ? options.policy() : IoPolicy.parse(first.iopolicy());
        Duration noPath = options.noPathTimeout() != null ? options.noPathTimeout() : first.timeout();
        int id = IDS.incrementAndGet();
        MultipathConnector owner = new MultipathConnector();
        NamespacePath[] paths = new NamespacePath[uris.size()];
        for (int i = 0; i < paths.length; i++) {
            paths[i] = new NamespacePath(
                    i,
                    uris.get(i),
                    co,
                    uris.get(i).nsid(),
                    owner,
                    options.reconnectDelay() != null
                            ? options.reconnectDelay()
                            : uris.get(i).reconnectDelay(),
                    "nvmeof-mpath-" + id + "-path-" + i);
        }
        boolean[] connected = new boolean[paths.length];
        List<String> failures = new ArrayList<>();
        try {
            for (int i = 0; i < paths.length; i++) {
                try {
                    paths[i].connect();
                    connected[i] = true;
                } catch (NamespacePath.NotSameNamespaceException e) {
                    throw e;
                } catch (NvmeTransportException | NvmeTimeoutException | NvmeStatusException e) {
                    failures.add(paths[i].address() + ": " + e.getMessage());
                    LOG.log(
                            Level.WARNING,
                            "path " + paths[i].address() + " not connected now, retrying later: " + e.getMessage());
                    continue;
                }
                if (owner.reference == null) {
                    Namespace n = paths[i].namespace();
                    NamespaceIdentity ref = n.identity();
                    if (paths.length > 1 && ref.nguid() == null && ref.eui64() == null && ref.uuid() == null) {
                        throw new NvmeException("namespace " + Integer.toUnsignedString(ref.nsid()) + " of " + nqn
                                + " at " + paths[i].address() + " has no NGUID, EUI64 or UUID: its paths cannot be "
                                + "told to be the same namespace");
                    }
                    owner.reference = ref;
                }
            }
            if (owner.reference == null) {
                throw new NvmeTransportException("no path to " + nqn + " could be connected: " + failures);
            }
        } catch (NvmeException | RuntimeException e) {
            for (NamespacePath p : paths) {
                p.close();
            }
            throw e;
        }
        int slots = 0;
        for (int i = 0; i < paths.length; i++) {
            Controller c = paths[i].controller();
            slots += c != null
                    ? c.ioQueueCount() * c.ioQueueDepth()
                    : uris.get(i).queues() * uris.get(i).depth();
        }
        PathSelector selector = new PathSelector(paths, policy);
        RequestDispatcher d = new RequestDispatcher(
                Math.max(2, slots),
                selector,
                first.timeout().toNanos(),
                noPath.toNanos(),
                nqn + " nsid " + Integer.toUnsignedString(owner.reference.nsid()));
        owner.dispatcher = d;
        for (int i = 0; i < paths.length; i++) {
            paths[i].start(connected[i]);
        }
        MultipathNamespace ns =
                new MultipathNamespace(nqn, paths, selector, d, owner.reference, first.timeout(), noPath);
        LOG.log(Level.INFO, () -> "connected " + ns);
        return ns;
    }

    /** Waits for a command's future at most {@code bound} (plus 10 s against bugs), rethrowing its NvmeException. */
    static void await(CompletableFuture<Void> f, Duration bound) throws NvmeException {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    f.get(bound.toNanos() + TimeUnit.SECONDS.toNanos(10), TimeUnit.NANOSECONDS);
                    return;
                } catch (InterruptedException e) {
                    // The command owns its buffer until it completes, which the bound guarantees.
                    interrupted = true;
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof NvmeException ne) {
                        throw ne;
                    }
                    throw new NvmeException("command failed: " + c, c);
                } catch (TimeoutException e) {
                    throw new NvmeTimeoutException("no completion within " + bound.toMillis() + " ms (internal error)");
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
