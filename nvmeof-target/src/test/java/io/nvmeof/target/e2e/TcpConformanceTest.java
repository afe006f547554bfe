package io.nvmeof.target.e2e;

import static io.nvmeof.target.e2e.RawTcpHost.expectOk;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Issue 9's interop cases over real NVMe/TCP on loopback: an all-zero SGL1, and a fused pair whose data comes by R2T. */
@Timeout(120)
class TcpConformanceTest {
    private E2eTarget t;

    @BeforeEach
    void start() throws Exception {
        t = new E2eTarget();
    }

    @AfterEach
    void stop() {
        t.close();
    }

    private static byte[] sqe(int cid, int flags, Consumer<SubmissionQueueEntry> fill) {
        ByteBuffer b = E2eTarget.le(new byte[SubmissionQueueEntry.LENGTH]);
        SubmissionQueueEntry s = new SubmissionQueueEntry();
        s.wrap(b, 0);
        fill.accept(s);
        s.cid(cid).flags(flags);
        return b.array();
    }

    private static CompletionQueueEntry response(RawTcpHost h) throws Exception {
        RawTcpHost.Pdu p = h.readPdu();
        assertEquals(RawTcpHost.CAPSULE_RESP, p.type(), "expected a CapsuleResp: " + p);
        CompletionQueueEntry cqe = new CompletionQueueEntry();
        cqe.wrap(p.header(), 8);
        return cqe;
    }

    @Test
    void noDataCommandsWithAnAllZeroSgl1Succeed() throws Exception {
        try (RawTcpHost admin = t.admin(false);
                RawTcpHost io = t.io(admin, 1, false)) {
            // SGL1 all zero: type 0h (Data Block), length 0, as some third-party hosts send it.
            admin.sendCapsule(sqe(0x0101, SubmissionQueueEntry.FLAGS_SGL, s -> s.opcode(0x18)), null); // Keep Alive
            assertEquals(0, response(admin).status());
            admin.sendCapsule(
                    sqe(
                            0x0102,
                            SubmissionQueueEntry.FLAGS_SGL,
                            s -> s.opcode(0x7F).fctype(0x04).property(1, 0, 0)),
                    null); // Property Get CAP
            CompletionQueueEntry cap = response(admin);
            assertEquals(0, cap.status());
            assertTrue((cap.result64() & (1L << 43)) != 0, "CAP.CSS bit 43");
            io.sendCapsule(
                    sqe(
                            0x0103,
                            SubmissionQueueEntry.FLAGS_SGL,
                            s -> s.opcode(0x00).nsid(1)),
                    null); // Flush
            assertEquals(0, response(io).status());
            // A data command with no data is still refused by its own length rule.
            admin.sendCapsule(
                    sqe(
                            0x0104,
                            SubmissionQueueEntry.FLAGS_SGL,
                            s -> s.opcode(0x06).cdw(10, 1)),
                    null); // Identify
            assertEquals(
                    Status.dnr(Status.DATA_SGL_LENGTH_INVALID) | Status.MORE_BIT,
                    response(admin).status(),
                    "with More: an Error Information entry was made");
            t.assertNoErrorsLogged();
        }
    }

    @Test
    void fusedCompareAndWriteWithDataByR2t() throws Exception {
        try (RawTcpHost admin = t.admin(false);
                RawTcpHost io = t.io(admin, 1, false)) {
            int size = 32768; // beyond the 16 KiB in-capsule size: both commands' data come by R2T/H2CData
            byte[] old = new byte[size];
            Arrays.fill(old, (byte) 0x5A);
            byte[] fresh = new byte[size];
            Arrays.fill(fresh, (byte) 0xC3);
            expectOk(io.write(1, 200, 4096, old), "write");
            int nlb = size / 4096 - 1;
            Map<Integer, byte[]> data = new HashMap<>();
            data.put(0x0201, old);
            data.put(0x0202, fresh);
            io.sendCapsule(
                    sqe(0x0201, SubmissionQueueEntry.FLAGS_SGL | 1, s -> {
                        s.opcode(0x05).nsid(1).slba(200).nlb(nlb);
                        s.sgl().set(SglDescriptor.ID_TCP_TRANSPORT, 0, size);
                    }),
                    null);
            io.sendCapsule(
                    sqe(0x0202, SubmissionQueueEntry.FLAGS_SGL | 2, s -> {
                        s.opcode(0x01).nsid(1).slba(200).nlb(nlb);
                        s.sgl().set(SglDescriptor.ID_TCP_TRANSPORT, 0, size);
                    }),
                    null);
            Map<Integer, Integer> statuses = new HashMap<>();
            while (statuses.size() < 2) {
                RawTcpHost.Pdu p = io.readPdu();
                if (p.type() == RawTcpHost.R2T) {
                    int cid = p.u16(8);
                    int ttag = p.u16(10);
                    int r2to = p.u32(12);
                    int r2tl = p.u32(16);
                    byte[] d = data.get(cid);
                    io.sendH2cData(cid, ttag, r2to, Arrays.copyOfRange(d, r2to, r2to + r2tl), true);
                } else {
                    assertEquals(RawTcpHost.CAPSULE_RESP, p.type(), String.valueOf(p));
                    CompletionQueueEntry cqe = new CompletionQueueEntry();
                    cqe.wrap(p.header(), 8);
                    statuses.put(cqe.cid(), cqe.status());
                    if (cqe.cid() == 0x0202) {
                        assertTrue(statuses.containsKey(0x0201), "the Compare completes before the Write");
                    }
                }
            }
            assertEquals(0, statuses.get(0x0201));
            assertEquals(0, statuses.get(0x0202));
            byte[] back = new byte[size];
            expectOk(io.read(1, 200, 4096, back), "read");
            assertArrayEquals(fresh, back);
            t.assertNoErrorsLogged();
        }
    }
}
