package io.nvmeof.target;

import io.nvmeof.core.command.Properties;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.QueueAcceptor;
import io.nvmeof.core.wire.ConnectData;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;

/**
 * A minimal host over the in-JVM transport that follows the Linux host's sequence (nvmeof-protocol.md §7.1): admin Connect, enable, I/O
 * Connects, and one method per command returning the completed {@link FakeRequest} (CQE + data).
 */
public final class InJvmHost implements AutoCloseable {
    public static final String HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";
    public static final UUID HOST_ID = UUID.fromString("11111111-2222-3333-4444-555555555555");

    private final QueueAcceptor acceptor;
    private final PortInfo port;
    private final String hostNqn;
    public InJvmQueue admin;
    public final Map<Integer, InJvmQueue> io = new TreeMap<>();
    public int cntlid = -1;
    /** The Host ID this host sends in Connect (default {@link #HOST_ID}). */
    public UUID hostId = HOST_ID;

    public String subnqn;

    public InJvmHost(QueueAcceptor acceptor, PortInfo port, String hostNqn) {
        this.acceptor = acceptor;
        this.port = port;
        this.hostNqn = hostNqn;
    }

    public InJvmHost(NvmeTarget target) {
        this(target.acceptorFor(InJvmQueue.TCP_PORT), InJvmQueue.TCP_PORT, HOST_NQN);
    }

    // ---- bring-up ----

    /** Admin Connect (QID 0, SQSIZE 31, CNTLID 0xFFFF); remembers the CNTLID on success. */
    public FakeRequest connectAdmin(String subsystemNqn, int katoMillis) {
        admin = new InJvmQueue(acceptor, port);
        subnqn = subsystemNqn;
        FakeRequest r = admin.call(connect(0, 31, 0, katoMillis, 0xFFFF, subsystemNqn, hostNqn, hostId));
        if (r.status() == 0) {
            cntlid = r.dw0() & 0xFFFF;
        }
        return r;
    }

    /** Steps 4–10 of nvmeof-protocol.md §7.1: CAP, CC (EN=0), CAP, CC (EN=1), CSTS until RDY, VS. Returns CSTS. */
    public int enable() {
        check(propertyGet(Properties.CAP, true));
        check(propertySet(Properties.CC, 0x00460000));
        check(propertyGet(Properties.CAP, true));
        check(propertySet(Properties.CC, 0x00460001));
        int csts = 0;
        for (int i = 0; i < 100 && (csts & 1) == 0; i++) {
            csts = check(propertyGet(Properties.CSTS, false)).dw0();
        }
        check(propertyGet(Properties.VS, false));
        return csts;
    }

    /** Normal shutdown (nvmeof-protocol.md §7.3): CC.SHN = 01 with EN still 1, then CSTS; returns CSTS. */
    public int shutdown() {
        check(propertySet(Properties.CC, 0x00464001));
        return check(propertyGet(Properties.CSTS, false)).dw0();
    }

    public FakeRequest connectIo(int qid, int sqsize) {
        return connectIo(qid, sqsize, 0);
    }

    public FakeRequest connectIo(int qid, int sqsize, int cattr) {
        InJvmQueue q = new InJvmQueue(acceptor, port);
        FakeRequest r = q.call(connect(qid, sqsize, cattr, 0, cntlid, subnqn, hostNqn, hostId));
        if (r.status() == 0) {
            io.put(qid, q);
        } else {
            q.close();
        }
        return r;
    }

    /** Connect to I/O controller, enable, Set Features Number of Queues, connect {@code queues} I/O queues. */
    public InJvmHost bringUp(String subsystemNqn, int queues) {
        check(connectAdmin(subsystemNqn, 5000));
        enable();
        check(admin(setFeatures(0x07, (queues - 1) | ((queues - 1) << 16))));
        for (int q = 1; q <= queues; q++) {
            check(connectIo(q, 127));
        }
        return this;
    }

    public FakeRequest admin(FakeRequest r) {
        return admin.call(r);
    }

    public FakeRequest io(int qid, FakeRequest r) {
        return io.get(qid).call(r);
    }

    public FakeRequest io(FakeRequest r) {
        return io(1, r);
    }

    public FakeRequest propertyGet(int offset, boolean eightBytes) {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x7F).fctype(0x04).property(eightBytes ? Properties.SIZE_8 : Properties.SIZE_4, offset, 0);
        return admin.call(r);
    }

    public FakeRequest propertySet(int offset, int value) {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x7F).fctype(0x00).property(Properties.SIZE_4, offset, value & 0xFFFFFFFFL);
        return admin.call(r);
    }

    @Override
    public void close() {
        for (InJvmQueue q : io.values()) {
            q.close();
        }
        if (admin != null) {
            admin.close();
        }
    }

    // ---- command builders (static, reusable by other tests) ----

    public static FakeRequest connect(
            int qid, int sqsize, int cattr, int kato, int cntlid, String subnqn, String hostnqn) {
        return connect(qid, sqsize, cattr, kato, cntlid, subnqn, hostnqn, HOST_ID);
    }

    public static FakeRequest connect(
            int qid, int sqsize, int cattr, int kato, int cntlid, String subnqn, String hostnqn, UUID hostId) {
        ByteBuffer data = ByteBuffer.allocate(ConnectData.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        ConnectData d = new ConnectData();
        d.wrap(data, 0);
        d.hostId(hostId).cntlid(cntlid).subNqn(subnqn).hostNqn(hostnqn);
        byte[] bytes = new byte[ConnectData.LENGTH];
        data.get(0, bytes);
        FakeRequest r = new FakeRequest().send(bytes);
        r.sqe().opcode(0x7F).fctype(0x01).connect(0, qid, sqsize, cattr, kato);
        return r;
    }

    public static FakeRequest identify(int cns, int nsid) {
        FakeRequest r = new FakeRequest().expect(4096);
        r.sqe().opcode(0x06).nsid(nsid).cdw(10, cns);
        return r;
    }

    /** Get Log Page of {@code length} bytes (a multiple of 4) at byte offset {@code lpo}. */
    public static FakeRequest getLogPage(int lid, int nsid, long lpo, int length, boolean rae) {
        int numd = length / 4 - 1;
        FakeRequest r = new FakeRequest().expect(length);
        r.sqe()
                .opcode(0x02)
                .nsid(nsid)
                .cdw(10, lid | (rae ? 0x8000 : 0) | ((numd & 0xFFFF) << 16))
                .cdw(11, numd >>> 16)
                .cdw(12, (int) lpo)
                .cdw(13, (int) (lpo >>> 32));
        return r;
    }

    public static FakeRequest setFeatures(int fid, int value) {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x09).cdw(10, fid).cdw(11, value);
        return r;
    }

    public static FakeRequest getFeatures(int fid, int sel) {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x0A).cdw(10, fid | (sel << 8));
        return r;
    }

    public static FakeRequest keepAlive() {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x18);
        return r;
    }

    public static FakeRequest asyncEventRequest() {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x0C);
        return r;
    }

    public static FakeRequest read(int nsid, long slba, int blocks, int blockSize) {
        FakeRequest r = new FakeRequest().expect(blocks * blockSize);
        r.sqe().opcode(0x02).nsid(nsid).slba(slba).nlb(blocks - 1);
        return r;
    }

    public static FakeRequest write(int nsid, long slba, byte[] data, int blockSize) {
        FakeRequest r = new FakeRequest().send(data);
        r.sqe().opcode(0x01).nsid(nsid).slba(slba).nlb(data.length / blockSize - 1);
        return r;
    }

    public static FakeRequest compare(int nsid, long slba, byte[] data, int blockSize) {
        FakeRequest r = new FakeRequest().send(data);
        r.sqe().opcode(0x05).nsid(nsid).slba(slba).nlb(data.length / blockSize - 1);
        return r;
    }

    public static FakeRequest flush(int nsid) {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x00).nsid(nsid);
        return r;
    }

    public static FakeRequest writeZeroes(int nsid, long slba, int blocks, boolean deallocate) {
        FakeRequest r = new FakeRequest().expect(0);
        r.sqe().opcode(0x08).nsid(nsid).slba(slba).cdw(12, (blocks - 1) | (deallocate ? 1 << 25 : 0));
        return r;
    }

    /** Dataset Management deallocate of {slba, count} pairs, in a 4096-byte buffer like Linux. */
    public static FakeRequest deallocate(int nsid, long... slbaAndCount) {
        ByteBuffer b = ByteBuffer.allocate(4096).order(ByteOrder.LITTLE_ENDIAN);
        int ranges = slbaAndCount.length / 2;
        for (int i = 0; i < ranges; i++) {
            b.putInt(16 * i + 4, (int) slbaAndCount[2 * i + 1]);
            b.putLong(16 * i + 8, slbaAndCount[2 * i]);
        }
        FakeRequest r = new FakeRequest().send(b.array());
        r.sqe().opcode(0x09).nsid(nsid).cdw(10, ranges - 1).cdw(11, 1 << 2);
        return r;
    }

    public static FakeRequest check(FakeRequest r) {
        if (r.status() != 0) {
            throw new AssertionError("command failed: " + r);
        }
        return r;
    }

    public static SubmissionQueueEntry sqe(FakeRequest r) {
        return r.sqe();
    }
}
