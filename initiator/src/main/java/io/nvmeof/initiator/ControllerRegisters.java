package io.nvmeof.initiator;

import io.nvmeof.core.command.Properties;
import java.util.concurrent.TimeUnit;

/**
 * The controller properties the host reads and writes over Property Get/Set (nvmeof-protocol.md §2.3): CAP and VS,
 * and the two CC/CSTS handshakes, enable (§7.1 steps 5–10) and normal shutdown (§7.3). Linux: nvme_enable_ctrl and
 * nvme_disable_ctrl with shutdown.
 *
 * <p>Written by the connecting thread during bring-up and by {@link Controller#close()}; read by any thread after
 * {@link Nvme#connect} returned.
 */
final class ControllerRegisters {
    /** CC for the enable handshake: IOSQES 6, IOCQES 4, MPS 0, AMS 0, CSS 0 (nvmeof-protocol.md §2.3, §7.8; no CSI). */
    static final int CC_INITIAL = (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT);
    /** Shutdown wait: 5 s, the Linux default (nvmeof-protocol.md §7.3). */
    static final long SHUTDOWN_TIMEOUT_MILLIS = 5000;

    private final AdminCommands commands;
    private long cap;
    private int vs;
    private int cc;
    private volatile boolean enabled;

    ControllerRegisters(AdminCommands commands) {
        this.commands = commands;
    }

    /** Reads CAP; only 4 KiB host pages are supported (CAP.MPSMIN 0, nvmeof-protocol.md §2.3, §7.5). */
    void readCapabilities() throws NvmeException {
        cap = commands.propertyGet(Properties.CAP, true);
        if (Properties.capMpsmin(cap) != 0) {
            // The host page size is 4 KiB; a larger minimum is refused like Linux does.
            throw new NvmeException("controller CAP.MPSMIN is " + Properties.capMpsmin(cap) + " (minimum page "
                    + (4096 << Properties.capMpsmin(cap)) + " bytes); only 4 KiB pages are supported");
        }
    }

    /**
     * The enable handshake (nvmeof-protocol.md §2.3, §7.8): CC with EN=0, then EN=1, then waits for CSTS.RDY; then
     * reads VS.
     */
    void enable() throws NvmeException {
        cc = CC_INITIAL;
        commands.propertySet(Properties.CC, cc);
        cc |= Properties.CC_EN;
        commands.propertySet(Properties.CC, cc);
        enabled = true;
        waitReady();
        vs = (int) commands.propertyGet(Properties.VS, false);
    }

    private void waitReady() throws NvmeException {
        // (CAP.TO + 1) × 500 ms, a little more than Linux's (TO+1)/2 s (nvmeof-protocol.md §2.3, §7.1 step 9).
        long limit = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos((Properties.capTimeout(cap) + 1) * 500L);
        while (true) {
            int csts = (int) commands.propertyGet(Properties.CSTS, false);
            if (csts == 0xFFFFFFFF || (csts & Properties.CSTS_CFS) != 0) {
                throw new NvmeException(
                        "controller fatal status while enabling (CSTS 0x" + Integer.toHexString(csts) + ")");
            }
            if ((csts & Properties.CSTS_RDY) != 0) {
                return;
            }
            if (System.nanoTime() - limit > 0) {
                throw new NvmeTimeoutException("controller not ready within " + (Properties.capTimeout(cap) + 1) * 500L
                        + " ms of CC.EN (CAP.TO " + Properties.capTimeout(cap) + ")");
            }
            sleep(2); // Linux polls every 1–2 ms
        }
    }

    /** Normal shutdown: CC.SHN = 01 with EN still 1, then poll CSTS.SHST until 10b (nvmeof-protocol.md §2.3, §7.3). */
    void shutdown() throws NvmeException {
        commands.propertySet(
                Properties.CC,
                (cc & ~(0x3 << Properties.CC_SHN_SHIFT)) | (Properties.CC_SHN_NORMAL << Properties.CC_SHN_SHIFT));
        long limit = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SHUTDOWN_TIMEOUT_MILLIS);
        while (true) {
            int csts = (int) commands.propertyGet(Properties.CSTS, false);
            if ((csts & Properties.CSTS_SHST_MASK) == Properties.CSTS_SHST_COMPLETE) {
                return;
            }
            if (System.nanoTime() - limit > 0) {
                throw new NvmeTimeoutException("shutdown not complete within " + SHUTDOWN_TIMEOUT_MILLIS + " ms");
            }
            sleep(2);
        }
    }

    /** Whether CC.EN was written: only then does close() shut the controller down. */
    boolean enabled() {
        return enabled;
    }

    /** CAP (nvmeof-protocol.md §2.3). */
    long cap() {
        return cap;
    }

    /** VS (nvmeof-protocol.md §2.3), e.g. 0x00010300 for 1.3. */
    int vs() {
        return vs;
    }

    private static void sleep(long millis) throws NvmeException {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new NvmeException("interrupted");
        }
    }
}
