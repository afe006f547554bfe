package io.nvmeof.core.auth;

import java.nio.ByteBuffer;

/**
 * AUTH_Failure1 (controller to host, in place of the message the host asked for) or AUTH_Failure2 (host to controller),
 * NVMe Base 2.0 §8.13.4.2: the transaction failed, with a Reason Code (01h) and its explanation.
 *
 * <pre>
 *  0 AUTH_Type 00h | 1 AUTH_Id F1h (Failure1) / F0h (Failure2) | 2-3 reserved | 4-5 T_ID | 6 Reason Code | 7 Explanation
 * </pre>
 */
public record FailureMessage(int tid, boolean failure1, int explanation) {
    public static final int LENGTH = 8;

    public byte[] encode() {
        ByteBuffer b = Messages.allocate(LENGTH);
        Messages.header(
                b, AuthProtocol.TYPE_COMMON, failure1 ? AuthProtocol.ID_FAILURE1 : AuthProtocol.ID_FAILURE2, tid);
        b.put(6, (byte) AuthProtocol.REASON_FAILED).put(7, (byte) explanation);
        return b.array();
    }

    /** Whether {@code m} is a failure message (either kind). */
    public static boolean is(byte[] m) {
        int k = Messages.kind(m);
        return k == (AuthProtocol.TYPE_COMMON << 8 | AuthProtocol.ID_FAILURE1)
                || k == (AuthProtocol.TYPE_COMMON << 8 | AuthProtocol.ID_FAILURE2);
    }

    public static FailureMessage decode(byte[] m) throws AuthMessageException {
        if (!is(m) || m.length < LENGTH) {
            throw new AuthMessageException(AuthProtocol.INCORRECT_MESSAGE, "not an AUTH_Failure message");
        }
        ByteBuffer b = Messages.wrap(m);
        return new FailureMessage(Messages.u16(b, 4), Messages.u8(b, 1) == AuthProtocol.ID_FAILURE1, Messages.u8(b, 7));
    }
}
