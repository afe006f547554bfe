package io.nvmeof.initiator.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.initiator.BlockDevice;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.ControllerIdentity;
import io.nvmeof.initiator.DiscoveryEntry;
import io.nvmeof.initiator.DiscoveryLog;
import io.nvmeof.initiator.LbaRange;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeStatusException;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.transport.rdma.RdmaTransport;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Our initiator against our target over NVMe/RDMA, both in this JVM, through the software RNIC: the bring-up, what
 * Identify says an RDMA port supports, every I/O command, data verified byte for byte from 512 B to 1 MiB (in-capsule
 * and keyed), several queues from several threads, unaligned block-device I/O, discovery, a refused host, zero-copy
 * host buffers and how busy polling maps onto the queue threads.
 */
class RdmaEndToEndTest {
    @RegisterExtension
    static NvmeofTargetExtension target = NvmeofTargetExtension.builder()
            .transport("rdma")
            .namespace("64M")
            .blockSize(512)
            .build();

    static final String ALLOWED = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000a110e";

    @RegisterExtension
    static NvmeofTargetExtension guarded = NvmeofTargetExtension.builder()
            .transport("rdma")
            .namespace("4M")
            .nqn("nqn.2024-01.io.nvmeof:guarded")
            .allowHost(ALLOWED)
            .build();

    static ByteBuffer pattern(int bytes, long seed, boolean direct) {
        ByteBuffer b = direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes);
        fill(b, seed);
        return b;
    }

    static void fill(ByteBuffer b, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) r.nextInt(256));
        }
    }

    static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.capacity()];
        b.get(0, out);
        return out;
    }

    @Test
    void bringsUpAndIdentifiesAnRdmaController() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=2"))) {
            assertEquals("rdma", c.uri().transport());
            ControllerIdentity id = c.identity();
            assertTrue(
                    (id.sgls() & 0x4) != 0, "SGLS bit 2: keyed SGL data block (0x" + Long.toHexString(id.sgls()) + ")");
            assertTrue((id.sgls() & 0x00100000) != 0, "SGLS bit 20: offset (in-capsule) SGLs");
            assertEquals(260, id.ioccsz(), "IOCCSZ: 64-byte SQE + 4096 bytes in-capsule, in 16-byte units");
            assertEquals(1, id.iorcsz());
            assertEquals(8, id.mdts(), "MDTS 8: 1 MiB");
            assertEquals(4096, c.maxInCapsuleData());
            assertEquals(2, c.ioQueueCount());
            Namespace ns = c.namespace();
            assertEquals(512, ns.blockSize());
            assertEquals(64L << 20, ns.sizeBytes());
            assertEquals(1 << 20, (long) ns.maxBlocksPerCommand() * ns.blockSize(), "MDTS bounds one command");
            assertTrue(c.isOpen());
        }
    }

    @Test
    void everyIoCommand() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=1"))) {
            Namespace ns = c.namespace();
            ByteBuffer data = pattern(8 * 512, 1, true);
            ns.write(1000, 8, data);
            ByteBuffer back = ByteBuffer.allocateDirect(8 * 512);
            ns.readAsync(1000, 8, back).get(10, TimeUnit.SECONDS);
            assertArrayEquals(bytes(data), bytes(back));

            ns.compare(1000, 8, data); // equal: success
            ByteBuffer other = pattern(8 * 512, 1, true);
            other.put(4000, (byte) (other.get(4000) ^ 0x10));
            NvmeStatusException e = assertThrows(NvmeStatusException.class, () -> ns.compare(1000, 8, other));
            assertEquals(Status.SCT_MEDIA, e.sct());
            assertEquals(0x85, e.sc(), "Compare Failure");
            assertTrue(Status.is(e.status(), Status.COMPARE_FAILURE), e.getMessage());

            ns.flush();
            ns.writeZeroes(1002, 2);
            ns.read(1000, 8, back);
            for (int i = 0; i < back.capacity(); i++) {
                byte want = i >= 1024 && i < 2048 ? 0 : data.get(i);
                assertEquals(want, back.get(i), "byte " + i + " after Write Zeroes of LBAs 1002-1003");
            }
            ns.deallocate(new LbaRange(1000, 8));
            ns.read(1000, 8, back);
            for (int i = 0; i < back.capacity(); i++) {
                assertEquals(0, back.get(i), "deallocated blocks read as zeroes");
            }
            NvmeStatusException oor = assertThrows(
                    NvmeStatusException.class, () -> ns.read(ns.blockCount() - 1, 2, ByteBuffer.allocateDirect(1024)));
            assertTrue(Status.is(oor.status(), Status.LBA_OUT_OF_RANGE), oor.getMessage());
        }
    }

    @Test
    void verifiedDataFrom512BytesTo1MiB() throws Exception {
        int[] sizes = {512, 1024, 3584, 4096, 4608, 8192, 65536, 131072 + 512, 1 << 20};
        try (Controller c = Nvme.connect(target.uri("queues=1"))) {
            Namespace ns = c.namespace();
            long lba = 0;
            for (int size : sizes) {
                for (boolean direct : new boolean[] {true, false}) {
                    long inCapsuleBefore = RdmaTransport.hostInCapsuleBytes();
                    ByteBuffer src = pattern(size, size * 7L + (direct ? 1 : 2), direct);
                    ns.write(lba, size / 512, src);
                    long inCapsule = RdmaTransport.hostInCapsuleBytes() - inCapsuleBefore;
                    assertEquals(
                            size <= 4096 ? size : 0,
                            inCapsule,
                            size + "-byte write: in the capsule only up to " + "IOCCSZ×16−64 = 4096 bytes");
                    ByteBuffer dst = direct ? ByteBuffer.allocateDirect(size) : ByteBuffer.allocate(size);
                    ns.read(lba, size / 512, dst);
                    assertArrayEquals(bytes(src), bytes(dst), size + " bytes, " + (direct ? "direct" : "heap"));
                    lba += size / 512 + 3;
                }
            }
            // A command above MDTS is refused before it goes out.
            assertThrows(
                    IllegalArgumentException.class,
                    () -> ns.write(0, (2 << 20) / 512, ByteBuffer.allocateDirect(2 << 20)));
        }
    }

    @Test
    void severalQueuesFromSeveralThreads() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=4&depth=32"))) {
            assertEquals(4, c.ioQueueCount());
            Namespace ns = c.namespace();
            int threads = 8;
            int perThread = 64;
            int blocks = 16; // 8 KiB: keyed
            List<Thread> ts = new ArrayList<>();
            List<Throwable> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            Set<String> queueThreads = java.util.concurrent.ConcurrentHashMap.newKeySet();
            for (int t = 0; t < threads; t++) {
                int id = t;
                ts.add(new Thread(
                        () -> {
                            try {
                                long base = 20_000 + (long) id * perThread * blocks;
                                List<CompletableFuture<Void>> fs = new ArrayList<>();
                                List<ByteBuffer> srcs = new ArrayList<>();
                                for (int i = 0; i < perThread; i++) {
                                    ByteBuffer b = pattern(blocks * 512, id * 1000L + i, true);
                                    srcs.add(b);
                                    fs.add(ns.writeAsync(base + (long) i * blocks, blocks, b)
                                            .thenRun(() -> queueThreads.add(
                                                    Thread.currentThread().getName())));
                                }
                                CompletableFuture.allOf(fs.toArray(CompletableFuture[]::new))
                                        .get(30, TimeUnit.SECONDS);
                                for (int i = 0; i < perThread; i++) {
                                    ByteBuffer d = ByteBuffer.allocateDirect(blocks * 512);
                                    ns.read(base + (long) i * blocks, blocks, d);
                                    assertArrayEquals(bytes(srcs.get(i)), bytes(d), "thread " + id + " I/O " + i);
                                }
                            } catch (Throwable e) {
                                errors.add(e);
                            }
                        },
                        "rdma-e2e-" + t));
            }
            ts.forEach(Thread::start);
            for (Thread t : ts) {
                t.join(60_000);
            }
            assertEquals(List.of(), errors);
            // A stage added after completion runs on the caller; the others ran on the queues' own threads.
            long onQueues = queueThreads.stream()
                    .filter(n -> n.startsWith("nvme-rdma-host-q"))
                    .count();
            assertTrue(onQueues >= 2, "completions came on several queue threads: " + queueThreads);
        }
    }

    @Test
    void blockDeviceUnalignedIo() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=2"))) {
            BlockDevice dev = c.namespace().blockDevice();
            long region = 40L << 20;
            int span = 3 << 20;
            byte[] model = new byte[span];
            SplittableRandom r = new SplittableRandom(7);
            for (int i = 0; i < 60; i++) {
                int len = 1 + r.nextInt(i % 10 == 0 ? 1_500_000 : 9000);
                int off = r.nextInt(span - len);
                byte[] d = new byte[len];
                for (int j = 0; j < len; j++) {
                    d[j] = (byte) r.nextInt(256);
                }
                ByteBuffer src = i % 2 == 0
                        ? ByteBuffer.wrap(d)
                        : ByteBuffer.allocateDirect(len).put(d).flip();
                dev.write(region + off, src);
                System.arraycopy(d, 0, model, off, len);
            }
            ByteBuffer all = ByteBuffer.allocateDirect(span);
            dev.read(region, all);
            assertArrayEquals(model, bytes(all));
            ByteBuffer odd = ByteBuffer.allocate(1001);
            dev.read(region + 12_345, odd);
            assertArrayEquals(java.util.Arrays.copyOfRange(model, 12_345, 13_346), odd.array());
        }
    }

    @Test
    void discoveryOverRdma() throws Exception {
        DiscoveryLog log = Nvme.discover(target.discoveryUri());
        DiscoveryEntry e = log.nvmSubsystems().stream()
                .filter(x -> x.subnqn().equals(target.nqn()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("no entry for " + target.nqn() + ": " + log));
        assertEquals(DiscoveryEntry.TRTYPE_RDMA, e.trtype(), "TRTYPE 1: RDMA");
        assertEquals("rdma", e.transportName());
        assertEquals(1, e.rdmaQptype(), "QPTYPE reliable connected");
        assertEquals(1, e.rdmaPrtype(), "PRTYPE not specified");
        assertEquals(1, e.rdmaCms(), "CMS RDMA_CM");
        assertEquals("127.0.0.1", e.traddr());
        assertEquals(Integer.toString(target.port()), e.trsvcid());
        try (Controller c = Nvme.connect(NvmeUri.parse(target.discoveryUri()), e, ConnectOptions.defaults())) {
            assertEquals("rdma", c.uri().transport());
            ByteBuffer b = pattern(4096, 99, true);
            c.namespace().write(7, 8, b);
            ByteBuffer d = ByteBuffer.allocateDirect(4096);
            c.namespace().read(7, 8, d);
            assertArrayEquals(bytes(b), bytes(d));
        }
    }

    @Test
    void aHostNotOnTheAllowListGetsConnectInvalidHost() throws Exception {
        NvmeStatusException e = assertThrows(
                NvmeStatusException.class,
                () -> Nvme.connect(
                        guarded.uri("hostnqn=nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-00000000bad0")));
        assertTrue(Status.is(e.status(), Status.CONNECT_INVALID_HOST), e.getMessage());
        try (Controller c = Nvme.connect(guarded.uri("hostnqn=" + ALLOWED))) {
            assertEquals(guarded.nqn(), c.subsystemNqn());
        }
    }

    @Test
    void buffersFromTheControllerMoveWithNoCopyOnTheHost() throws Exception {
        try (Controller c = Nvme.connect(target.uri("queues=2"))) {
            Namespace ns = c.namespace();
            ByteBuffer big = c.allocateBuffer(1 << 20);
            assertTrue(big.isDirect());
            assertEquals(ByteOrder.LITTLE_ENDIAN, big.order());
            ByteBuffer blocks = ns.allocateBuffer(256);
            assertEquals(256 * 512, blocks.capacity());
            fill(big, 5);
            long copied = RdmaTransport.hostCopiedBytes();
            long zero = RdmaTransport.hostZeroCopyBytes();
            long inCapsule = RdmaTransport.hostInCapsuleBytes();
            long moved = 0;
            // The whole buffer, a position inside it, a slice and a duplicate: all named directly (keyed SGL).
            ns.write(30_000, 2048, big);
            moved += 1 << 20;
            big.position(65536);
            ns.write(40_000, 128, big);
            moved += 65536;
            big.position(0);
            ByteBuffer slice = big.slice(8192, 16384);
            ns.write(50_000, 32, slice);
            moved += 16384;
            ns.read(30_000, 256, blocks);
            moved += 256 * 512;
            ByteBuffer dup = big.duplicate();
            dup.position(8192);
            ns.read(50_000, 32, dup); // the slice's blocks, read back into the very bytes they came from
            moved += 16384;
            // From another thread (another I/O queue, since the queue is chosen by thread), concurrently.
            CompletableFuture<Void> other = CompletableFuture.runAsync(() -> {
                try {
                    ns.read(50_000, 32, blocks.slice(0, 16384));
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            other.get(10, TimeUnit.SECONDS);
            moved += 16384;
            assertEquals(0, RdmaTransport.hostCopiedBytes() - copied, "no host copy for buffers from allocateBuffer");
            assertEquals(0, RdmaTransport.hostInCapsuleBytes() - inCapsule, "none of these writes went in-capsule");
            assertEquals(moved, RdmaTransport.hostZeroCopyBytes() - zero, "every byte moved by RDMA from/to them");
            // The data is right.
            ByteBuffer check = ByteBuffer.allocateDirect(1 << 20);
            ns.read(30_000, 2048, check);
            assertArrayEquals(bytes(big.duplicate().position(0)), bytes(check));
            ByteBuffer exp = ByteBuffer.allocate(16384).put(0, big, 8192, 16384);
            assertArrayEquals(exp.array(), bytes(blocks.slice(0, 16384)));
            // A buffer of the caller's own costs one copy on the host.
            long before = RdmaTransport.hostCopiedBytes();
            ns.read(30_000, 16, ByteBuffer.allocateDirect(8192));
            assertEquals(8192, RdmaTransport.hostCopiedBytes() - before);
        }
    }

    @Test
    void anOrderlyDisconnectIsNoFaultOnEitherSide() throws Exception {
        // The flush of a QP that the peer disconnected can overtake the CM's disconnect event; it used to be
        // reported as "work completion error WR_FLUSH_ERR ...; closing the queue" (a WARNING) on every orderly close.
        java.util.logging.Logger rdmaLog = java.util.logging.Logger.getLogger("io.nvmeof.transport.rdma");
        List<String> warnings = java.util.Collections.synchronizedList(new ArrayList<>());
        java.util.logging.Handler h = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                if (r.getLevel().intValue() >= java.util.logging.Level.WARNING.intValue()) {
                    warnings.add(r.getLoggerName() + ": " + r.getMessage());
                }
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        rdmaLog.addHandler(h);
        try {
            for (int i = 0; i < 5; i++) {
                try (Controller c = Nvme.connect(target.uri("queues=2"))) {
                    c.namespace().read(0, 8, ByteBuffer.allocateDirect(4096));
                }
            }
            Thread.sleep(200); // the target's queue threads finish closing
        } finally {
            rdmaLog.removeHandler(h);
        }
        assertEquals(List.of(), warnings);
    }

    @Test
    void busyPollingSpinsTheQueueThreadOtherwiseItSleeps() throws Exception {
        for (boolean hipri : new boolean[] {true, false}) {
            Set<Thread> before = Thread.getAllStackTraces().keySet();
            try (Controller c = Nvme.connect(target.uri("queues=1" + (hipri ? "&hipri=1" : "")))) {
                c.namespace().read(0, 1, ByteBuffer.allocateDirect(512));
                List<Thread> io = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> !before.contains(t) && t.getName().startsWith("nvme-rdma-host-q1-"))
                        .collect(Collectors.toList());
                assertEquals(1, io.size(), io::toString);
                Thread.sleep(100); // idle
                int runnable = 0;
                for (int i = 0; i < 20; i++) {
                    runnable += io.get(0).getState() == Thread.State.RUNNABLE ? 1 : 0;
                    Thread.sleep(5);
                }
                if (hipri) {
                    assertEquals(20, runnable, "hipri=1: the idle I/O queue thread spins");
                } else {
                    assertNotEquals(20, runnable, "without hipri the idle I/O queue thread waits");
                }
            }
        }
    }
}
