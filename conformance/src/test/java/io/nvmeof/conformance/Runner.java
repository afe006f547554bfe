package io.nvmeof.conformance;

import io.nvmeof.conformance.Sequence.Step;
import io.nvmeof.core.command.Properties;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Runs sequences against one target address: a fresh admin connection per sequence, an I/O connection opened at the
 * first I/O step, both closed at the end. Returns one outcome per step (null for the CSTS waits).
 */
final class Runner {
    private final InetSocketAddress address;
    private final Geometry g;
    private final FabricsGen fabrics;

    Runner(InetSocketAddress address, Geometry g) {
        this.address = address;
        this.g = g;
        this.fabrics = new FabricsGen(new Pick(0), g);
    }

    List<Outcome> run(Sequence seq) throws IOException {
        List<Outcome> out = new ArrayList<>();
        RawHost admin = RawHost.connect(address);
        RawHost io = null;
        int cntlid = -1;
        try {
            List<Step> steps = seq.steps();
            for (int i = 0; i < steps.size(); i++) {
                Step step = steps.get(i);
                if (!admin.alive() || (io != null && !io.alive())) {
                    // A connection died: what the other one does next races with the controller's teardown on
                    // either target, so the rest of the sequence is not sent.
                    out.add(step.kind() == Step.Kind.COMMAND ? Outcome.failed(Outcome.Fate.NOT_SENT, 0) : null);
                    continue;
                }
                if (step.kind() != Step.Kind.COMMAND) {
                    out.add(null);
                    await(admin, step.kind());
                    continue;
                }
                Cmd cmd = step.cmd();
                RawHost host = admin;
                if (cmd.queue() == Cmd.Queue.IO) {
                    if (io == null) {
                        io = RawHost.connect(address);
                    }
                    host = io;
                }
                if (cmd.patchCntlid()) {
                    cmd = withCntlid(cmd, cntlid);
                }
                if (cmd.fusedWithNext() && i + 1 < steps.size()) {
                    Cmd next = steps.get(i + 1).cmd();
                    out.addAll(host.execute(List.of(cmd, next)));
                    i++;
                    continue;
                }
                Outcome o = host.execute(cmd);
                out.add(o);
                if (cntlid < 0
                        && host == admin
                        && cmd.isFabrics()
                        && cmd.fctype() == 0x01
                        && o.completed()
                        && o.status() == 0) {
                    cntlid = o.dw0() & 0xFFFF;
                }
            }
            return out;
        } finally {
            admin.close();
            if (io != null) {
                io.close();
            }
        }
    }

    /** Polls CSTS until RDY = 1 (or SHST = 10b), for at most 5 s; a target that never gets there shows in later steps. */
    private void await(RawHost admin, Step.Kind kind) {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (admin.alive() && System.nanoTime() < deadline) {
            Outcome o = admin.execute(fabrics.propertyGet(Properties.CSTS, false));
            if (!o.completed() || o.status() != 0) {
                return;
            }
            boolean done = kind == Step.Kind.AWAIT_READY
                    ? (o.dw0() & Properties.CSTS_RDY) != 0
                    : (o.dw0() & Properties.CSTS_SHST_MASK) == Properties.CSTS_SHST_COMPLETE;
            if (done) {
                return;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static Cmd withCntlid(Cmd cmd, int cntlid) {
        int id = cntlid < 0 ? 0xFFFF : cntlid;
        byte[] capsule = cmd.inCapsule() == null ? null : cmd.inCapsule().clone();
        byte[] write = cmd.writeData() == null ? null : cmd.writeData().clone();
        for (byte[] b : Arrays.asList(capsule, write)) {
            if (b != null && b.length >= 18) {
                ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).putShort(16, (short) id);
            }
        }
        return new Cmd(
                cmd.queue(),
                cmd.label(),
                cmd.sqe(),
                capsule,
                write,
                cmd.readLength(),
                false,
                cmd.fusedWithNext(),
                cmd.timeoutMillis());
    }

    /**
     * Zeroes what media-changing commands may touch ({@link Geometry#RESTORED_HEAD_BLOCKS} from the start, the last
     * edge region) with plain Writes of one edge region each on a fresh controller, so the next sequence starts from
     * zeros on both targets whatever each accepted.
     */
    void restore() throws IOException {
        try (RawHost admin = RawHost.connect(address)) {
            int cntlid = expect(admin.execute(fabrics.adminConnect()), "restore: admin Connect")
                            .dw0()
                    & 0xFFFF;
            expect(admin.execute(fabrics.setCc(0x00460001)), "restore: CC.EN");
            await(admin, Step.Kind.AWAIT_READY);
            try (RawHost io = RawHost.connect(address)) {
                expect(io.execute(withCntlid(fabrics.ioConnect(), cntlid)), "restore: I/O Connect");
                int n = Geometry.EDGE_REGION_BLOCKS;
                byte[] zeros = new byte[n * g.blockSize()];
                List<Long> starts = new ArrayList<>();
                for (long slba = 0; slba < Geometry.RESTORED_HEAD_BLOCKS; slba += n) {
                    starts.add(slba);
                }
                starts.add(g.blocks() - n);
                for (long slba : starts) {
                    Cmd w = Sqe.io(0x01, "restore write")
                            .nsid(1)
                            .cdw(10, (int) slba)
                            .cdw(11, (int) (slba >>> 32))
                            .cdw(12, n - 1)
                            .data(SglVariant.TRANSPORT, zeros, zeros.length, 0)
                            .build();
                    expect(io.execute(w), "restore: write zeros at " + slba);
                }
            }
        }
    }

    private Outcome expect(Outcome o, String what) throws IOException {
        if (!o.completed() || o.status() != 0) {
            throw new IOException(what + " failed on " + address + ": " + o.fateText() + " status " + o.status());
        }
        return o;
    }
}
