package io.nvmeof.transport.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** Golden bytes of the NVMe/RDMA CM private data (nvmeof-protocol.md §6.1). */
class PrivateDataTest {
    private static ByteBuffer le(int n) {
        return ByteBuffer.allocate(n).order(ByteOrder.LITTLE_ENDIAN);
    }

    private static String hex(ByteBuffer b) {
        byte[] out = new byte[b.capacity()];
        b.get(0, out);
        return HexFormat.of().formatHex(out);
    }

    @Test
    void requestLayout() {
        ByteBuffer b = le(32);
        // garbage first: set() must clear the reserved bytes
        for (int i = 0; i < 32; i++) {
            b.put(i, (byte) 0xEE);
        }
        RdmaCmRequest r = new RdmaCmRequest();
        r.wrap(b, 0);
        r.set(3, 128, 127, 0x1234); // I/O queue 3 of controller 0x1234, queue size 128
        assertEquals("0000" + "0300" + "8000" + "7f00" + "3412" + "00".repeat(22), hex(b));
        assertEquals(0, r.recfmt());
        assertEquals(3, r.qid());
        assertEquals(128, r.hrqsize());
        assertEquals(127, r.hsqsize());
        assertEquals(0x1234, r.cntlid());
        // the Linux admin queue: QID 0, HRQSIZE 32, HSQSIZE 31, CNTLID 0
        r.set(0, 32, 31, 0);
        assertEquals("0000" + "0000" + "2000" + "1f00" + "0000" + "00".repeat(22), hex(b));
    }

    @Test
    void acceptLayout() {
        ByteBuffer b = le(32);
        b.put(31, (byte) 1);
        RdmaCmAccept a = new RdmaCmAccept();
        a.wrap(b, 0);
        a.set(128);
        assertEquals("0000" + "8000" + "00".repeat(28), hex(b));
        assertEquals(128, a.crqsize());
        assertEquals(0, a.recfmt());
    }

    @Test
    void rejectLayoutAndNames() {
        ByteBuffer b = le(4);
        RdmaCmReject r = new RdmaCmReject();
        r.wrap(b, 0);
        r.set(RdmaCmReject.STS_INVALID_HSQSIZE);
        assertEquals("00000400", hex(b));
        assertEquals(4, r.sts());
        assertEquals(1, RdmaCmReject.STS_INVALID_LEN);
        assertEquals(2, RdmaCmReject.STS_INVALID_RECFMT);
        assertEquals(3, RdmaCmReject.STS_INVALID_QID);
        assertEquals(5, RdmaCmReject.STS_INVALID_HRQSIZE);
        assertEquals(6, RdmaCmReject.STS_NO_RSC);
        assertEquals(7, RdmaCmReject.STS_INVALID_IRD);
        assertEquals(8, RdmaCmReject.STS_INVALID_ORD);
        assertEquals(9, RdmaCmReject.STS_INVALID_CNTLID);
        assertEquals("invalid HSQSIZE", RdmaCmReject.stsName(4));
    }

    @Test
    void portFactsMatchNvmetRdma() {
        assertEquals(0x00100005, RdmaTransport.SGLS);
        assertEquals(8, RdmaTransport.MDTS);
        assertEquals(260, (64 + RdmaTransport.IN_CAPSULE_DATA_SIZE) / 16, "IOCCSZ");
        assertEquals(1 << 20, RdmaTransport.MAX_TRANSFER);
    }

    @Test
    void poolSizeClasses() {
        assertEquals(0, RegisteredBufferPool.sizeClass(1));
        assertEquals(0, RegisteredBufferPool.sizeClass(4096));
        assertEquals(1, RegisteredBufferPool.sizeClass(4097));
        assertEquals(8, RegisteredBufferPool.sizeClass(1 << 20));
    }
}
