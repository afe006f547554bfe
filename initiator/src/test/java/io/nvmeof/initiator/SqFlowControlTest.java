package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.testsupport.TcpProxy;
import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code disable_sqflow=1}: every Connect asks for SQ flow control to be disabled (CATTR bit 2), and our target then
 * answers a successful read with its C2HData alone (SUCCESS flag, no CapsuleResp), which the initiator completes the
 * read on. Without the option, CATTR is 0 and every read gets its CapsuleResp. Seen on the wire through a proxy (no
 * keep-alive, so the only CapsuleResps are the commands' own).
 */
class SqFlowControlTest {
    private static final int CAPSULE_RESP = 0x05;
    private static final int C2H_DATA = 0x07;

    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("16M").build();

    @Test
    void disableSqflowAsksOnEveryQueueAndReadsCompleteOnTheirData() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address())) {
            Map<Integer, Integer> cattr = watchConnects(proxy);
            try (Controller c = Nvme.connect(uri(proxy, "queues=2&kato=0&disable_sqflow=1"))) {
                int off = SubmissionQueueEntry.CATTR_DISABLE_SQ_FLOW_CONTROL;
                assertEquals(Map.of(0, off, 1, off, 2, off), cattr, "CATTR of each queue's Connect");
                long respBefore = proxy.pdusFromTarget(CAPSULE_RESP);
                long successBefore = proxy.successC2hData();
                int reads = readBack(c.namespace());
                assertEquals(reads, proxy.successC2hData() - successBefore, "one C2HData with SUCCESS per read");
                // the writes' CapsuleResps only (a write has no C2HData)
                assertEquals(reads, proxy.pdusFromTarget(CAPSULE_RESP) - respBefore, "no CapsuleResp for a read");
                // a failed read still gets its status in a CapsuleResp
                long last = c.namespace().blockCount();
                assertThrows(
                        NvmeStatusException.class,
                        () -> c.namespace().read(last - 1, 2, ByteBuffer.allocateDirect(8192)));
            }
        }
    }

    @Test
    void withoutTheOptionCattrIsZeroAndEveryReadGetsItsCapsuleResp() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address())) {
            Map<Integer, Integer> cattr = watchConnects(proxy);
            try (Controller c = Nvme.connect(uri(proxy, "queues=1&kato=0"))) {
                assertEquals(Map.of(0, 0, 1, 0), cattr, "CATTR of each queue's Connect");
                long respBefore = proxy.pdusFromTarget(CAPSULE_RESP);
                long dataBefore = proxy.pdusFromTarget(C2H_DATA);
                int reads = readBack(c.namespace());
                assertEquals(0, proxy.successC2hData());
                assertEquals(reads, proxy.pdusFromTarget(C2H_DATA) - dataBefore);
                assertEquals(2L * reads, proxy.pdusFromTarget(CAPSULE_RESP) - respBefore, "writes' and reads'");
            }
        }
    }

    private static String uri(TcpProxy proxy, String query) {
        return "nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn() + "?" + query;
    }

    private static Map<Integer, Integer> watchConnects(TcpProxy proxy) {
        Map<Integer, Integer> cattr = new ConcurrentHashMap<>();
        proxy.observe((qid, sqe) -> {
            if (sqe.opcode() == FabricsCommandType.OPCODE && sqe.fctype() == FabricsCommandType.CONNECT.code()) {
                cattr.put(sqe.connectQid(), sqe.connectCattr());
            }
        });
        return cattr;
    }

    /** Writes then reads back 4 KiB, 16 KiB and 128 KiB (data verified); returns the number of reads. */
    private static int readBack(Namespace ns) throws Exception {
        int reads = 0;
        for (int blocks : new int[] {1, 4, 32}) {
            ByteBuffer w = ByteBuffer.allocateDirect(blocks * 4096);
            for (int i = 0; i < w.capacity(); i++) {
                w.put(i, (byte) (blocks * 13 + i * 7));
            }
            ns.write(64, blocks, w);
            ByteBuffer r = ByteBuffer.allocateDirect(blocks * 4096);
            ns.read(64, blocks, r);
            reads++;
            assertEquals(w.rewind(), r.rewind(), blocks + " blocks read back");
        }
        return reads;
    }
}
