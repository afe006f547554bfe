package io.nvmeof.transport.rdma.verbs;

/** Receives connection requests on a listener (RDMA_CM_EVENT_CONNECT_REQUEST). */
@FunctionalInterface
public interface ConnectionRequestHandler {
    /**
     * Decide on {@code request}: call {@link ConnectionRequest#accept} or {@link ConnectionRequest#reject} before
     * returning, or later from any thread.
     */
    void onConnectionRequest(ConnectionRequest request);
}
