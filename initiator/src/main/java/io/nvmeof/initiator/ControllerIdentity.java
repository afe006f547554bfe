package io.nvmeof.initiator;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The fields of Identify Controller (CNS 0x01) that matter on fabrics (nvmeof-protocol.md §3.2.1), decoded.
 * Strings have their padding removed. Field names follow the spec (and nvme-cli's {@code id-ctrl}).
 */
public record ControllerIdentity(
        int vid,
        int ssvid,
        String sn,
        String mn,
        String fr,
        int rab,
        int ieee,
        int cmic,
        int mdts,
        int cntlid,
        int ver,
        int oaes,
        int ctratt,
        int cntrltype,
        int oacs,
        int acl,
        int aerl,
        int lpa,
        int elpe,
        int kas,
        int sqes,
        int cqes,
        int maxcmd,
        long nn,
        int oncs,
        int vwc,
        long sgls,
        String subnqn,
        long ioccsz,
        long iorcsz,
        int icdoff,
        int fcatt,
        int msdbd,
        int ofcs) {
    /** Size of the Identify data structure (nvmeof-protocol.md §3.2). */
    public static final int SIZE = 4096;

    /** Decodes a 4096-byte Identify Controller page (absolute indexes from 0; the buffer is not changed). */
    public static ControllerIdentity parse(ByteBuffer page) {
        ByteBuffer b = page.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        return new ControllerIdentity(
                u16(b, 0),
                u16(b, 2),
                ascii(b, 4, 20),
                ascii(b, 24, 40),
                ascii(b, 64, 8),
                u8(b, 72),
                u8(b, 73) | (u8(b, 74) << 8) | (u8(b, 75) << 16),
                u8(b, 76),
                u8(b, 77),
                u16(b, 78),
                b.getInt(80),
                b.getInt(92),
                b.getInt(96),
                u8(b, 111),
                u16(b, 256),
                u8(b, 258),
                u8(b, 259),
                u8(b, 261),
                u8(b, 262),
                u16(b, 320),
                u8(b, 512),
                u8(b, 513),
                u16(b, 514),
                b.getInt(516) & 0xFFFFFFFFL,
                u16(b, 520),
                u8(b, 525),
                b.getInt(536) & 0xFFFFFFFFL,
                nqn(b, 768),
                b.getInt(1792) & 0xFFFFFFFFL,
                b.getInt(1796) & 0xFFFFFFFFL,
                u16(b, 1800),
                u8(b, 1802),
                u8(b, 1803),
                u16(b, 1804));
    }

    /** VER as "major.minor.tertiary", e.g. "1.3.0". */
    public String version() {
        return versionString(ver);
    }

    /** Whether this is a discovery controller (CNTRLTYPE 2, nvmeof-protocol.md §3.7). */
    public boolean isDiscovery() {
        return cntrltype == 2;
    }

    static String versionString(int vs) {
        return (vs >>> 16) + "." + ((vs >>> 8) & 0xFF) + "." + (vs & 0xFF);
    }

    static int u8(ByteBuffer b, int at) {
        return b.get(at) & 0xFF;
    }

    static int u16(ByteBuffer b, int at) {
        return b.getShort(at) & 0xFFFF;
    }

    /** A space-padded ASCII field (nvmeof-protocol.md §0), trimmed. */
    static String ascii(ByteBuffer b, int at, int width) {
        byte[] bytes = new byte[width];
        b.get(at, bytes);
        int end = width;
        while (end > 0 && (bytes[end - 1] == ' ' || bytes[end - 1] == 0)) {
            end--;
        }
        return new String(bytes, 0, end, StandardCharsets.US_ASCII);
    }

    /** A NUL-terminated NQN field of 256 bytes (nvmeof-protocol.md §0). */
    static String nqn(ByteBuffer b, int at) {
        int len = 0;
        while (len < 256 && b.get(at + len) != 0) {
            len++;
        }
        byte[] bytes = new byte[len];
        b.get(at, bytes);
        return new String(bytes, StandardCharsets.UTF_8).trim();
    }
}
