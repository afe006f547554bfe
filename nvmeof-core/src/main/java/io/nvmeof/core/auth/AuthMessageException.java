package io.nvmeof.core.auth;

/**
 * A DH-HMAC-CHAP message that cannot be used, or a step that failed, with the Reason Code Explanation a failure message
 * carries for it ({@link AuthProtocol#INCORRECT_PAYLOAD}, {@link AuthProtocol#HASH_UNUSABLE}, ...). The message
 * never contains key material.
 */
public final class AuthMessageException extends Exception {
    private static final long serialVersionUID = 1L;

    private final int explanation;

    public AuthMessageException(int explanation, String message) {
        super(message);
        this.explanation = explanation;
    }

    /** The Reason Code Explanation for the failure message. */
    public int explanation() {
        return explanation;
    }
}
