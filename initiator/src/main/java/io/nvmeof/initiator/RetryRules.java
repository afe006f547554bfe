package io.nvmeof.initiator;

import io.nvmeof.core.command.Status;
import java.util.concurrent.TimeUnit;

/**
 * When an I/O command that did not succeed is sent again, as the Linux host decides (nvme_decide_disposition,
 * nvme_retry_req) after NVMe Base 2.0 §9.1 (Command Retry):
 *
 * <ul>
 *   <li>a completion with an error status is retried unless its DNR bit (Do Not Retry, status bit 15) is set, at most
 *       {@link CommandSlot#MAX_RETRIES} times (Linux's nvme_max_retries);</li>
 *   <li>after the Command Retry Delay its CRD field (status bits 13:12) selects, CRDT1..3 × 100 ms from Identify
 *       Controller, when the host enabled ACRE (Set Features Host Behavior Support); without ACRE, at once;</li>
 *   <li>a command whose connection failed, or that timed out, has an unknown outcome: it is retried on the
 *       reconnected controller (a write may so reach the media twice, with the same data, as on Linux);</li>
 *   <li>only I/O commands of a controller that reconnects are retried; admin and fabrics commands, and the future
 *       forms of the controller's own commands, fail.</li>
 * </ul>
 */
final class RetryRules {
    private RetryRules() {}

    /** Whether a completion with {@code status} may be retried after {@code retries} retries. */
    static boolean mayRetry(int status, int retries) {
        return !Status.isSuccess(status) && !Status.isDnr(status) && retries < CommandSlot.MAX_RETRIES;
    }

    /** CRD, status bits 13:12 (nvmeof-protocol.md §1.2): 0 none, else the index of CRDT1..3. */
    static int crd(int status) {
        return (status >>> 12) & 0x3;
    }

    /**
     * The delay before a retry: CRDT[CRD] × 100 ms when {@code crdtMillis} (CRDT1..3 in milliseconds, null unless ACRE
     * was enabled) says so, else 0.
     */
    static long delayNanos(int status, int[] crdtMillis) {
        int crd = crd(status);
        if (crd == 0 || crdtMillis == null) {
            return 0;
        }
        return TimeUnit.MILLISECONDS.toNanos(crdtMillis[crd - 1]);
    }
}
