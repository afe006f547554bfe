package io.nvmeof.core.auth;

import java.nio.ByteBuffer;

/**
 * DH-HMAC-CHAP_Reply (NVMe Base 2.0 §8.13.5.4), host to controller: the host's response R1, the challenge C2 for
 * bidirectional authentication (valid if CVALID; SEQNUM S2 is 0 when the host does not authenticate the controller),
 * and the host's DH public value. C2 is always present (zero when not valid), as the Linux host sends it.
 *
 * <pre>
 *  0 AUTH_Type 01h | 1 AUTH_Id 02h | 2-3 reserved | 4-5 T_ID | 6 HL | 7 reserved | 8 CVALID | 9 reserved
 *  10-11 DHVLEN | 12-15 SEQNUM | 16.. R1 (HL) | C2 (HL) | DH value (DHVLEN)
 * </pre>
 */
public record ReplyMessage(
        int tid, byte[] response, boolean challengeValid, int seqnum, byte[] challenge, byte[] dhValue) {
    public byte[] encode() {
        int hl = response.length;
        ByteBuffer b = Messages.allocate(AuthProtocol.HEADER_LENGTH + 2 * hl + dhValue.length);
        Messages.header(b, AuthProtocol.TYPE_DHCHAP, AuthProtocol.ID_REPLY, tid);
        b.put(6, (byte) hl).put(8, (byte) (challengeValid ? 1 : 0));
        b.putShort(10, (short) dhValue.length).putInt(12, seqnum);
        b.put(AuthProtocol.HEADER_LENGTH, response);
        if (challengeValid) {
            b.put(AuthProtocol.HEADER_LENGTH + hl, challenge);
        }
        b.put(AuthProtocol.HEADER_LENGTH + 2 * hl, dhValue);
        return b.array();
    }

    /** Decodes it; HL must be {@code expectedHl} (the negotiated hash's length), and the lengths must fit the message. */
    public static ReplyMessage decode(byte[] m, int expectedHl) throws AuthMessageException {
        ByteBuffer b = Messages.expect(
                m, AuthProtocol.HEADER_LENGTH, AuthProtocol.TYPE_DHCHAP, AuthProtocol.ID_REPLY, "DH-HMAC-CHAP_Reply");
        int hl = Messages.u8(b, 6);
        int dhvlen = Messages.u16(b, 10);
        if (hl != expectedHl) {
            throw new AuthMessageException(AuthProtocol.HASH_UNUSABLE, "reply with HL " + hl + " (" + expectedHl + ")");
        }
        if (AuthProtocol.HEADER_LENGTH + 2 * hl + dhvlen > m.length) {
            throw new AuthMessageException(AuthProtocol.INCORRECT_PAYLOAD, "reply shorter than 2 × HL + DHVLEN");
        }
        boolean cvalid = (Messages.u8(b, 8) & 1) != 0;
        return new ReplyMessage(
                Messages.u16(b, 4),
                Messages.bytes(b, AuthProtocol.HEADER_LENGTH, hl),
                cvalid,
                b.getInt(12),
                Messages.bytes(b, AuthProtocol.HEADER_LENGTH + hl, hl),
                Messages.bytes(b, AuthProtocol.HEADER_LENGTH + 2 * hl, dhvlen));
    }
}
