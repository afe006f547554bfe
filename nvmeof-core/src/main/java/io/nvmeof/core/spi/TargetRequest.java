package io.nvmeof.core.spi;

import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;

/**
 * One command in flight on a target queue: a reusable slot owned by the transport (the TCP transfer tag or the RDMA
 * wr_id is its index). It belongs to the core from {@link QueueHandler#onCommand} until {@link #complete()}; all calls
 * happen on the queue's own thread.
 *
 * <p>Lifecycle, mirroring nvmet and SPDK (docs/ARCHITECTURE.md):
 * <pre>
 *   onCommand(req) ─► [req.receiveData(receiver) ─► receiver.onData(req, status)]   host→controller data
 *                  ─► [req.addData(...)]*                                           controller→host data
 *                  ─► req.response().dw0(..)/status(..) ─► req.complete()
 * </pre>
 *
 * <p>Every transport implements it by extending {@link TargetRequestBase}, which holds what they share (the SQE and
 * CQE, the data description, the slot's state and the once-only rules of {@code receiveData} and {@code complete}).
 */
public interface TargetRequest {
    /** The command. Valid until {@link #complete()}. */
    SubmissionQueueEntry command();

    /**
     * The response the core fills: DW0, DW1, SQID, SQHD and STATUS. The transport has zeroed it and fills CID. Valid
     * until {@link #complete()}.
     */
    CompletionQueueEntry response();

    /**
     * Non-zero if the transport found the data pointer unusable for this binding (wrong SGL type, in-capsule data
     * too long, in-capsule data on a read, ...): the status to complete with, e.g. SGL Descriptor Type Invalid + DNR.
     */
    int transportStatus();

    /** Data bytes the command's SGL describes (0 if none), whatever the direction. */
    int dataLength();

    /** Whether the host-to-controller data came inside the command capsule. */
    boolean inCapsuleData();

    /**
     * Fetches the command's host-to-controller data ({@link #dataLength()} bytes) and calls
     * {@code receiver.onData(this, status)} on the queue thread, at once if the data came in the capsule, otherwise
     * after the transfer (TCP: R2T + H2CData; RDMA: RDMA Read). Called at most once per command.
     */
    void receiveData(DataReceiver receiver);

    /**
     * Host-to-controller data, after {@link DataReceiver#onData} with status 0: a little-endian buffer whose bytes
     * {@code [0, dataLength())} are the data (absolute indexing; position and limit are unspecified). Owned by the
     * transport; valid until {@link #complete()}.
     */
    ByteBuffer data();

    /**
     * Appends {@code length} bytes of {@code source}, starting at absolute index {@code offset}, to the
     * controller-to-host data of this command. The transport sends them without copying where it can (TCP: the
     * buffer goes to the socket; RDMA: RDMA Write from registered memory) and calls {@code release} exactly once when it
     * no longer needs them. The total must not exceed {@link #dataLength()}. {@code source} must stay unchanged until
     * then.
     */
    void addData(ByteBuffer source, int offset, int length, DataRelease release);

    /**
     * {@link System#nanoTime()} when the command's capsule arrived, for the target's latency statistics; 0 if the
     * transport does not record it (then no latency is recorded for the command).
     */
    default long arrivalNanos() {
        return 0;
    }

    /**
     * Whether the host-to-controller data of this command can be placed straight into memory the core names with
     * {@link #addDestination} (RDMA: an RDMA Read into registered namespace memory), instead of arriving in
     * {@link #data()} to be copied. The answer is the same for the whole life of the command, so the core may ask again
     * in its {@link DataReceiver}. If the core names no destination, the data arrives in {@link #data()} as usual.
     * False by default, and always false for in-capsule data.
     */
    default boolean directDataPlacement() {
        return false;
    }

    /**
     * Names where the next {@code length} bytes of this command's host-to-controller data go: bytes
     * {@code [offset, offset + length)} of {@code destination} (absolute indexes). Only when
     * {@link #directDataPlacement()} is true, before {@link #receiveData}, in data order, until {@link #dataLength()}
     * bytes are named. {@link #receiveData} then moves the data straight there and calls the receiver; {@link #data()}
     * is not used. {@code release} is called exactly once when the transport no longer writes there (after the
     * receiver's call, at {@link #complete()} if no data was asked for, or when the queue closes). If the data
     * transfer fails (non-zero status) the destination bytes are undefined.
     *
     * @throws UnsupportedOperationException if the transport does not place data directly (release is called first)
     */
    default void addDestination(ByteBuffer destination, int offset, int length, DataRelease release) {
        if (release != null) {
            release.release();
        }
        throw new UnsupportedOperationException("this transport does not place data directly");
    }

    /**
     * Sends the response (and any data added), after which the request is the transport's again. The core must have
     * set {@code response().status()} (0 for success).
     */
    void complete();
}
