package io.nvmeof.target;

import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.TargetRequest;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import java.nio.ByteBuffer;

/**
 * Authentication Send (FCTYPE 05h) and Authentication Receive (06h) on one queue (nvmeof-protocol.md §2.5, NVMe Base
 * 2.0 §6.2–6.3): on a queue whose host has no key they are Invalid Opcode (as before authentication existed here, and
 * as in nvmet without it); otherwise the field checks nvmet makes (SECP E9h, SPSP0 = SPSP1 = 01h, TL/AL not zero and equal to the data
 * length, each Invalid Field in Command with DNR), then the payload goes to or comes from the queue's
 * {@link QueueAuthentication}. Owned by {@link FabricsCommands}; on the queue's thread; not on the I/O path.
 */
final class AuthenticationCommands {
    private final QueueSession session;

    AuthenticationCommands(QueueSession session) {
        this.session = session;
    }

    /** Authentication Send: checks the fields, then fetches the payload (continues in {@link #sendData}). */
    void send(TargetRequest request, SubmissionQueueEntry c) {
        if (authentication(request) != null && checkFields(request, c)) {
            request.receiveData(session);
        }
    }

    /** The Authentication Send payload has arrived. */
    void sendData(TargetRequest request, SubmissionQueueEntry c) {
        QueueAuthentication auth = authentication(request);
        if (auth == null) {
            return;
        }
        byte[] m = new byte[request.dataLength()];
        request.data().get(0, m);
        auth.send(m);
        session.complete(request, Status.SUCCESS);
    }

    /** Authentication Receive: the Challenge, Success1 or Failure1, zero-padded to AL bytes as nvmet sends it. */
    void receive(TargetRequest request, SubmissionQueueEntry c) {
        QueueAuthentication auth = authentication(request);
        if (auth == null || !checkFields(request, c)) {
            return;
        }
        int al = request.dataLength();
        byte[] m = auth.receive(al);
        if (m == null) {
            session.refuse(
                    request,
                    Status.dnr(Status.INVALID_FIELD),
                    null,
                    "Authentication Receive with AL " + al + ", too small for the " + auth.step() + " message");
            return;
        }
        byte[] out = m.length == al ? m : java.util.Arrays.copyOf(m, al);
        request.addData(ByteBuffer.wrap(out), 0, al, DataRelease.NONE);
        session.complete(request, Status.SUCCESS);
    }

    private boolean checkFields(TargetRequest request, SubmissionQueueEntry c) {
        String bad = null;
        if (c.authSecp() != AuthProtocol.SECP_DHCHAP) {
            bad = "SECP 0x" + Integer.toHexString(c.authSecp()) + " (E9h)";
        } else if (c.authSpsp0() != AuthProtocol.SPSP || c.authSpsp1() != AuthProtocol.SPSP) {
            bad = "SPSP0/SPSP1 " + c.authSpsp0() + "/" + c.authSpsp1() + " (1/1)";
        } else if (c.authLength() <= 0 || c.authLength() != request.dataLength()) {
            bad = "TL/AL " + Integer.toUnsignedString(c.authLength()) + " with " + request.dataLength()
                    + " bytes of data";
        }
        if (bad != null) {
            session.refuse(request, Status.dnr(Status.INVALID_FIELD), null, "Authentication Send/Receive: " + bad);
            return false;
        }
        return true;
    }

    /**
     * The queue's authentication state, or null after refusing the command because there is none: Invalid Opcode
     * (DNR), what the other fabrics types nobody implements get, and what nvmet built without authentication answers.
     */
    private QueueAuthentication authentication(TargetRequest request) {
        QueueAuthentication auth = session.authentication();
        if (auth == null) {
            session.complete(request, Status.dnr(Status.INVALID_OPCODE));
        }
        return auth;
    }
}
