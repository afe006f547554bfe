package io.nvmeof.target.rpc;

/**
 * A JSON-RPC 2.0 error object: {@code code} and {@code message}. The codes are SPDK's: the JSON-RPC ones
 * ({@link #INVALID_PARAMS} and friends) and negated errno values where SPDK returns those ({@link #ENODEV},
 * {@link #EEXIST}).
 */
public final class RpcException extends Exception {
    public static final int PARSE_ERROR = -32700;
    public static final int INVALID_REQUEST = -32600;
    public static final int METHOD_NOT_FOUND = -32601;
    public static final int INVALID_PARAMS = -32602;
    public static final int INTERNAL_ERROR = -32603;
    /** -ENODEV: SPDK's answer for a bdev that does not exist. */
    public static final int ENODEV = -19;
    /** -EEXIST: SPDK's answer for a bdev name already taken. */
    public static final int EEXIST = -17;

    private final int code;

    public RpcException(int code, String message) {
        super(message, null, false, false);
        this.code = code;
    }

    public int code() {
        return code;
    }

    static RpcException invalidParams(String message) {
        return new RpcException(INVALID_PARAMS, message);
    }
}
