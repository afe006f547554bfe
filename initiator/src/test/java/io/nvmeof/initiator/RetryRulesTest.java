package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The retry decision and delay of a failed completion (NVMe Base 2.0 §9.1, Linux nvme_decide_disposition). */
class RetryRulesTest {
    @Test
    void dnrIsNeverRetriedAndTheRestAtMostFiveTimes() {
        assertFalse(RetryRules.mayRetry(Status.SUCCESS, 0));
        assertFalse(RetryRules.mayRetry(Status.dnr(Status.LBA_OUT_OF_RANGE), 0));
        assertTrue(RetryRules.mayRetry(Status.INTERNAL_ERROR, 0));
        assertTrue(RetryRules.mayRetry(Status.NAMESPACE_NOT_READY, 4));
        assertFalse(RetryRules.mayRetry(Status.NAMESPACE_NOT_READY, 5));
    }

    @Test
    void commandRetryDelayOnlyWithAcre() {
        int crd2 = Status.NAMESPACE_NOT_READY | (2 << 12); // CRD = 2: CRDT2
        int[] crdt = {100, 500, 1000};
        assertEquals(2, RetryRules.crd(crd2));
        assertEquals(TimeUnit.MILLISECONDS.toNanos(500), RetryRules.delayNanos(crd2, crdt));
        assertEquals(0, RetryRules.delayNanos(crd2, null), "ACRE not enabled: CRD is ignored");
        assertEquals(0, RetryRules.delayNanos(Status.NAMESPACE_NOT_READY, crdt), "CRD 0: at once");
    }
}
