package io.nvmeof.core.wire;

import java.nio.charset.StandardCharsets;
import java.util.UUID;

/**
 * The 1024-byte data of a Connect command (nvmeof-protocol.md §2.2).
 *
 * <pre>
 *  0          16       18         256            512            768        1024
 *  +----------+--------+----------+--------------+--------------+----------+
 *  | HOSTID   | CNTLID | reserved | SUBNQN (256) | HOSTNQN (256)| reserved |
 *  +----------+--------+----------+--------------+--------------+----------+
 * </pre>
 */
public final class ConnectData extends Flyweight {
    public static final int LENGTH = 1024;
    public static final int HOSTID_OFFSET = 0;
    public static final int CNTLID_OFFSET = 16;
    public static final int SUBNQN_OFFSET = 256;
    public static final int HOSTNQN_OFFSET = 512;
    /** NQN fields are 256 bytes holding at most 223 characters and a NUL (nvmeof-protocol.md §0, §8). */
    public static final int NQN_FIELD_LENGTH = 256;

    public static final int NQN_MAX_LENGTH = 223;
    /** CNTLID of an admin Connect asking for a dynamically allocated controller (nvmeof-protocol.md §2.2). */
    public static final int CNTLID_DYNAMIC = 0xFFFF;

    @Override
    public int length() {
        return LENGTH;
    }

    public UUID hostId() {
        // The host identifier is 16 raw bytes in textual UUID order, i.e. big-endian halves (nvmeof-protocol.md §0).
        long msb = Long.reverseBytes(u64(HOSTID_OFFSET));
        long lsb = Long.reverseBytes(u64(HOSTID_OFFSET + 8));
        return new UUID(msb, lsb);
    }

    public ConnectData hostId(UUID id) {
        u64(HOSTID_OFFSET, Long.reverseBytes(id.getMostSignificantBits()));
        u64(HOSTID_OFFSET + 8, Long.reverseBytes(id.getLeastSignificantBits()));
        return this;
    }

    public int cntlid() {
        return u16(CNTLID_OFFSET);
    }

    public ConnectData cntlid(int cntlid) {
        u16(CNTLID_OFFSET, cntlid);
        return this;
    }

    /** SUBNQN, or null if the field holds no NUL terminator. */
    public String subNqn() {
        return nqn(SUBNQN_OFFSET);
    }

    public ConnectData subNqn(String nqn) {
        putNqn(SUBNQN_OFFSET, nqn);
        return this;
    }

    /** HOSTNQN, or null if the field holds no NUL terminator. */
    public String hostNqn() {
        return nqn(HOSTNQN_OFFSET);
    }

    public ConnectData hostNqn(String nqn) {
        putNqn(HOSTNQN_OFFSET, nqn);
        return this;
    }

    /**
     * An NQN field as nvmet reads it: up to its first NUL, or its first 255 bytes when it holds none (nvmet writes a
     * NUL into the last byte). Never null.
     */
    public String nqnTruncated(int field) {
        String nqn = nqn(field);
        if (nqn != null) {
            return nqn;
        }
        byte[] bytes = new byte[NQN_FIELD_LENGTH - 1];
        buffer.get(offset + field, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private String nqn(int field) {
        for (int i = 0; i < NQN_FIELD_LENGTH; i++) {
            if (buffer.get(offset + field + i) == 0) {
                byte[] bytes = new byte[i];
                buffer.get(offset + field, bytes);
                return new String(bytes, StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    private void putNqn(int field, String nqn) {
        byte[] bytes = nqn.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > NQN_MAX_LENGTH) {
            throw new IllegalArgumentException("an NQN has at most " + NQN_MAX_LENGTH + " bytes: " + nqn);
        }
        for (int i = 0; i < NQN_FIELD_LENGTH; i++) {
            buffer.put(offset + field + i, i < bytes.length ? bytes[i] : 0);
        }
    }
}
