package io.nvmeof.initiator;

/**
 * DH-HMAC-CHAP failed on a queue (docs/security.md): the controller refused the host (AUTH_Failure1, e.g. a wrong
 * host key), the host refused the controller (its response did not match the controller secret; the host then sent
 * AUTH_Failure2), the controller asked for authentication and the host has no secret, or the exchange broke the
 * protocol. The message names the queue and the reason, never a key.
 */
public class NvmeAuthenticationException extends NvmeException {
    private static final long serialVersionUID = 1L;

    private final int explanation;

    /**
     * @param explanation the Reason Code Explanation of the failure message sent or received
     *     (io.nvmeof.core.auth.AuthProtocol), or 0 when no message was exchanged
     */
    public NvmeAuthenticationException(String message, int explanation) {
        super(message);
        this.explanation = explanation;
    }

    /** As above, caused by {@code cause} (the connection closed during the exchange). */
    public NvmeAuthenticationException(String message, int explanation, Throwable cause) {
        super(message, cause);
        this.explanation = explanation;
    }

    /** The Reason Code Explanation (AuthProtocol.FAILED, HASH_UNUSABLE, ...), or 0. */
    public int explanation() {
        return explanation;
    }
}
