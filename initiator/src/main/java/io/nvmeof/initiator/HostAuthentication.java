package io.nvmeof.initiator;

import io.nvmeof.core.auth.AuthMessageException;
import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.auth.ChallengeMessage;
import io.nvmeof.core.auth.DhchapResponse;
import io.nvmeof.core.auth.FailureMessage;
import io.nvmeof.core.auth.NegotiateMessage;
import io.nvmeof.core.auth.ReplyMessage;
import io.nvmeof.core.auth.Success1Message;
import io.nvmeof.core.auth.Success2Message;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The host's side of DH-HMAC-CHAP on one queue, in the Linux host's order (drivers/nvme/host/auth.c,
 * nvme_queue_auth_work; docs/security.md): AUTH_Negotiate offering SHA-256, SHA-384, SHA-512 and the null group then
 * ffdhe2048 ... ffdhe8192 (the controller chooses); receive the Challenge; the DH exchange if a group was chosen;
 * the Reply with R1 and, for bidirectional authentication, the challenge C2; receive Success1 and check the
 * controller's R2; Success2. A Failure1 from the controller, or an R2 that does not match (answered with Failure2),
 * ends it with {@link NvmeAuthenticationException}.
 *
 * <p>Owned by one {@link Controller}; runs on the thread that connects, reconnects or re-authenticates, one queue at
 * a time. A reconnect authenticates each re-opened I/O queue in its {@link CommandQueue#connectSlot}: the commands
 * parked in the other slots go out only after it.
 */
final class HostAuthentication {
    private static final Logger LOG = System.getLogger("io.nvmeof.initiator");
    private static final SecureRandom RANDOM = new SecureRandom();
    /** S2: a random start, then +1, never 0 (nvme_auth_get_seqnum). */
    private static final AtomicInteger SEQNUM = new AtomicInteger(RANDOM.nextInt());
    /** The receive buffer the Linux host uses (CHAP_BUF_SIZE): room for an ffdhe8192 challenge. */
    static final int RECEIVE_LENGTH = 4096;

    private final Controller controller;
    private final DhchapKeys keys;
    /** T_ID of the next transaction (the Linux host's ctrl->transaction). */
    private final AtomicInteger transaction = new AtomicInteger();

    HostAuthentication(Controller controller, DhchapKeys keys) {
        this.controller = controller;
        this.keys = keys;
    }

    /**
     * Runs one DH-HMAC-CHAP transaction on {@code q}, its commands one after the other in {@code slot} (null: any
     * free slot of the queue).
     */
    /**
     * Re-authentication ({@link Controller#reauthenticate}, NVMe Base 2.0 §8.13): the admin queue, then every I/O
     * queue; only while LIVE. A failure fails the controller.
     */
    void reauthenticate() throws NvmeException {
        ControllerState s = controller.state();
        if (s != ControllerState.LIVE) {
            throw new NvmeTransportException("cannot re-authenticate a controller that is " + s
                    + (s == ControllerState.RECONNECTING ? " (the reconnect authenticates every new queue)" : ""));
        }
        try {
            authenticate(controller.queues().admin(), null);
            for (CommandQueue q : controller.queues().io()) {
                authenticate(q, null);
            }
        } catch (NvmeAuthenticationException e) {
            controller.teardown().fail(e);
            throw e;
        }
    }

    void authenticate(CommandQueue q, CommandSlot slot) throws NvmeException {
        AdminCommands commands = controller.commands();
        String hostNqn = controller.host().hostNqn();
        String subNqn = controller.uri().connectNqn();
        String where =
                (q.qid == 0 ? "admin queue" : "I/O queue " + q.qid) + " of " + subNqn + " at " + controller.hostPort();
        int tid = transaction.getAndIncrement() & 0xFFFF;

        commands.authenticationSend(q, slot, NegotiateMessage.linuxOrder(tid).encode());
        byte[] m = commands.authenticationReceive(q, slot, RECEIVE_LENGTH);
        ChallengeMessage challenge;
        try {
            refused(m, where);
            challenge = ChallengeMessage.decode(m);
            if (challenge.tid() != tid) {
                throw new AuthMessageException(AuthProtocol.INCORRECT_MESSAGE, "challenge for T_ID " + challenge.tid());
            }
        } catch (AuthMessageException e) {
            throw failure2(q, slot, tid, e, where);
        }
        var hash = challenge.hash();
        var group = challenge.group();
        byte[] c1 = challenge.challenge();
        byte[] sessionKey = null;
        byte[] dh = new byte[0];
        if (!group.isNull()) {
            KeyPair pair = group.generateKeyPair(RANDOM);
            dh = group.publicValue(pair);
            try {
                sessionKey = group.sharedSecret(pair, challenge.dhValue());
            } catch (GeneralSecurityException e) {
                throw failure2(
                        q,
                        slot,
                        tid,
                        new AuthMessageException(
                                AuthProtocol.DHGROUP_UNUSABLE, "the controller's DH value: " + e.getMessage()),
                        where);
            }
            c1 = DhchapResponse.augmentedChallenge(hash, sessionKey, c1);
        }
        byte[] kh = keys.secret().transform(hostNqn);
        byte[] r1 = DhchapResponse.host(hash, kh, c1, challenge.seqnum(), tid, hostNqn, subNqn);
        Arrays.fill(kh, (byte) 0);
        byte[] c2 = new byte[hash.length()];
        int s2 = 0;
        if (keys.bidirectional()) {
            RANDOM.nextBytes(c2);
            s2 = nextSeqnum();
        }
        commands.authenticationSend(q, slot, new ReplyMessage(tid, r1, keys.bidirectional(), s2, c2, dh).encode());
        try {
            m = commands.authenticationReceive(q, slot, RECEIVE_LENGTH);
        } catch (NvmeTransportException e) {
            // nvmet tears the controller down as soon as it refuses a host, often before its Failure1 goes out.
            throw new NvmeAuthenticationException(
                    "DH-HMAC-CHAP on the " + where + ": the controller closed the connection instead of answering"
                            + " the host's response (nvmet does so when it refuses the host: wrong dhchap_secret?)",
                    0,
                    e);
        }
        try {
            refused(m, where);
            Success1Message s1 = Success1Message.decode(m);
            if (s1.tid() != tid || s1.hl() != hash.length()) {
                throw new AuthMessageException(
                        AuthProtocol.INCORRECT_PAYLOAD, "Success1 with T_ID " + s1.tid() + " and HL " + s1.hl());
            }
            if (keys.bidirectional()) {
                if (!s1.responseValid()) {
                    throw new AuthMessageException(
                            AuthProtocol.FAILED, "the controller sent no response to the host's challenge");
                }
                byte[] cb = sessionKey == null ? c2 : DhchapResponse.augmentedChallenge(hash, sessionKey, c2);
                byte[] kc = keys.ctrlSecret().transform(subNqn);
                byte[] r2 = DhchapResponse.controller(hash, kc, cb, s2, tid, subNqn, hostNqn);
                Arrays.fill(kc, (byte) 0);
                if (!DhchapResponse.matches(r2, s1.response())) {
                    throw new AuthMessageException(
                            AuthProtocol.FAILED,
                            "the controller's response does not match (wrong controller secret on one side?)");
                }
                commands.authenticationSend(q, slot, new Success2Message(tid).encode());
            }
        } catch (AuthMessageException e) {
            throw failure2(q, slot, tid, e, where);
        } finally {
            if (sessionKey != null) {
                Arrays.fill(sessionKey, (byte) 0);
            }
        }
        LOG.log(
                q.qid == 0 ? Level.INFO : Level.DEBUG,
                "DH-HMAC-CHAP: " + where + " authenticated (" + hash.shortName() + ", " + group.groupName()
                        + (keys.bidirectional() ? ", bidirectional)" : ")"));
    }

    /** If {@code m} is the controller's AUTH_Failure1: the exception for it. */
    private static void refused(byte[] m, String where) throws NvmeAuthenticationException {
        if (FailureMessage.is(m)) {
            int why = m[7] & 0xFF;
            throw new NvmeAuthenticationException(
                    "DH-HMAC-CHAP on the " + where + ": the controller refused the host: "
                            + AuthProtocol.explanation(why)
                            + (why == AuthProtocol.FAILED ? " (wrong dhchap_secret?)" : ""),
                    why,
                    true);
        }
    }

    /** Tells the controller with AUTH_Failure2 (best effort) and returns the exception to throw. */
    private NvmeAuthenticationException failure2(
            CommandQueue q, CommandSlot slot, int tid, AuthMessageException e, String where) {
        try {
            controller.commands().authenticationSend(q, slot, new FailureMessage(tid, false, e.explanation()).encode());
        } catch (NvmeException ignored) {
            // the queue is failing anyway; the reason below is what matters
        }
        return new NvmeAuthenticationException(
                "DH-HMAC-CHAP on the " + where + " failed: " + e.getMessage() + " ("
                        + AuthProtocol.explanation(e.explanation()) + ")",
                e.explanation(),
                e.explanation() == AuthProtocol.FAILED); // the controller's response did not match
    }

    private static int nextSeqnum() {
        int s;
        do {
            s = SEQNUM.incrementAndGet();
        } while (s == 0);
        return s;
    }
}
