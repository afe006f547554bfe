package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The Error Information log (LID 01h) and More (M) in the failed command's CQE (NVMe Base 2.0 §5.16.1.2, §4.6.1), as
 * nvmet does: every failed command gets an entry, newest first, and M says so; successful commands have no M.
 */
class ErrorInformationTest {
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    @Test
    void failedCommandsAreLoggedAndCarryMore() {
        host.bringUp(TestTargets.NQN, 1);
        FakeRequest ok = check(host.admin(InJvmHost.identify(0x01, 0)));
        assertFalse(ok.more(), "success: no M");

        FakeRequest badCns = host.admin(InJvmHost.identify(0x10, 0));
        assertEquals(Status.dnr(Status.INVALID_FIELD), badCns.status());
        assertTrue(badCns.more(), "failed admin command: M");
        FakeRequest badRead = host.io(InJvmHost.read(77, 0, 1, 512));
        assertEquals(Status.dnr(Status.INVALID_NAMESPACE), badRead.status());
        assertTrue(badRead.more(), "failed I/O command: M");

        ByteBuffer log =
                check(host.admin(InJvmHost.getLogPage(0x01, 0, 0, 128, false))).dataBuffer();
        // Newest first: the read on I/O queue 1.
        assertEquals(2L, log.getLong(0), "error count");
        assertEquals(1, log.getShort(8), "SQID");
        assertEquals((short) badRead.sqe().cid(), log.getShort(10), "CID");
        assertEquals((short) Status.dnr(Status.INVALID_NAMESPACE), log.getShort(12), "status field, no M");
        assertEquals(77, log.getInt(24), "NSID");
        // Then the Identify on the admin queue.
        assertEquals(1L, log.getLong(64));
        assertEquals(0, log.getShort(64 + 8));
        assertEquals((short) badCns.sqe().cid(), log.getShort(64 + 10));
        assertEquals((short) Status.dnr(Status.INVALID_FIELD), log.getShort(64 + 12));
    }

    @Test
    void smartLogPerNamespaceAsLpaBit0Says() {
        host.bringUp(TestTargets.NQN, 1);
        ByteBuffer id = check(host.admin(InJvmHost.identify(0x01, 0))).dataBuffer();
        assertEquals(1, id.get(261) & 1, "LPA bit 0: SMART / Health log per namespace");
        check(host.io(InJvmHost.write(2, 0, new byte[512], 512)));
        // Host Write Commands (bytes 80–95): namespace 2 had the write, namespace 1 none, FFFFFFFFh all of them.
        assertEquals(1L, smart(2).getLong(80));
        assertEquals(0L, smart(1).getLong(80));
        assertEquals(1L, smart(0xFFFFFFFF).getLong(80));
    }

    private ByteBuffer smart(int nsid) {
        return check(host.admin(InJvmHost.getLogPage(0x02, nsid, 0, 512, false)))
                .dataBuffer();
    }

    @Test
    void noEntryForACommandBeforeEnable() {
        host.connectAdmin(TestTargets.NQN, 0);
        FakeRequest early = host.admin(InJvmHost.identify(0x01, 0));
        assertEquals(Status.dnr(Status.COMMAND_SEQUENCE_ERROR), early.status());
        assertFalse(early.more(), "a state error has no entry and no M (as nvmet)");
        host.enable();
        ByteBuffer log =
                check(host.admin(InJvmHost.getLogPage(0x01, 0, 0, 64, false))).dataBuffer();
        assertEquals(0L, log.getLong(0), "no entry");
    }
}
