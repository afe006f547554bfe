package io.nvmeof.core.host;

import io.nvmeof.core.command.DataDirection;
import io.nvmeof.core.spi.HostCommand;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;

/**
 * The checks every host transport makes on a {@link HostCommand}'s data description in {@code HostQueue.submit},
 * before the CID is claimed: a caller error is refused with an {@link IllegalArgumentException} and nothing about the
 * command reaches the wire. Allocation-free unless it refuses.
 *
 * <ul>
 *   <li>dataLength ≥ 0; with data, a buffer, and {@code [dataOffset, dataOffset + dataLength)} inside its capacity;</li>
 *   <li>the direction from the opcode ({@link DataDirection#of(SubmissionQueueEntry)}): data needs one, and a
 *       bidirectional command cannot be carried by a fabrics binding (one SGL, one direction);</li>
 *   <li>a read (controller to host) needs a writable buffer;</li>
 *   <li>at most the transport's transfer limit in one command.</li>
 * </ul>
 */
public final class HostDataCheck {
    private HostDataCheck() {}

    /**
     * Checks {@code command}'s data against the rules above; {@code maxTransfer} is the transport's limit on one
     * command's data.
     *
     * @return the command's direction ({@link DataDirection#NONE} when it moves no data)
     * @throws IllegalArgumentException naming what is wrong
     */
    public static DataDirection check(HostCommand command, long maxTransfer) {
        SubmissionQueueEntry sqe = command.command();
        int length = command.dataLength();
        if (length < 0) {
            throw new IllegalArgumentException("negative dataLength " + length + " (CID " + sqe.cid() + ")");
        }
        if (length == 0) {
            return DataDirection.NONE;
        }
        ByteBuffer b = command.dataBuffer();
        if (b == null) {
            throw new IllegalArgumentException("dataLength " + length + " but no dataBuffer (CID " + sqe.cid() + ")");
        }
        int offset = command.dataOffset();
        if (offset < 0 || offset > b.capacity() - length) {
            throw new IllegalArgumentException("data [" + offset + ", " + ((long) offset + length)
                    + ") lies outside a buffer of capacity " + b.capacity() + " (CID " + sqe.cid() + ")");
        }
        DataDirection direction = DataDirection.of(sqe);
        if (direction == DataDirection.NONE) {
            throw new IllegalArgumentException(String.format(
                    "opcode 0x%02x moves no data (bits 1:0 are 00, nvmeof-protocol.md §1.1) but dataLength is %d",
                    sqe.opcode(), length));
        }
        if (direction == DataDirection.BIDIRECTIONAL) {
            throw new IllegalArgumentException(String.format(
                    "opcode 0x%02x is bidirectional, which NVMe over Fabrics cannot carry (one data direction per "
                            + "command)",
                    sqe.opcode()));
        }
        if (direction == DataDirection.CONTROLLER_TO_HOST && b.isReadOnly()) {
            throw new IllegalArgumentException("a read-only buffer cannot receive data (CID " + sqe.cid() + ")");
        }
        if (length > maxTransfer) {
            throw new IllegalArgumentException(
                    length + " bytes in one command: this transport moves at most " + maxTransfer + " (MDTS)");
        }
        return direction;
    }
}
