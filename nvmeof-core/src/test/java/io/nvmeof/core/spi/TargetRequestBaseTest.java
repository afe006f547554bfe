package io.nvmeof.core.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.NvmOpcode;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The state every transport's request shares: begin, the data request, the complete-once rule. */
class TargetRequestBaseTest {
    /** A request that records what the base hands to the transport. */
    private static final class Slot extends TargetRequestBase {
        int transfers;
        int responses;

        @Override
        protected void transferData(DataReceiver receiver) {
            transfers++;
            receivingData(receiver);
        }

        @Override
        protected void sendResponse() {
            responses++;
            state(State.FREE);
        }

        @Override
        public ByteBuffer data() {
            return EMPTY;
        }

        @Override
        public void addData(ByteBuffer source, int offset, int length, DataRelease release) {}
    }

    @Test
    void beginZeroesTheResponseAndFillsCidAndDirection() {
        Slot s = new Slot();
        s.response().dw0(7).status(0x1234);
        s.transportStatus(5).dataLength(512).inCapsuleData(true);
        s.command().opcode(NvmOpcode.WRITE.code()).cid(42);
        s.begin();
        assertSame(TargetRequestBase.State.WITH_CORE, s.state());
        assertEquals(42, s.cid());
        assertEquals(42, s.response().cid());
        assertEquals(0, s.response().dw0());
        assertEquals(0, s.response().status());
        assertTrue(s.hostToController());
        assertEquals(0, s.transportStatus());
        assertEquals(0, s.dataLength());
        assertFalse(s.inCapsuleData());
        s.command().opcode(NvmOpcode.READ.code());
        s.begin();
        assertFalse(s.hostToController());
    }

    @Test
    void arrivalIsTheClockAtBeginOrTheTransportsReading() {
        Slot s = new Slot();
        long t0 = System.nanoTime();
        s.begin();
        long t1 = System.nanoTime();
        assertTrue(s.arrivalNanos() >= t0 && s.arrivalNanos() <= t1, "begin() reads the clock");
        s.begin(t0 - 5_000);
        assertEquals(t0 - 5_000, s.arrivalNanos(), "begin(t) takes the transport's reading");
        assertSame(TargetRequestBase.State.WITH_CORE, s.state());
    }

    @Test
    void dataIsAskedForOnceAndArrivesBackWithTheCore() {
        Slot s = new Slot();
        s.begin();
        DataReceiver receiver = (r, status) -> {};
        s.receiveData(receiver);
        assertEquals(1, s.transfers);
        assertTrue(s.dataRequested());
        assertSame(TargetRequestBase.State.RECEIVING_DATA, s.state());
        assertThrows(IllegalStateException.class, s::complete, "not while the data is arriving");
        assertSame(receiver, s.dataReceived());
        assertSame(TargetRequestBase.State.WITH_CORE, s.state());
        assertThrows(IllegalStateException.class, () -> s.receiveData(receiver));
        assertEquals(1, s.transfers);
    }

    @Test
    void completeOnceThenNeverAgainAndIgnoredWhenDead() {
        Slot s = new Slot();
        assertThrows(IllegalStateException.class, s::complete, "a free slot is not the core's");
        s.begin();
        s.complete();
        assertEquals(1, s.responses);
        assertThrows(IllegalStateException.class, s::complete);
        s.begin();
        s.state(TargetRequestBase.State.DEAD);
        s.complete();
        assertEquals(1, s.responses);
    }

    @Test
    void slotMemoryCanBeTheTransports() {
        ByteBuffer commands = ByteBuffer.allocate(4 * 64).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        ByteBuffer responses = ByteBuffer.allocate(4 * 16).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        TargetRequestBase s = new TargetRequestBase(commands, 2 * 64, responses, 2 * 16) {
            @Override
            protected void transferData(DataReceiver receiver) {}

            @Override
            protected void sendResponse() {}

            @Override
            public ByteBuffer data() {
                return EMPTY;
            }

            @Override
            public void addData(ByteBuffer source, int offset, int length, DataRelease release) {}
        };
        commands.putShort(2 * 64 + 2, (short) 9);
        s.begin();
        assertEquals(9, s.cid());
        assertEquals(9, responses.getShort(2 * 16 + 12));
    }
}
