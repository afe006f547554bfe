package io.nvmeof.core.auth;

/**
 * The constants of NVMe in-band authentication (NVMe Base 2.0 §8.13, TP 8006; nvmeof-protocol.md §2.5; the values
 * as Linux's include/linux/nvme.h has them): the security protocol of Authentication Send/Receive, the message types
 * and identifiers, the failure reason codes, and the AUTHREQ bits of the Connect response.
 */
public final class AuthProtocol {
    private AuthProtocol() {}

    /** SECP of Authentication Send/Receive: NVMe in-band authentication. */
    public static final int SECP_DHCHAP = 0xE9;
    /** SPSP0 and SPSP1: both 01h for DH-HMAC-CHAP (the Linux host sends them, nvmet requires them). */
    public static final int SPSP = 0x01;

    /** Connect response DW0 bit 17: AUTHREQ.ATR, an authentication transaction is required. */
    public static final int CONNECT_AUTHREQ_ATR = 1 << 17;
    /** Connect response DW0 bit 18: AUTHREQ.ASCR, authentication and secure channel concatenation required. */
    public static final int CONNECT_AUTHREQ_ASCR = 1 << 18;

    // AUTH_Type (byte 0 of every message).
    public static final int TYPE_COMMON = 0x00;
    public static final int TYPE_DHCHAP = 0x01;

    // AUTH_Id (byte 1).
    public static final int ID_NEGOTIATE = 0x00;
    public static final int ID_CHALLENGE = 0x01;
    public static final int ID_REPLY = 0x02;
    public static final int ID_SUCCESS1 = 0x03;
    public static final int ID_SUCCESS2 = 0x04;
    public static final int ID_FAILURE2 = 0xF0;
    public static final int ID_FAILURE1 = 0xF1;

    /** AUTHID of the DH-HMAC-CHAP protocol descriptor in AUTH_Negotiate. */
    public static final int AUTH_ID_DHCHAP = 0x01;
    /** SC_C of AUTH_Negotiate: no secure channel concatenation. */
    public static final int SC_C_NONE = 0x00;

    /** Reason Code of a failure message: authentication failure. */
    public static final int REASON_FAILED = 0x01;

    // Reason Code Explanation (rescode_exp).
    public static final int FAILED = 0x01;
    public static final int NOT_USABLE = 0x02;
    public static final int CONCAT_MISMATCH = 0x03;
    public static final int HASH_UNUSABLE = 0x04;
    public static final int DHGROUP_UNUSABLE = 0x05;
    public static final int INCORRECT_PAYLOAD = 0x06;
    public static final int INCORRECT_MESSAGE = 0x07;

    /** The message header every DH-HMAC-CHAP message but the failures starts with. */
    public static final int HEADER_LENGTH = 16;

    /** A readable name for a Reason Code Explanation. */
    public static String explanation(int code) {
        switch (code) {
            case FAILED:
                return "authentication failed (DH-HMAC-CHAP_Failed)";
            case NOT_USABLE:
                return "authentication protocol not usable";
            case CONCAT_MISMATCH:
                return "secure channel concatenation mismatch";
            case HASH_UNUSABLE:
                return "hash function not usable";
            case DHGROUP_UNUSABLE:
                return "DH group not usable";
            case INCORRECT_PAYLOAD:
                return "incorrect payload";
            case INCORRECT_MESSAGE:
                return "incorrect protocol message";
            default:
                return "reason 0x" + Integer.toHexString(code);
        }
    }
}
