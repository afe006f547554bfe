package io.nvmeof.core.auth;

import java.nio.ByteBuffer;

/**
 * DH-HMAC-CHAP_Success2 (NVMe Base 2.0 §8.13.5.6), host to controller after a bidirectional exchange: the host accepted
 * the controller's response. 16 bytes: 0 AUTH_Type 01h | 1 AUTH_Id 04h | 2-3 reserved | 4-5 T_ID | 6-15 reserved.
 */
public record Success2Message(int tid) {
    public static final int LENGTH = 16;

    public byte[] encode() {
        ByteBuffer b = Messages.allocate(LENGTH);
        Messages.header(b, AuthProtocol.TYPE_DHCHAP, AuthProtocol.ID_SUCCESS2, tid);
        return b.array();
    }

    public static Success2Message decode(byte[] m) throws AuthMessageException {
        ByteBuffer b =
                Messages.expect(m, 6, AuthProtocol.TYPE_DHCHAP, AuthProtocol.ID_SUCCESS2, "DH-HMAC-CHAP_Success2");
        return new Success2Message(Messages.u16(b, 4));
    }
}
