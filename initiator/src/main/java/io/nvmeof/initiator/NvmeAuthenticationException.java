package io.nvmeof.initiator;

/**
 * DH-HMAC-CHAP failed on a queue (docs/security.md): the controller refused the host (AUTH_Failure1, e.g. a wrong
 * host key), the host refused the controller (its response did not match the controller secret; the host then sent
 * AUTH_Failure2), the controller asked for authentication and the host has no secret, or the exchange broke the
 * protocol. The message names the queue and the reason, never a key.
 *
 * <p>{@link #keyRejected()} tells a refused key from the rest: a reconnect does not try again after it, as the Linux
 * host does not (nvmf_should_reconnect after -EKEYREJECTED); other authentication failures of a reconnect attempt
 * are failed attempts like any other, retried until ctrl_loss_tmo ({@link ControllerRecovery}).
 */
public class NvmeAuthenticationException extends NvmeException {
    private static final long serialVersionUID = 1L;

    private final int explanation;
    private final boolean keyRejected;

    /**
     * @param explanation the Reason Code Explanation of the failure message sent or received
     *     (io.nvmeof.core.auth.AuthProtocol), or 0 when no message was exchanged
     */
    public NvmeAuthenticationException(String message, int explanation) {
        this(message, explanation, false);
    }

    /**
     * @param explanation as above
     * @param keyRejected the exchange refused a key: the controller sent AUTH_Failure1, or the controller's response
     *     did not match the host's controller secret
     */
    public NvmeAuthenticationException(String message, int explanation, boolean keyRejected) {
        super(message);
        this.explanation = explanation;
        this.keyRejected = keyRejected;
    }

    /** As above, caused by {@code cause} (the connection closed during the exchange); not a rejected key. */
    public NvmeAuthenticationException(String message, int explanation, Throwable cause) {
        super(message, cause);
        this.explanation = explanation;
        this.keyRejected = false;
    }

    /** The Reason Code Explanation (AuthProtocol.FAILED, HASH_UNUSABLE, ...), or 0. */
    public int explanation() {
        return explanation;
    }

    /**
     * Whether a key was refused in the exchange (AUTH_Failure1 from the controller, or the controller's response did
     * not match): trying again with the same secrets cannot succeed, so a reconnect stops (Linux: -EKEYREJECTED).
     */
    public boolean keyRejected() {
        return keyRejected;
    }
}
