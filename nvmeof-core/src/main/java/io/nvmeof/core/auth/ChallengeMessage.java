package io.nvmeof.core.auth;

import java.nio.ByteBuffer;

/**
 * DH-HMAC-CHAP_Challenge (NVMe Base 2.0 §8.13.5.3), controller to host: the chosen hash and DH group, the sequence
 * number S1, the challenge C1 (HL bytes) and the controller's DH public value (DHVLEN bytes, none for the null group).
 *
 * <pre>
 *  0 AUTH_Type 01h | 1 AUTH_Id 01h | 2-3 reserved | 4-5 T_ID | 6 HL | 7 reserved | 8 HashID | 9 DHgroup ID
 *  10-11 DHVLEN | 12-15 SEQNUM | 16.. C1 (HL bytes) | DH value (DHVLEN bytes)
 * </pre>
 */
public record ChallengeMessage(int tid, DhchapHash hash, DhGroup group, int seqnum, byte[] challenge, byte[] dhValue) {
    public byte[] encode() {
        ByteBuffer b = Messages.allocate(AuthProtocol.HEADER_LENGTH + challenge.length + dhValue.length);
        Messages.header(b, AuthProtocol.TYPE_DHCHAP, AuthProtocol.ID_CHALLENGE, tid);
        b.put(6, (byte) challenge.length).put(8, (byte) hash.id()).put(9, (byte) group.id());
        b.putShort(10, (short) dhValue.length).putInt(12, seqnum);
        b.put(AuthProtocol.HEADER_LENGTH, challenge).put(AuthProtocol.HEADER_LENGTH + challenge.length, dhValue);
        return b.array();
    }

    /** Decodes and checks it as the Linux host does: a known hash with HL its length, a known group, DHVLEN consistent. */
    public static ChallengeMessage decode(byte[] m) throws AuthMessageException {
        ByteBuffer b = Messages.expect(
                m,
                AuthProtocol.HEADER_LENGTH,
                AuthProtocol.TYPE_DHCHAP,
                AuthProtocol.ID_CHALLENGE,
                "DH-HMAC-CHAP_Challenge");
        int hl = Messages.u8(b, 6);
        DhchapHash hash = DhchapHash.of(Messages.u8(b, 8));
        if (hash == null || hash.length() != hl) {
            throw new AuthMessageException(
                    AuthProtocol.HASH_UNUSABLE, "challenge with HashID " + Messages.u8(b, 8) + " and HL " + hl);
        }
        DhGroup group = DhGroup.of(Messages.u8(b, 9));
        if (group == null) {
            throw new AuthMessageException(
                    AuthProtocol.DHGROUP_UNUSABLE, "challenge with DH group " + Messages.u8(b, 9));
        }
        int dhvlen = Messages.u16(b, 10);
        if (group.isNull() ? dhvlen != 0 : dhvlen != group.valueLength()) {
            throw new AuthMessageException(
                    group.isNull() ? AuthProtocol.INCORRECT_PAYLOAD : AuthProtocol.DHGROUP_UNUSABLE,
                    "challenge with DHVLEN " + dhvlen + " for group " + group.groupName());
        }
        if (m.length < AuthProtocol.HEADER_LENGTH + hl + dhvlen) {
            throw new AuthMessageException(AuthProtocol.INCORRECT_PAYLOAD, "challenge shorter than HL + DHVLEN");
        }
        return new ChallengeMessage(
                Messages.u16(b, 4),
                hash,
                group,
                b.getInt(12),
                Messages.bytes(b, AuthProtocol.HEADER_LENGTH, hl),
                Messages.bytes(b, AuthProtocol.HEADER_LENGTH + hl, dhvlen));
    }
}
