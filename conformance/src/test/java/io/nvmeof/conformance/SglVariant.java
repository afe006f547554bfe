package io.nvmeof.conformance;

import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.util.Arrays;

/**
 * The SGL descriptors the generator tries on a command with data (nvmeof-protocol.md §1.3, §5.10): the one a Linux
 * host would send, zero-length descriptors of each type, wrong lengths, offsets, types, subtypes and PSDT values.
 */
enum SglVariant {
    /** What a host sends: in-capsule data (01h) when it fits, else transport data block (5Ah). */
    NORMAL,
    /** Transport data block even for a small write: the data goes by R2T/H2CData. */
    TRANSPORT,
    ZERO_TRANSPORT,
    ZERO_IN_CAPSULE,
    ZERO_DATA_BLOCK_ADDRESS,
    ZERO_KEYED,
    /** Half the length the command needs. */
    SHORT,
    /** Twice the length the command needs. */
    LONG,
    /** In-capsule with offset 16 (the data starts 16 bytes into the capsule's data). */
    IN_CAPSULE_OFFSET,
    /** In-capsule descriptor on a read (controller to host). */
    IN_CAPSULE_ON_READ,
    /** More in-capsule data than the queue takes. */
    IN_CAPSULE_TOO_BIG,
    KEYED,
    BIT_BUCKET,
    SEGMENT,
    LAST_SEGMENT,
    /** Transport data block with subtype Bh (reserved). */
    BAD_SUBTYPE,
    /** Descriptor type 6h (reserved). */
    RESERVED_TYPE,
    /** PSDT 00b (PRPs), which fabrics forbid. */
    PSDT_PRP,
    /** PSDT 11b (reserved). */
    PSDT_RESERVED;

    private static final int SGL = SubmissionQueueEntry.FLAGS_SGL;

    /** How many bytes of controller-to-host data the host takes under this descriptor for a command of {@code n}. */
    int takes(int n) {
        return switch (this) {
            case ZERO_TRANSPORT, ZERO_IN_CAPSULE, ZERO_DATA_BLOCK_ADDRESS, ZERO_KEYED -> 0;
            case SHORT -> n / 2;
            case LONG -> n * 2;
            default -> n;
        };
    }

    void apply(Sqe s, int n, boolean toController, byte[] hostData, int inCapsuleMax) {
        byte[] data = hostData != null ? hostData : new byte[toController ? n : 0];
        int tcp = SglDescriptor.ID_TCP_TRANSPORT;
        int inCap = SglDescriptor.ID_IN_CAPSULE;
        switch (this) {
            case NORMAL -> {
                if (toController && n <= inCapsuleMax) {
                    s.sgl(inCap, 0, n).inCapsule(n == 0 ? null : Arrays.copyOf(data, n));
                } else {
                    s.sgl(tcp, 0, n).writeData(data);
                }
            }
            case TRANSPORT -> s.sgl(tcp, 0, n).writeData(data);
            case ZERO_TRANSPORT -> s.sgl(tcp, 0, 0);
            case ZERO_IN_CAPSULE -> s.sgl(inCap, 0, 0);
            case ZERO_DATA_BLOCK_ADDRESS -> s.sgl(SglDescriptor.TYPE_DATA_BLOCK << 4, 0, 0);
            case ZERO_KEYED -> s.sgl(SglDescriptor.ID_KEYED, 0, 0);
            case SHORT -> shortOrLong(s, n / 2, toController, data, inCapsuleMax);
            case LONG -> shortOrLong(s, n * 2, toController, data, inCapsuleMax);
            case IN_CAPSULE_OFFSET -> {
                byte[] capsule = new byte[16 + n];
                System.arraycopy(data, 0, capsule, 16, Math.min(n, data.length));
                s.sgl(inCap, 16, n).inCapsule(capsule);
            }
            case IN_CAPSULE_ON_READ -> s.sgl(inCap, 0, n);
            case IN_CAPSULE_TOO_BIG -> {
                int big = inCapsuleMax + 4096;
                s.sgl(inCap, 0, big).inCapsule(Arrays.copyOf(data, big));
            }
            case KEYED -> s.sgl(SglDescriptor.ID_KEYED, 0x1000, n);
            case BIT_BUCKET -> s.sgl(SglDescriptor.TYPE_BIT_BUCKET << 4, 0, n);
            case SEGMENT -> s.sgl(SglDescriptor.TYPE_SEGMENT << 4 | 0x1, 0, 16);
            case LAST_SEGMENT -> s.sgl(SglDescriptor.TYPE_LAST_SEGMENT << 4 | 0x1, 0, 16);
            case BAD_SUBTYPE -> s.sgl(0x5B, 0, n).writeData(data);
            case RESERVED_TYPE -> s.sgl(0x6A, 0, n).writeData(data);
            case PSDT_PRP -> s.sgl(tcp, 0, n).writeData(data).flags(0);
            case PSDT_RESERVED -> s.sgl(tcp, 0, n).writeData(data).flags(SGL | 0x80);
        }
    }

    private static void shortOrLong(Sqe s, int len, boolean toController, byte[] data, int inCapsuleMax) {
        if (toController && len <= inCapsuleMax) {
            s.sgl(SglDescriptor.ID_IN_CAPSULE, 0, len).inCapsule(len == 0 ? null : Arrays.copyOf(data, len));
        } else {
            s.sgl(SglDescriptor.ID_TCP_TRANSPORT, 0, len).writeData(Arrays.copyOf(data, len));
        }
    }
}
