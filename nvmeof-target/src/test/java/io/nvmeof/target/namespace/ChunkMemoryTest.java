package io.nvmeof.target.namespace;

import static io.nvmeof.target.namespace.NamespaceBytes.filled;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.MemoryObserver;
import io.nvmeof.core.spi.RegisteredMemory;
import io.nvmeof.target.DirectPlacementRequest;
import io.nvmeof.target.FakeRequest;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The memory-observer SPI (zero copy for RDMA): namespace chunks announced, found by handle, and let go exactly once. */
class ChunkMemoryTest {
    private static final int CHUNK = RamNamespace.CHUNK_SIZE;

    /** Records registrations like an RDMA listener would (handle = a fresh object per memory). */
    static final class Recorder implements MemoryObserver {
        int slot = -1;
        final Map<ByteBuffer, Object> live = new IdentityHashMap<>();
        final List<String> events = new ArrayList<>();
        int allocated;
        int freed;

        @Override
        public void attached(int slot) {
            this.slot = slot;
        }

        @Override
        public Object allocated(ByteBuffer memory) {
            assertTrue(memory.isDirect());
            Object handle = new Object();
            assertNull(live.put(memory, handle), "announced twice");
            allocated++;
            return handle;
        }

        @Override
        public void freeing(ByteBuffer memory, Object handle) {
            assertSame(live.remove(memory), handle, "freeing with the handle given for that memory");
            freed++;
        }
    }

    @Test
    void chunksAreAnnouncedBeforeUseAndFreedAfterTheLastRelease() {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        ChunkMemory memory = new ChunkMemory();
        Recorder obs = new Recorder();
        assertEquals(0, memory.attach(obs));
        assertEquals(0, obs.slot);
        assertEquals(1, obs.allocated, "the zero buffer is announced at attach");
        RamNamespace ns = new RamNamespace(1, 1L << 30, 4096, UUID.randomUUID(), false, budget, memory);

        assertEquals(Status.SUCCESS, ns.write(filled(8192, 5), 0, CHUNK - 4096, 8192)); // two chunks
        assertEquals(3, obs.allocated);
        assertEquals(3, memory.liveCount());

        // a read hands the chunk memory with its registration, and the unwritten part with the zero buffer's
        FakeRequest read = new FakeRequest().expect(3 * CHUNK).holdData();
        ns.read(read, 0, 3 * CHUNK);
        read.complete();
        assertEquals(3, read.segments().size());
        for (FakeRequest.Segment s : read.segments()) {
            RegisteredMemory rm = assertInstanceOf(RegisteredMemory.class, s.release());
            Object handle = rm.registration(obs.slot);
            ChunkMemory.Registered reg = (ChunkMemory.Registered) rm;
            assertSame(obs.live.get(reg.buffer), handle, "the transport finds its handle in the release");
            if (!s.source().isReadOnly()) {
                assertSame(reg.buffer, s.source(), "read data is the chunk memory itself");
            }
        }

        // deallocating the first chunk while the read still holds it: no freeing until the transport lets go
        ns.zero(0, CHUNK, true);
        assertEquals(0, obs.freed, "a chunk held by a transport stays registered");
        read.releaseData();
        assertEquals(1, obs.freed, "freed (deregistered) once the transport released it");
        assertEquals(CHUNK, budget.used());

        // detaching lets go of everything still live; later frees do not call it again
        memory.detach(obs);
        assertEquals(3, obs.freed);
        assertTrue(obs.live.isEmpty());
        ns.free();
        assertEquals(3, obs.freed);
        assertEquals(0, budget.used());
    }

    @Test
    void lateObserverSeesExistingChunksAndFailedRegistrationMeansCopy() {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        ChunkMemory memory = new ChunkMemory();
        RamNamespace ns = new RamNamespace(1, 1L << 24, 4096, UUID.randomUUID(), false, budget, memory);
        ns.write(filled(4096, 1), 0, 0, 4096);
        Recorder late = new Recorder();
        memory.attach(late);
        assertEquals(2, late.allocated, "the existing chunk and the zero buffer");
        MemoryObserver refusing = new MemoryObserver() {
            @Override
            public Object allocated(ByteBuffer m) {
                throw new IllegalStateException("device out of memory regions");
            }

            @Override
            public void freeing(ByteBuffer m, Object h) {
                throw new AssertionError("never called for a null handle");
            }
        };
        assertEquals(1, memory.attach(refusing));
        FakeRequest read = new FakeRequest().expect(4096).holdData();
        ns.read(read, 0, 4096);
        read.complete();
        RegisteredMemory rm = (RegisteredMemory) read.segments().get(0).release();
        assertFalse(rm.registration(0) == null);
        assertNull(rm.registration(1), "no handle: the transport copies");
        read.releaseData();
        memory.detach(refusing);
        memory.detach(late);
        assertEquals(2, late.freed);
        ns.free();
    }

    @Test
    void directPlacementWritesStraightIntoChunksAndReleasesEachOnce() {
        MemoryBudget budget = new MemoryBudget(1L << 30);
        ChunkMemory memory = new ChunkMemory();
        RamNamespace ns = new RamNamespace(1, 1L << 30, 4096, UUID.randomUUID(), false, budget, memory);
        byte[] data = new byte[CHUNK + 8192];
        new java.util.Random(3).nextBytes(data);
        DirectPlacementRequest w = new DirectPlacementRequest(data);
        assertEquals(Status.SUCCESS, ns.placeWrite(w, CHUNK - 4096, data.length));
        assertEquals(3, w.destinations.size(), "one destination per chunk crossed");
        for (DirectPlacementRequest.Destination d : w.destinations) {
            assertInstanceOf(Chunk.class, d.release());
            assertEquals(2, ((Chunk) d.release()).refCount(), "the table's reference and the destination's");
        }
        w.receiveData((r, status) -> ns.wrote(r.dataLength()));
        for (DirectPlacementRequest.Destination d : w.destinations) {
            assertEquals(1, ((Chunk) d.release()).refCount(), "only the table holds it after the transfer");
        }
        assertEquals(1, ns.counters().writeCommands());
        FakeRequest read = new FakeRequest().expect(data.length);
        ns.read(read, CHUNK - 4096, data.length);
        read.complete();
        assertArrayEquals(data, read.received());

        // budget spent part-way: Capacity Exceeded, and the chunks already named are released by the transport
        MemoryBudget small = new MemoryBudget(CHUNK);
        RamNamespace tight = new RamNamespace(2, 1L << 30, 4096, UUID.randomUUID(), false, small, memory);
        DirectPlacementRequest big = new DirectPlacementRequest(new byte[2 * CHUNK]);
        assertEquals(Status.CAPACITY_EXCEEDED, tight.placeWrite(big, 0, 2 * CHUNK));
        assertEquals(1, big.destinations.size());
        big.complete();
        assertEquals(1, ((Chunk) big.destinations.get(0).release()).refCount());
        tight.free();
        ns.free();
        assertEquals(0, budget.used());
        assertEquals(0, small.used());
    }
}
