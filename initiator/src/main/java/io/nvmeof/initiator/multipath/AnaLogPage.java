package io.nvmeof.initiator.multipath;

import io.nvmeof.core.command.AnaState;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Reads the Asymmetric Namespace Access log page (LID 0Ch, NVMe Base 2.0 §5.16.1.13; nvmeof-protocol.md §3.3): a
 * 16-byte header (CHGCNT u64 at 0, NGRPS u16 at 8), then NGRPS group descriptors, each 32 bytes (ANAGRPID u32 at 0,
 * NNSIDS u32 at 4, CHGCNT u64 at 8, ANAS in bits 3:0 of byte 16) followed by its NNSIDS namespace IDs (u32 each).
 * A page cut short by the buffer is read as far as it goes.
 */
final class AnaLogPage {
    static final int HEADER_BYTES = 16;
    static final int DESCRIPTOR_BYTES = 32;

    private AnaLogPage() {}

    /**
     * Bytes to ask for, as the Linux host does: the header, NANAGRPID descriptors and MNAN namespace IDs (MNAN 0:
     * NN), from the Identify Controller page (NANAGRPID bytes 351:348, MNAN 543:540, NN 519:516); at most
     * {@code maxBytes}.
     */
    static int sizeFor(ByteBuffer identifyController, int maxBytes) {
        ByteBuffer b = identifyController.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        long groups = b.getInt(348) & 0xFFFFFFFFL;
        long mnan = b.getInt(540) & 0xFFFFFFFFL;
        if (mnan == 0) {
            mnan = b.getInt(516) & 0xFFFFFFFFL;
        }
        long size = HEADER_BYTES + groups * DESCRIPTOR_BYTES + mnan * 4;
        return (int) Math.min(maxBytes, (size + 3) & ~3L);
    }

    /**
     * The state of namespace {@code nsid}: from the descriptor that lists it; if none does (the page was cut short or
     * lists no NSIDs), from the descriptor of group {@code anagrpid}; null if neither is in the page or the state is a
     * reserved value.
     */
    static AnaState stateOf(ByteBuffer log, int nsid, int anagrpid) {
        ByteBuffer b = log.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int limit = b.limit();
        if (limit < HEADER_BYTES) {
            return null;
        }
        int groups = b.getShort(8) & 0xFFFF;
        AnaState byGroup = null;
        int p = HEADER_BYTES;
        for (int g = 0; g < groups && p + DESCRIPTOR_BYTES <= limit; g++) {
            int grpid = b.getInt(p);
            long nnsids = b.getInt(p + 4) & 0xFFFFFFFFL;
            AnaState state = AnaState.of(b.get(p + 16) & 0x0F);
            if (grpid == anagrpid) {
                byGroup = state;
            }
            p += DESCRIPTOR_BYTES;
            for (long i = 0; i < nnsids && p + 4 <= limit; i++, p += 4) {
                if (b.getInt(p) == nsid) {
                    return state;
                }
            }
            if (p + 4 > limit && nnsids > 0) {
                break;
            }
        }
        return byGroup;
    }

    /** CHGCNT of the header. */
    static long changeCount(ByteBuffer log) {
        return log.duplicate().order(ByteOrder.LITTLE_ENDIAN).getLong(0);
    }
}
