package io.nvmeof.core.auth;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import javax.crypto.Mac;

/**
 * The DH-HMAC-CHAP computations (NVMe Base 2.0 §8.13.5.2, with the byte order the Linux host and nvmet use):
 *
 * <pre>
 *   R1 = HMAC(Kh, Ca || LE32(S1) || LE16(T_ID) || 00h || "HostHost"   || NQNh || 00h || NQNc)
 *   R2 = HMAC(Kc, Cb || LE32(S2) || LE16(T_ID) || 00h || "Controller" || NQNc || 00h || NQNh)
 *   with a DH group: Ca = HMAC(H(g^xy mod p), C1), Cb = HMAC(H(g^xy mod p), C2) (the augmented challenges);
 *   with the null group: Ca = C1, Cb = C2
 * </pre>
 *
 * where Kh and Kc are the transformed host and controller keys ({@link DhchapSecret#transform}) and HMAC and H use the
 * negotiated hash. Stateless.
 */
public final class DhchapResponse {
    private static final byte[] HOST_HOST = "HostHost".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONTROLLER = "Controller".getBytes(StandardCharsets.US_ASCII);

    private DhchapResponse() {}

    /** The augmented challenge HMAC(H(sessionKey), challenge), HL bytes. */
    public static byte[] augmentedChallenge(DhchapHash h, byte[] sessionKey, byte[] challenge) {
        Mac mac = h.mac(h.digest(sessionKey));
        return mac.doFinal(challenge);
    }

    /** R1, the host's response; {@code challenge} is C1 or, with a DH group, the augmented C1. */
    public static byte[] host(
            DhchapHash h, byte[] hostKey, byte[] challenge, int seqnum, int tid, String hostNqn, String subNqn) {
        return compute(h, hostKey, challenge, seqnum, tid, HOST_HOST, hostNqn, subNqn);
    }

    /** R2, the controller's response; {@code challenge} is C2 or, with a DH group, the augmented C2. */
    public static byte[] controller(
            DhchapHash h, byte[] ctrlKey, byte[] challenge, int seqnum, int tid, String subNqn, String hostNqn) {
        return compute(h, ctrlKey, challenge, seqnum, tid, CONTROLLER, subNqn, hostNqn);
    }

    /** Compares two responses in constant time. */
    public static boolean matches(byte[] expected, byte[] received) {
        return MessageDigest.isEqual(expected, received);
    }

    private static byte[] compute(
            DhchapHash h,
            byte[] key,
            byte[] challenge,
            int seqnum,
            int tid,
            byte[] label,
            String first,
            String second) {
        Mac mac = h.mac(key);
        mac.update(challenge);
        mac.update(ByteBuffer.allocate(7)
                .order(ByteOrder.LITTLE_ENDIAN)
                .putInt(seqnum)
                .putShort((short) tid)
                .put((byte) 0)
                .array());
        mac.update(label);
        mac.update(first.getBytes(StandardCharsets.UTF_8));
        mac.update((byte) 0);
        mac.update(second.getBytes(StandardCharsets.UTF_8));
        return mac.doFinal();
    }
}
