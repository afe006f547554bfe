package io.nvmeof.core.spi;

import io.nvmeof.core.command.DataDirection;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * What every transport's {@link TargetRequest} holds, written once, as each Linux nvmet transport embeds one
 * {@code struct nvmet_req} in its own command: the SQE and CQE flyweights, the data description the transport found
 * in the SGL (length, in-capsule, transport status), the data direction, the slot's {@link State}, and the
 * at-most-once rule of {@link #receiveData}. A subclass adds only what its binding needs: where the data lives and
 * how it moves ({@link #transferData}), and how the response is sent ({@link #sendResponse}).
 *
 * <p>Ownership: the slot, its buffers and every method that is not in {@link TargetRequest} are the transport's; it
 * calls {@link #begin()} when a command lands in the slot and sets the data description before handing the request
 * to {@link QueueHandler#onCommand}. The core sees only the {@link TargetRequest} interface. All calls happen on the
 * queue's thread, so nothing here is synchronised.
 *
 * <pre>
 *  FREE --command arrives: begin()--&gt; WITH_CORE --receiveData, data not here yet: receivingData(..)--&gt; RECEIVING_DATA
 *                                        ^   |                                                             |
 *                                        |   +------------------------------------- dataReceived() &lt;-----+
 *                                        |   +-- complete() --&gt; sendResponse() --&gt; the transport's again (FREE)
 *                                        +-- (DEAD: the queue closed while the core held it; complete() is ignored)
 * </pre>
 */
public abstract class TargetRequestBase implements TargetRequest {
    /** Where a slot is in a command's life; the transport moves it, {@link #complete()} checks it. */
    public enum State {
        /** Not in use: waiting for a command. */
        FREE,
        /** The core holds the command (from onCommand until complete). */
        WITH_CORE,
        /** The transport is fetching the host-to-controller data (TCP: R2T/H2CData; RDMA: RDMA Read). */
        RECEIVING_DATA,
        /** The queue closed while the core held the command; everything was released then. */
        DEAD
    }

    /** A zero-length little-endian buffer, {@link #data()} of a command without data. */
    protected static final ByteBuffer EMPTY = ByteBuffer.allocate(0).order(ByteOrder.LITTLE_ENDIAN);

    private final SubmissionQueueEntry command = new SubmissionQueueEntry();
    private final CompletionQueueEntry response = new CompletionQueueEntry();

    private State state = State.FREE;
    private int cid;
    private long arrivalNanos;
    private int transportStatus;
    private int dataLength;
    private boolean inCapsule;
    private boolean hostToController;
    private boolean dataRequested;
    private DataReceiver receiver;

    /** A slot with its own 64-byte SQE and 16-byte CQE buffers (heap, little endian). */
    protected TargetRequestBase() {
        this(
                ByteBuffer.allocate(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN),
                0,
                ByteBuffer.allocate(CompletionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN),
                0);
    }

    /**
     * A slot whose SQE and CQE live in the transport's memory, read and written in place (RDMA: the receive buffer
     * and the registered response region). Both buffers must be little endian.
     */
    protected TargetRequestBase(
            ByteBuffer commandMemory, int commandOffset, ByteBuffer responseMemory, int responseOffset) {
        command.wrap(commandMemory, commandOffset);
        response.wrap(responseMemory, responseOffset);
    }

    // ---- the transport's side ----

    /**
     * A new command is in {@link #command()}: zeroes the response and fills its CID, takes the data direction from
     * the opcode (or FCTYPE), clears the data description and hands the slot to the core ({@link State#WITH_CORE}).
     * The transport then sets the data description from the SGL.
     */
    public final void begin() {
        begin(System.nanoTime());
    }

    /**
     * As {@link #begin()}, with the arrival time read by the transport: capsules that came in one socket read arrived
     * together, so a transport may read the clock once per read and pass it to each of them.
     */
    public final void begin(long arrivalNanos) {
        this.arrivalNanos = arrivalNanos;
        cid = command.cid();
        response.clear();
        response.cid(cid);
        hostToController = DataDirection.of(command).hostToController();
        clearCommand();
        state = State.WITH_CORE;
    }

    /** Forgets the data description and the data request of the last command; the state is left as it is. */
    protected final void clearCommand() {
        transportStatus = 0;
        dataLength = 0;
        inCapsule = false;
        dataRequested = false;
        receiver = null;
    }

    public final State state() {
        return state;
    }

    public final void state(State state) {
        this.state = state;
    }

    /** The command's CID, as it was when the command arrived. */
    @Override
    public final long arrivalNanos() {
        return arrivalNanos;
    }

    public final int cid() {
        return cid;
    }

    /** Bit 0 of the opcode (or FCTYPE): the command moves data from the host to the controller. */
    public final boolean hostToController() {
        return hostToController;
    }

    /** Whether the core has asked for the data of this command ({@link #receiveData}). */
    public final boolean dataRequested() {
        return dataRequested;
    }

    /** Sets the data length the SGL describes. */
    public TargetRequestBase dataLength(int length) {
        this.dataLength = length;
        return this;
    }

    /** Sets the status the core must complete with because the data pointer is unusable (0: usable). */
    public TargetRequestBase transportStatus(int status) {
        this.transportStatus = status;
        return this;
    }

    /** Sets whether the host-to-controller data came in the command capsule. */
    public TargetRequestBase inCapsuleData(boolean inCapsule) {
        this.inCapsule = inCapsule;
        return this;
    }

    /** The data transfer starts: {@link State#RECEIVING_DATA} until {@link #dataReceived()}. */
    public final void receivingData(DataReceiver receiver) {
        this.receiver = receiver;
        state = State.RECEIVING_DATA;
    }

    /** The data transfer is over: the request is the core's again; returns the receiver to call. */
    public final DataReceiver dataReceived() {
        DataReceiver r = receiver;
        receiver = null;
        state = State.WITH_CORE;
        return r;
    }

    /** Throws unless the core holds the request: the core must not touch a request after complete(). */
    protected final void checkWithCore(String what) {
        if (state != State.WITH_CORE) {
            throw new IllegalStateException(what + " on a request in state " + state + " (CID " + cid
                    + "): the core must not touch a request after complete() or while its data is arriving");
        }
    }

    /**
     * Fetches the host-to-controller data and calls {@code receiver.onData(this, status)}, at once or after the
     * transfer ({@link #receivingData}, then {@link #dataReceived()}). Called once per command, with the core.
     */
    protected abstract void transferData(DataReceiver receiver);

    /** Sends the response and any data added; the request is the transport's again. Called once per command. */
    protected abstract void sendResponse();

    // ---- TargetRequest ----

    @Override
    public final SubmissionQueueEntry command() {
        return command;
    }

    @Override
    public final CompletionQueueEntry response() {
        return response;
    }

    @Override
    public final int transportStatus() {
        return transportStatus;
    }

    @Override
    public final int dataLength() {
        return dataLength;
    }

    @Override
    public final boolean inCapsuleData() {
        return inCapsule;
    }

    @Override
    public final void receiveData(DataReceiver receiver) {
        checkWithCore("receiveData");
        if (dataRequested) {
            throw new IllegalStateException("receiveData called twice for CID " + cid);
        }
        dataRequested = true;
        transferData(receiver);
    }

    @Override
    public final void complete() {
        if (state == State.DEAD) {
            return; // the queue closed while the core held it: everything was released then
        }
        checkWithCore("complete()");
        sendResponse();
    }
}
