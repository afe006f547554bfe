package io.nvmeof.target;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * The reservation notices of one controller (NVMe Base 2.0, Reservations, §8.19): the Reservation Notification log
 * page (LID 80h), one 64-byte page per notice, oldest first, each read taking one; the Reservation Notification Mask
 * feature (FID 82h) per namespace; and the asynchronous event (type 6, I/O command set specific, information 00h,
 * log 80h) raised through the controller's {@link AsyncEvents}.
 *
 * <p>Owned by its {@link Controller}. Notices are posted by {@link Reservations} from any I/O queue thread and read
 * on the admin thread, so every method holds this object's monitor (a cold path: reservation commands only).
 */
final class ReservationNotices {
    /** Reservation Notification Log Page Type values. */
    static final int REGISTRATION_PREEMPTED = 1;

    static final int RESERVATION_RELEASED = 2;
    static final int RESERVATION_PREEMPTED = 3;
    /** The log page size. */
    static final int PAGE = 64;
    /** Notices kept before new ones are lost (their count still advances), as nvmet's per-controller FIFO. */
    static final int QUEUE_DEPTH = 64;
    /** Mask bits 1 (REGPRE), 2 (RESREL), 3 (RESPRE); every other bit is reserved. */
    static final int MASK_BITS = 0x0E;

    private final AsyncEvents events;
    private final ArrayDeque<long[]> queue = new ArrayDeque<>();
    private final Map<Integer, Integer> masks = new HashMap<>();
    /** Log Page Count of the last notice generated (lost ones included); 0 means none yet, and is skipped on wrap. */
    private long count;

    ReservationNotices(AsyncEvents events) {
        this.events = events;
    }

    /** A notice of {@code kind} for namespace {@code nsid}; dropped if masked, lost (count advances) if the queue is full. */
    synchronized void post(int kind, int nsid) {
        if ((masks.getOrDefault(nsid, 0) & (1 << kind)) != 0) {
            return;
        }
        count = count == -1L ? 1 : count + 1;
        if (queue.size() >= QUEUE_DEPTH) {
            return;
        }
        queue.add(new long[] {count, kind, nsid & 0xFFFFFFFFL});
        events.reservationNotice();
    }

    /**
     * LID 80h read now: the oldest notice (Log Page Count 0–7, type 8, number of further pages 9 (at most 255), NSID
     * 12–15), or an empty page (count 0) if there is none. Unless RAE, the event is unmasked for the next notice.
     */
    synchronized ByteBuffer read(boolean retainEvent) {
        ByteBuffer b = ByteBuffer.allocate(PAGE).order(ByteOrder.LITTLE_ENDIAN);
        long[] n = queue.poll();
        if (n != null) {
            b.putLong(0, n[0]);
            b.put(8, (byte) n[1]);
            b.put(9, (byte) Math.min(255, queue.size()));
            b.putInt(12, (int) n[2]);
        }
        events.reservationLogRead(retainEvent, !queue.isEmpty());
        return b;
    }

    /** Set Features 82h: NSID FFFFFFFFh sets every namespace, else the namespace must exist. */
    synchronized int setMask(Subsystem subsystem, SubmissionQueueEntry c) {
        int value = c.cdw11();
        if ((value & ~MASK_BITS) != 0) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        int nsid = c.nsid();
        if (nsid == 0xFFFFFFFF) {
            for (var ns : subsystem.namespaces()) {
                masks.put(ns.nsid(), value);
            }
            return Status.SUCCESS;
        }
        if (subsystem.namespace(nsid) == null) {
            return Status.dnr(Status.INVALID_NAMESPACE);
        }
        masks.put(nsid, value);
        return Status.SUCCESS;
    }

    /** Get Features 82h: DW0 = the namespace's mask; SEL 3 answers "namespace specific, changeable". */
    synchronized int getMask(Subsystem subsystem, TargetRequest request, SubmissionQueueEntry c) {
        int nsid = c.nsid();
        if (subsystem.namespace(nsid) == null) {
            return Status.dnr(Status.INVALID_NAMESPACE);
        }
        int sel = (c.cdw10() >>> 8) & 0x7;
        if (sel > 3) {
            return Status.dnr(Status.INVALID_FIELD);
        }
        request.response().dw0(sel == 3 ? 0x6 : sel == 0 ? masks.getOrDefault(nsid, 0) : 0);
        return Status.SUCCESS;
    }
}
