package io.nvmeof.target.e2e;

import static io.nvmeof.target.e2e.RawTcpHost.expectOk;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.NvmOpcode;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.e2e.RawTcpHost.Completion;
import io.nvmeof.target.e2e.RawTcpHost.Pdu;
import io.nvmeof.target.e2e.RawTcpHost.TerminatedException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Bad input never brings the target down (docs/ARCHITECTURE.md, "Bad input"): while one controller does continuous verified I/O, other
 * connections send garbage and broken PDUs. Each bad connection must be terminated (a C2HTermReq, nvmeof-protocol.md §5.7, where the
 * transport sends one, then EOF); the good queues keep working, and a new connection still works afterwards.
 */
@Timeout(180)
class TcpBadInputTest {
    private static final int CLOSE_TIMEOUT_MILLIS = 10_000;

    private E2eTarget t;
    /** A second controller whose I/O queue is abused in one case; kept open until the end of the case. */
    private RawTcpHost bystander;

    @BeforeEach
    void start() throws Exception {
        t = new E2eTarget();
    }

    @AfterEach
    void stop() {
        if (bystander != null) {
            bystander.close();
        }
        t.close();
    }

    interface Abuse {
        void apply(RawTcpHost h) throws IOException;
    }

    /** Each case gets a fresh TCP connection (no ICReq yet) and does its damage. */
    private Map<String, Abuse> cases() {
        Map<String, Abuse> m = new LinkedHashMap<>();
        m.put("garbage before ICReq", h -> {
            byte[] junk = new byte[4096];
            new Random(42).nextBytes(junk);
            junk[0] = 0x5C;
            h.sendRaw(junk);
        });
        m.put("CapsuleCmd before ICReq", h -> h.sendCapsule(keepAliveSqe(), null));
        m.put("ICReq truncated, then half-close", h -> {
            h.sendRaw(java.util.Arrays.copyOf(icReq(0, 0), 60));
            h.shutdownOutput();
        });
        m.put("ICReq with PFV 1", h -> {
            byte[] b = icReq(0, 0);
            b[8] = 1;
            h.sendRaw(b);
        });
        m.put("ICReq with PLEN 200", h -> {
            byte[] b = icReq(0, 0);
            b[4] = (byte) 200;
            h.sendRaw(b);
            h.sendRaw(new byte[72]);
        });
        m.put("second ICReq", h -> {
            h.icReq(false, false);
            h.sendRaw(icReq(0, 0));
        });
        m.put("CapsuleCmd truncated, then half-close", h -> {
            h.icReq(false, false);
            byte[] pdu = capsule(keepAliveSqe(), 72, 72);
            h.sendRaw(java.util.Arrays.copyOf(pdu, 40));
            h.shutdownOutput();
        });
        m.put("oversized PLEN (2 GiB) on a CapsuleCmd", h -> {
            h.icReq(false, false);
            byte[] pdu = capsule(writeSqe(4096), 72, 0x7FFFFFF0);
            pdu[3] = 72; // PDO: data would follow the header
            h.sendRaw(pdu);
            h.sendRaw(new byte[4096]); // then go quiet; the target must not wait for 2 GiB
        });
        m.put("PLEN smaller than HLEN", h -> {
            h.icReq(false, false);
            h.sendRaw(capsule(keepAliveSqe(), 72, 16));
        });
        m.put("CapsuleCmd with HLEN 24", h -> {
            h.icReq(false, false);
            byte[] pdu = capsule(keepAliveSqe(), 72, 72);
            pdu[2] = 24;
            h.sendRaw(pdu);
        });
        m.put("wrong PDU type: C2HData from the host", h -> {
            h.icReq(false, false);
            h.sendPdu(RawTcpHost.C2H_DATA, RawTcpHost.FLAG_LAST_PDU, new byte[16], new byte[512]);
        });
        m.put("wrong PDU type: R2T from the host", h -> {
            h.icReq(false, false);
            h.sendPdu(RawTcpHost.R2T, 0, new byte[16], null);
        });
        m.put("unknown PDU type 0x0B", h -> {
            h.icReq(false, false);
            h.sendPdu(0x0B, 0, new byte[16], null);
        });
        m.put("header digest mismatch on Connect", h -> {
            h.icReq(true, false);
            h.corruptNextHeaderDigest = true;
            h.connectAdmin(E2eTarget.NQN);
        });
        m.put("HDGSTF missing although negotiated", h -> {
            h.icReq(true, false);
            byte[] pdu = capsule(keepAliveSqe(), 72, 72); // no digest, no flag
            h.sendRaw(pdu);
        });
        m.put("H2CData with an unknown TTAG on a connected I/O queue", h -> {
            // The I/O queue belongs to a second controller (bystander), so that the good controller is not involved
            // whether the target fails the queue or the whole controller (nvmet does the latter).
            h.icReq(false, false);
            expectOk(h.connectIo(1, bystander.cntlid(), E2eTarget.NQN), "I/O Connect");
            h.sendH2cData(0x1234, 0x0777, 0, new byte[4096], true);
        });
        m.put("H2CTermReq from the host", h -> {
            h.icReq(false, false);
            ByteBuffer psh = RawTcpHost.le(16).putShort(0, (short) 2);
            h.sendRaw(termReq(psh.array()));
        });
        return m;
    }

    private static RawTcpHost withQueues(RawTcpHost admin, int n) throws Exception {
        expectOk(admin.setNumberOfQueues(n), "Set Features Number of Queues");
        return admin;
    }

    @Test
    void badConnectionsAreTerminatedAndTheGoodOneCarriesOn() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger iterations = new AtomicInteger();
        AtomicReference<Throwable> goodFailure = new AtomicReference<>();
        // Number of Queues before the I/O queue connects: afterwards it is a Command Sequence Error.
        try (RawTcpHost admin = withQueues(t.admin(true), 2);
                RawTcpHost io = t.io(admin, 1, true)) {
            int goodCntlid = admin.cntlid();
            Thread good = new Thread(() -> verifiedIo(io, stop, iterations, goodFailure), "good-io");
            good.start();
            awaitProgress(iterations, 20, goodFailure);

            List<String> report = new ArrayList<>();
            List<String> failures = new ArrayList<>();
            bystander = t.admin(false);
            for (Map.Entry<String, Abuse> c : cases().entrySet()) {
                try (RawTcpHost bad = RawTcpHost.open(t.address)) {
                    String outcome = abuseAndExpectClose(bad, c.getValue());
                    report.add(c.getKey() + ": " + outcome);
                } catch (Throwable e) {
                    failures.add(c.getKey() + ": " + e);
                }
                if (goodFailure.get() != null) {
                    failures.add("the good queue failed during '" + c.getKey() + "': " + goodFailure.get());
                    break;
                }
                expectOk(admin.keepAlive(), "Keep Alive on the good admin queue after '" + c.getKey() + "'");
            }
            report.forEach(r -> System.out.println("bad input -> " + r));
            bystander.close();
            assertEquals(List.of(), failures, "bad connections that were not cleanly terminated");
            for (String r : report) {
                if (r.startsWith("header digest mismatch") && r.contains("C2HTermReq")) {
                    assertTrue(
                            r.contains("FES=0x03"), "a header digest error is FES 3 (nvmeof-protocol.md §5.7): " + r);
                }
            }

            // The good queue keeps going after all of that...
            awaitProgress(iterations, iterations.get() + 20, goodFailure);
            // ...and a brand-new controller works too.
            try (RawTcpHost admin2 = t.admin(false);
                    RawTcpHost io2 = t.io(admin2, 1, false)) {
                byte[] data = TcpDataPathTest.random(131072, 99);
                expectOk(io2.write(1, 2048, 4096, data), "write on a new connection");
                byte[] back = new byte[data.length];
                expectOk(io2.read(1, 2048, 4096, back), "read on a new connection");
                assertArrayEquals(data, back);
            }
            stop.set(true);
            good.join(30_000);
            assertNull(goodFailure.get(), () -> "the good queue failed: " + goodFailure.get());
            assertTrue(
                    t.target.controllers().stream().anyMatch(c -> c.cntlid() == goodCntlid && !c.isClosed()),
                    "the good controller is gone");
            System.out.println("good queue: " + iterations.get() + " verified write+read pairs");
            admin.shutdown();
        } finally {
            stop.set(true);
        }
        t.awaitNoControllers(10_000);
        t.assertNoErrorsLogged();
    }

    @Test
    void abruptResetsMidCommandReleaseEverything() throws Exception {
        // RST while the target waits for H2CData (R2T outstanding), and while in-capsule data is half sent.
        try (RawTcpHost admin = t.admin(false)) {
            for (int round = 0; round < 20; round++) {
                RawTcpHost io = t.io(admin, 1, round % 2 == 0);
                if (round % 3 == 0) {
                    byte[] sqe = writeSqeWith(SglDescriptor.ID_TCP_TRANSPORT, 131072);
                    io.sendCapsule(sqe, null);
                    Pdu r2t = io.readPdu();
                    assertEquals(RawTcpHost.R2T, r2t.type(), "R2T expected: " + r2t);
                    io.sendH2cData(r2t.u16(8), r2t.u16(10), 0, new byte[4096], false);
                } else {
                    byte[] pdu = capsule(writeSqeWith(SglDescriptor.ID_IN_CAPSULE, 8192), 72, 72 + 8192);
                    pdu[3] = 72;
                    io.sendRaw(pdu);
                    io.sendRaw(new byte[3000]);
                }
                io.abort();
                // The I/O queue is gone; the controller and its admin queue live on (nvmeof-protocol.md §7.3 error
                // recovery reconnects).
                E2eTarget.await(
                        () -> t.target.controllers().get(0).ioQueueCount() == 0,
                        10_000,
                        () -> "I/O queue still connected after RST");
                expectOk(admin.keepAlive(), "Keep Alive after RST round " + round);
            }
            try (RawTcpHost io = t.io(admin, 1, false)) {
                byte[] data = TcpDataPathTest.random(131072, 3);
                expectOk(io.write(1, 0, 4096, data), "write after the resets");
                byte[] back = new byte[data.length];
                expectOk(io.read(1, 0, 4096, back), "read after the resets");
                assertArrayEquals(data, back);
            }
        }
        t.awaitNoControllers(10_000);
        t.assertNoErrorsLogged();
    }

    @Test
    void dataDigestErrorInCapsuleFailsCleanly() throws Exception {
        // nvmet treats a data digest error as fatal to the queue; completing the command with Data Transfer Error
        // and keeping the queue is also sound. Either is accepted; hanging or taking other queues down is not.
        try (RawTcpHost admin = t.admin(true);
                RawTcpHost io = t.io(admin, 1, true)) {
            io.corruptNextDataDigest = true;
            String outcome;
            try {
                Completion c = io.write(1, 0, 4096, new byte[4096]);
                assertTrue(Status.is(c.status(), Status.DATA_TRANSFER_ERROR), "a corrupted write succeeded: " + c);
                outcome = "completed with " + Status.toString(c.status());
            } catch (TerminatedException e) {
                io.readUntilClosed(CLOSE_TIMEOUT_MILLIS);
                outcome = "queue terminated, " + e.getMessage();
            } catch (IOException e) {
                outcome = "queue closed (" + e.getClass().getSimpleName() + ")";
            }
            System.out.println("data digest error -> " + outcome);
            expectOk(admin.keepAlive(), "the admin queue survives");
        }
        t.assertNoErrorsLogged();
    }

    // ---------------------------------------------------------------- helpers

    private static String abuseAndExpectClose(RawTcpHost bad, Abuse abuse) throws IOException {
        String termination = null;
        try {
            abuse.apply(bad);
        } catch (TerminatedException e) {
            termination = e.getMessage();
        } catch (IOException e) {
            termination = "closed while sending/reading (" + e.getClass().getSimpleName() + ": " + e.getMessage() + ")";
        }
        List<Pdu> seen;
        try {
            seen = bad.readUntilClosed(CLOSE_TIMEOUT_MILLIS);
        } catch (java.net.SocketException e) {
            seen = List.of();
        }
        for (Pdu p : seen) {
            if (p.type() != RawTcpHost.C2H_TERM_REQ) {
                // A CapsuleResp or ICResp before the fault was detected is legitimate only for the cases that
                // completed something first; anything else is not.
                if (p.type() != RawTcpHost.ICRESP && p.type() != RawTcpHost.CAPSULE_RESP) {
                    throw new AssertionError("unexpected " + p + " before the close");
                }
                continue;
            }
            if (p.hlen() != 24 || p.plen() < 24 || p.plen() > 152) {
                throw new AssertionError("malformed C2HTermReq (nvmeof-protocol.md §5.7: HLEN 24, PLEN 24..152): " + p);
            }
            int fes = p.u16(8);
            if (fes < 1 || fes > 6) {
                throw new AssertionError("C2HTermReq with an undefined FES " + fes);
            }
            termination = String.format(
                    "C2HTermReq FES=0x%02x FEI=0x%08x, %d header bytes copied", fes, p.u32(10), p.plen() - 24);
        }
        return (termination != null ? termination : "closed without a TermReq") + ", then EOF";
    }

    private static void verifiedIo(
            RawTcpHost io, AtomicBoolean stop, AtomicInteger iterations, AtomicReference<Throwable> failure) {
        Random r = new Random(7);
        try {
            while (!stop.get()) {
                int blocks = 1 + r.nextInt(40); // 4 KiB .. 160 KiB: both in-capsule and R2T
                long slba = 8192 + r.nextInt(4096); // LBAs 8192..12327 belong to the good queue
                byte[] data = TcpDataPathTest.random(blocks * 4096, r.nextLong());
                expectOk(io.write(1, slba, 4096, data), "good write");
                byte[] back = new byte[data.length];
                expectOk(io.read(1, slba, 4096, back), "good read");
                if (!java.util.Arrays.equals(data, back)) {
                    throw new AssertionError("good queue read back different data at LBA " + slba);
                }
                iterations.incrementAndGet();
            }
        } catch (Throwable e) {
            failure.set(e);
        }
    }

    private static void awaitProgress(AtomicInteger iterations, int target, AtomicReference<Throwable> failure)
            throws InterruptedException {
        E2eTarget.await(
                () -> iterations.get() >= target || failure.get() != null,
                60_000,
                () -> "good queue stuck at " + iterations.get() + " iterations");
        assertNull(failure.get(), () -> "the good queue failed: " + failure.get());
    }

    static byte[] icReq(int dgst, int hpda) {
        ByteBuffer b = RawTcpHost.le(128);
        b.put(0, (byte) RawTcpHost.ICREQ).put(2, (byte) 128).putInt(4, 128);
        b.put(10, (byte) hpda).put(11, (byte) dgst);
        return b.array();
    }

    /** A CapsuleCmd without digests: CH(type 4, HLEN {@code hlen}, PDO 0, PLEN {@code plen}) + the SQE. */
    static byte[] capsule(byte[] sqe, int hlen, int plen) {
        ByteBuffer b = RawTcpHost.le(8 + sqe.length);
        b.put(0, (byte) RawTcpHost.CAPSULE_CMD)
                .put(2, (byte) hlen)
                .put(3, (byte) 0)
                .putInt(4, plen);
        b.put(8, sqe);
        return b.array();
    }

    static byte[] termReq(byte[] psh) {
        ByteBuffer b = RawTcpHost.le(24);
        b.put(0, (byte) RawTcpHost.H2C_TERM_REQ).put(2, (byte) 24).putInt(4, 24);
        b.put(8, psh);
        return b.array();
    }

    static byte[] keepAliveSqe() {
        ByteBuffer b = RawTcpHost.le(64);
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(b, 0);
        sqe.opcode(AdminOpcode.KEEP_ALIVE.code()).flags(0x40).cid(0x0042);
        sqe.sgl().set(SglDescriptor.ID_TCP_TRANSPORT, 0, 0);
        return b.array();
    }

    static byte[] writeSqe(int bytes) {
        return writeSqeWith(SglDescriptor.ID_IN_CAPSULE, bytes);
    }

    static byte[] writeSqeWith(int sglId, int bytes) {
        ByteBuffer b = RawTcpHost.le(64);
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(b, 0);
        sqe.opcode(NvmOpcode.WRITE.code())
                .flags(0x40)
                .cid(0x0043)
                .nsid(1)
                .slba(0)
                .nlb(bytes / 4096 - 1);
        sqe.sgl().set(sglId, 0, bytes);
        return b.array();
    }
}
