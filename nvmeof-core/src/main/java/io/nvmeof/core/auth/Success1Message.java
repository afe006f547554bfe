package io.nvmeof.core.auth;

import java.nio.ByteBuffer;

/**
 * DH-HMAC-CHAP_Success1 (NVMe Base 2.0 §8.13.5.5), controller to host: the host is authenticated; with RVALID it
 * carries the controller's response R2 to the host's challenge C2.
 *
 * <pre>
 *  0 AUTH_Type 01h | 1 AUTH_Id 03h | 2-3 reserved | 4-5 T_ID | 6 HL | 7 reserved | 8 RVALID | 9-15 reserved
 *  16.. R2 (HL bytes, when RVALID)
 * </pre>
 */
public record Success1Message(int tid, int hl, byte[] response) {
    /** Whether it carries the controller's response (RVALID). */
    public boolean responseValid() {
        return response != null;
    }

    public byte[] encode() {
        ByteBuffer b = Messages.allocate(AuthProtocol.HEADER_LENGTH + (response == null ? 0 : hl));
        Messages.header(b, AuthProtocol.TYPE_DHCHAP, AuthProtocol.ID_SUCCESS1, tid);
        b.put(6, (byte) hl);
        if (response != null) {
            b.put(8, (byte) 1).put(AuthProtocol.HEADER_LENGTH, response);
        }
        return b.array();
    }

    public static Success1Message decode(byte[] m) throws AuthMessageException {
        ByteBuffer b = Messages.expect(
                m,
                AuthProtocol.HEADER_LENGTH,
                AuthProtocol.TYPE_DHCHAP,
                AuthProtocol.ID_SUCCESS1,
                "DH-HMAC-CHAP_Success1");
        int hl = Messages.u8(b, 6);
        boolean rvalid = (Messages.u8(b, 8) & 1) != 0;
        if (rvalid && m.length < AuthProtocol.HEADER_LENGTH + hl) {
            throw new AuthMessageException(AuthProtocol.INCORRECT_PAYLOAD, "Success1 shorter than its response");
        }
        return new Success1Message(
                Messages.u16(b, 4), hl, rvalid ? Messages.bytes(b, AuthProtocol.HEADER_LENGTH, hl) : null);
    }
}
