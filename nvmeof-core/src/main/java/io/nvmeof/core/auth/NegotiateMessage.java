package io.nvmeof.core.auth;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * AUTH_Negotiate (NVMe Base 2.0 §8.13.4.1), host to controller: T_ID, SC_C and one DH-HMAC-CHAP protocol descriptor
 * with the hash functions and DH groups the host offers, in its order of preference.
 *
 * <pre>
 *  0 AUTH_Type 00h | 1 AUTH_Id 00h | 2-3 reserved | 4-5 T_ID | 6 SC_C | 7 NAPD
 *  8.. descriptors of 64 bytes: 0 AUTHID 01h | 1 reserved | 2 HALEN | 3 DHLEN | 4..33 hash IDs | 34..63 DH group IDs
 * </pre>
 *
 * Identifiers the receiver does not know stay out of the lists it decodes (the controller picks among the ones it
 * knows).
 */
public record NegotiateMessage(int tid, int scC, List<DhchapHash> hashes, List<DhGroup> groups) {
    public static final int DESCRIPTOR_LENGTH = 64;
    public static final int LENGTH = 8 + DESCRIPTOR_LENGTH;
    /** Hash and DH group lists hold at most 30 identifiers each. */
    static final int MAX_IDS = 30;

    public NegotiateMessage {
        hashes = List.copyOf(hashes);
        groups = List.copyOf(groups);
    }

    /** What the Linux host offers: SHA-256, SHA-384, SHA-512; null, ffdhe2048 ... ffdhe8192. */
    public static NegotiateMessage linuxOrder(int tid) {
        return new NegotiateMessage(
                tid, AuthProtocol.SC_C_NONE, List.of(DhchapHash.values()), List.of(DhGroup.values()));
    }

    public byte[] encode() {
        ByteBuffer b = Messages.allocate(LENGTH);
        Messages.header(b, AuthProtocol.TYPE_COMMON, AuthProtocol.ID_NEGOTIATE, tid);
        b.put(6, (byte) scC).put(7, (byte) 1);
        b.put(8, (byte) AuthProtocol.AUTH_ID_DHCHAP);
        b.put(10, (byte) hashes.size()).put(11, (byte) groups.size());
        for (int i = 0; i < hashes.size(); i++) {
            b.put(12 + i, (byte) hashes.get(i).id());
        }
        for (int i = 0; i < groups.size(); i++) {
            b.put(12 + MAX_IDS + i, (byte) groups.get(i).id());
        }
        return b.array();
    }

    public static NegotiateMessage decode(byte[] m) throws AuthMessageException {
        ByteBuffer b =
                Messages.expect(m, LENGTH, AuthProtocol.TYPE_COMMON, AuthProtocol.ID_NEGOTIATE, "AUTH_Negotiate");
        int napd = Messages.u8(b, 7);
        if (napd != 1) {
            // nvmet answers NAPD != 1 with this explanation too
            throw new AuthMessageException(AuthProtocol.HASH_UNUSABLE, "AUTH_Negotiate with NAPD " + napd + " (1)");
        }
        if (Messages.u8(b, 8) != AuthProtocol.AUTH_ID_DHCHAP) {
            throw new AuthMessageException(
                    AuthProtocol.INCORRECT_PAYLOAD,
                    "AUTH_Negotiate: AUTHID " + Messages.u8(b, 8) + " (01h DH-HMAC-CHAP)");
        }
        int halen = Messages.u8(b, 10);
        int dhlen = Messages.u8(b, 11);
        if (halen > MAX_IDS || dhlen > MAX_IDS) {
            throw new AuthMessageException(
                    AuthProtocol.INCORRECT_PAYLOAD, "AUTH_Negotiate: HALEN " + halen + " / DHLEN " + dhlen + " (≤ 30)");
        }
        List<DhchapHash> hashes = new ArrayList<>();
        for (int i = 0; i < halen; i++) {
            DhchapHash h = DhchapHash.of(Messages.u8(b, 12 + i));
            if (h != null && !hashes.contains(h)) {
                hashes.add(h);
            }
        }
        List<DhGroup> groups = new ArrayList<>();
        for (int i = 0; i < dhlen; i++) {
            DhGroup g = DhGroup.of(Messages.u8(b, 12 + MAX_IDS + i));
            if (g != null && !groups.contains(g)) {
                groups.add(g);
            }
        }
        return new NegotiateMessage(Messages.u16(b, 4), Messages.u8(b, 6), hashes, groups);
    }
}
