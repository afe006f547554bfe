package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The vendor-specific performance log page, LID 0xC0: layout, and counters that grow with work. */
class PerfStatsLogPageTest {
    private static final int BS = 4096;
    private final NvmeTarget target = TestTargets.standard();
    private final InJvmHost host = new InJvmHost(target);

    @AfterEach
    void tearDown() {
        host.close();
        target.close();
    }

    private ByteBuffer page() {
        ByteBuffer b =
                check(host.admin(InJvmHost.getLogPage(0xC0, 0, 0, 512, false))).dataBuffer();
        return b.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    @Test
    void layout() {
        host.bringUp(TestTargets.NQN, 1);
        ByteBuffer b = page();
        byte[] magic = new byte[4];
        b.get(0, magic);
        assertEquals("NVOJ", new String(magic, StandardCharsets.US_ASCII));
        assertEquals(1, b.getShort(4), "version");
        assertEquals(512, b.getShort(6), "page size");
        assertTrue(b.getLong(24) > 0, "process CPU ns");
        assertTrue(
                b.getLong(8) + b.getLong(16) <= b.getLong(24) + 4 * b.getLong(56) + 100_000_000L,
                "user + system (tick resolution) is about the precise total");
        assertTrue(b.getLong(32) > 0, "monotonic clock");
        assertEquals(Runtime.getRuntime().availableProcessors(), b.getInt(48));
        assertEquals((int) ProcessHandle.current().pid(), b.getInt(52));
        assertEquals(10_000_000L, b.getLong(56), "tick resolution");
        for (int i = 80; i < 512; i++) {
            assertEquals(0, b.get(i), "reserved byte " + i);
        }
        // a partial read at an offset, as any host may do
        ByteBuffer tail = check(host.admin(InJvmHost.getLogPage(0xC0, 0, 40, 8, false)))
                .dataBuffer()
                .duplicate()
                .order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0, tail.getLong(0), "no commands yet");
    }

    @Test
    void countersGrow() {
        host.bringUp(TestTargets.NQN, 1);
        ByteBuffer before = page();
        byte[] data = new byte[8 * BS];
        data[5] = 7;
        for (int i = 0; i < 10; i++) {
            check(host.io(InJvmHost.write(1, 16L * i, data, BS)));
            assertArrayEquals(
                    data, check(host.io(InJvmHost.read(1, 16L * i, 8, BS))).received());
        }
        // burn a little CPU so the process CPU counter visibly moves
        long x = 0;
        long until = System.nanoTime() + 30_000_000L;
        while (System.nanoTime() < until) {
            x += Long.numberOfTrailingZeros(x + System.nanoTime());
        }
        assertTrue(x >= 0);
        ByteBuffer after = page();
        assertEquals(20, after.getLong(40) - before.getLong(40), "10 writes + 10 reads completed");
        assertEquals(10L * 8 * BS, after.getLong(64) - before.getLong(64), "bytes read");
        assertEquals(10L * 8 * BS, after.getLong(72) - before.getLong(72), "bytes written");
        assertTrue(after.getLong(24) > before.getLong(24), "process CPU grew");
        assertTrue(after.getLong(32) > before.getLong(32), "clock grew");
    }

    @Test
    void discoveryControllerDoesNotHaveIt() {
        check(host.connectAdmin(io.nvmeof.core.command.Nqn.DISCOVERY, 0));
        host.enable();
        assertEquals(
                Status.dnr(Status.INVALID_FIELD),
                host.admin(InJvmHost.getLogPage(0xC0, 0, 0, 512, false)).status());
    }
}
