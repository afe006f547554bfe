package io.nvmeof.initiator;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import java.util.UUID;

/**
 * The fields of Identify Namespace (CNS 0x00, nvmeof-protocol.md §3.2.2) an application needs, plus the UUID from the Namespace
 * Identification Descriptor list (CNS 0x03, nvmeof-protocol.md §3.2.3) when the controller gives one.
 *
 * @param nsid      the namespace ID
 * @param nsze      size in logical blocks (NSZE)
 * @param ncap      capacity in logical blocks (NCAP; 0 means the namespace is absent)
 * @param nuse      blocks in use (NUSE)
 * @param nsfeat    NSFEAT
 * @param nlbaf     number of LBA formats, 0's based
 * @param flbas     FLBAS
 * @param lbads     log2 of the block size of the format in use
 * @param ms        metadata bytes per block of that format (0 unless PI is used)
 * @param dlfeat    DLFEAT
 * @param nmic      NMIC
 * @param nsattr    NSATTR (bit 0: write protected)
 * @param nguid     NGUID as 32 hex digits, or null if all zero
 * @param eui64     EUI64 as 16 hex digits, or null if all zero
 * @param uuid      the namespace UUID from the descriptor list, or null
 * @param anagrpid  ANAGRPID: the namespace's ANA group, 0 if the controller reports none (nvmeof-protocol.md §3.2.2)
 */
public record NamespaceIdentity(
        int nsid,
        long nsze,
        long ncap,
        long nuse,
        int nsfeat,
        int nlbaf,
        int flbas,
        int lbads,
        int ms,
        int dlfeat,
        int nmic,
        int nsattr,
        String nguid,
        String eui64,
        UUID uuid,
        int anagrpid) {

    /**
     * Decodes Identify Namespace; {@code descriptors} may be null (CNS 0x03 not supported). NGUID and EUI64 come from
     * the Identify page, or from the descriptor list when the page has them all zero (NIDT 1 and 2).
     */
    public static NamespaceIdentity parse(int nsid, ByteBuffer page, ByteBuffer descriptors) {
        ByteBuffer b = page.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        int flbas = b.get(26) & 0xFF;
        int format =
                (flbas & 0xF) | ((flbas & 0x60) >> 1); // index = bits 3:0 | bits 6:5 << 4 (nvmeof-protocol.md §3.2.2)
        int lbaf = b.getInt(128 + 4 * format);
        return new NamespaceIdentity(
                nsid,
                b.getLong(0),
                b.getLong(8),
                b.getLong(16),
                b.get(24) & 0xFF,
                b.get(25) & 0xFF,
                flbas,
                (lbaf >>> 16) & 0xFF,
                lbaf & 0xFFFF,
                b.get(33) & 0xFF,
                b.get(30) & 0xFF,
                b.get(99) & 0xFF,
                orDescriptor(hexOrNull(b, 104, 16), descriptors, 0x02, 16),
                orDescriptor(hexOrNull(b, 120, 8), descriptors, 0x01, 8),
                descriptors == null ? null : uuidFrom(descriptors),
                b.getInt(92));
    }

    /** The logical block size in bytes, 2^LBADS. */
    public int blockSize() {
        return 1 << lbads;
    }

    /** Size in bytes (NSZE × block size). */
    public long sizeBytes() {
        return nsze << lbads;
    }

    public boolean readOnly() {
        return (nsattr & 1) != 0;
    }

    /** NCAP ≠ 0: the namespace exists (nvmeof-protocol.md §3.2). */
    public boolean present() {
        return ncap != 0;
    }

    private static String hexOrNull(ByteBuffer b, int at, int len) {
        byte[] bytes = new byte[len];
        b.get(at, bytes);
        for (byte x : bytes) {
            if (x != 0) {
                return HexFormat.of().formatHex(bytes);
            }
        }
        return null;
    }

    /**
     * Whether {@code other} is the same namespace by its global identifiers (NGUID, EUI64, UUID): at least one is
     * present on both, and every identifier either side has is equal on the other. Without any identifier two
     * namespaces cannot be told to be the same: false.
     */
    public boolean sameIdentifiers(NamespaceIdentity other) {
        if (nguid == null && eui64 == null && uuid == null) {
            return false;
        }
        return java.util.Objects.equals(nguid, other.nguid)
                && java.util.Objects.equals(eui64, other.eui64)
                && java.util.Objects.equals(uuid, other.uuid);
    }

    /** The identifiers as text, e.g. "nguid 0123... uuid 4d1f..." (for messages). */
    public String identifiers() {
        StringBuilder b = new StringBuilder();
        if (nguid != null) {
            b.append("nguid ").append(nguid);
        }
        if (eui64 != null) {
            b.append(b.length() > 0 ? ", " : "").append("eui64 ").append(eui64);
        }
        if (uuid != null) {
            b.append(b.length() > 0 ? ", " : "").append("uuid ").append(uuid);
        }
        return b.length() == 0 ? "no identifiers" : b.toString();
    }

    /** {@code fromPage}, or else the descriptor of type {@code nidt} and length {@code nidl} as hex, or null. */
    private static String orDescriptor(String fromPage, ByteBuffer d, int nidt, int nidl) {
        if (fromPage != null || d == null) {
            return fromPage;
        }
        int p = 0;
        while (p + 4 <= d.capacity()) {
            int t = d.get(p) & 0xFF;
            int l = d.get(p + 1) & 0xFF;
            if (l == 0 || p + 4 + l > d.capacity()) {
                return null;
            }
            if (t == nidt && l == nidl) {
                return hexOrNull(d, p + 4, l);
            }
            p += 4 + l;
        }
        return null;
    }

    /** The UUID descriptor (NIDT 3, NIDL 16) of a CNS 0x03 list, or null (nvmeof-protocol.md §3.2.3). */
    private static UUID uuidFrom(ByteBuffer d) {
        ByteBuffer b = d.duplicate().order(ByteOrder.BIG_ENDIAN);
        int p = 0;
        while (p + 4 <= b.capacity()) {
            int nidt = b.get(p) & 0xFF;
            int nidl = b.get(p + 1) & 0xFF;
            if (nidl == 0 || p + 4 + nidl > b.capacity()) {
                return null;
            }
            if (nidt == 0x03 && nidl == 16) {
                // Raw bytes in textual order (nvmeof-protocol.md §0): big-endian halves.
                return new UUID(b.getLong(p + 4), b.getLong(p + 12));
            }
            p += 4 + nidl;
        }
        return null;
    }
}
