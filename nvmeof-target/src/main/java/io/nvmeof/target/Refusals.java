package io.nvmeof.target;

import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.util.RateLimitedLog;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;

/**
 * The WARNING lines for commands of one connection that we refuse for a reason other than a plain NVMe error: a
 * transport status (a bad SGL, a bad in-capsule length), a bad PSDT or FUSE, a command before Connect or before
 * CC.EN, a refused Connect. Each line names the host NQN when it is known, the queue, the remote address, the
 * command and what was wrong, so the next interop failure explains itself. At most {@link #LINES_PER_SECOND} lines a
 * second per connection ({@link RateLimitedLog}). Owned by its {@link QueueSession}; the refusal paths are cold.
 */
final class Refusals {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");
    /** Lines per second per connection. */
    static final int LINES_PER_SECOND = 10;

    private final QueueSession session;
    private final RateLimitedLog log = new RateLimitedLog(LOG, LINES_PER_SECOND);

    Refusals(QueueSession session) {
        this.session = session;
    }

    /** Logs why {@code request} is refused with {@code status}; {@code hostNqn} may be null (then the controller's). */
    void refused(TargetRequest request, int status, String hostNqn, String why) {
        log.log(Level.WARNING, () -> line(request, status, hostNqn, why));
    }

    private String line(TargetRequest request, int status, String hostNqn, String why) {
        Controller c = session.controller();
        String host = hostNqn != null ? hostNqn : c != null ? c.hostNqn() : "(not connected)";
        SubmissionQueueEntry sqe = request.command();
        SglDescriptor sgl = sqe.sgl();
        return "refused a command from host " + host + " (" + session.channel().remoteAddress() + ", queue "
                + session.qid() + "): opcode 0x" + Integer.toHexString(sqe.opcode()) + ", CID " + sqe.cid()
                + ", FLAGS 0x" + Integer.toHexString(sqe.flags()) + ", SGL1 identifier 0x"
                + Integer.toHexString(sgl.identifier()) + " length " + sgl.dataLength() + ": " + why + "; answered "
                + Status.toString(status);
    }
}
