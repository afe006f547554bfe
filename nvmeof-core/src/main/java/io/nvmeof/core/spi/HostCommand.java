package io.nvmeof.core.spi;

import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;

/**
 * One command an initiator sends on a {@link HostQueue}: a reusable slot owned by the initiator (one per command ID),
 * handed to the transport by {@link HostQueue#submit} and given back by exactly one of {@link #onResponse} or
 * {@link #onTransportError}.
 *
 * <p>The transport reads the command and the data description, fills SGL1 as its binding wants (TCP: 0x01 in-capsule
 * or 0x5A; RDMA: in-capsule or keyed, nvmeof-protocol.md §1.3), moves the data, and never writes any other SQE field.
 */
public interface HostCommand {
    /** The 64-byte command with its CID set; valid from submit until the callback. */
    SubmissionQueueEntry command();

    /**
     * The data buffer, or null when {@link #dataLength()} is 0. For a host-to-controller command the transport reads
     * {@code [dataOffset, dataOffset + dataLength)}; for controller-to-host it writes there (absolute indexes; position
     * and limit are not used). The direction comes from the opcode (nvmeof-protocol.md §1.1).
     */
    ByteBuffer dataBuffer();

    int dataOffset();

    int dataLength();

    /**
     * The controller's response, on the queue's thread. {@code response} is valid only during the call. A data
     * digest error on received data is reported as a response with status Data Transfer Error (nvmeof-protocol.md §5.8), and a C2HData
     * with SUCCESS as a response with status 0 and DW0 = DW1 = 0 (nvmeof-protocol.md §5.10).
     */
    void onResponse(CompletionQueueEntry response);

    /** The queue failed or was closed before a response came; the command's outcome is unknown. */
    void onTransportError(Throwable cause);
}
