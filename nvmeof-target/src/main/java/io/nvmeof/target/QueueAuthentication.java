package io.nvmeof.target;

import io.nvmeof.core.auth.AuthMessageException;
import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.auth.ChallengeMessage;
import io.nvmeof.core.auth.DhGroup;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapResponse;
import io.nvmeof.core.auth.FailureMessage;
import io.nvmeof.core.auth.NegotiateMessage;
import io.nvmeof.core.auth.ReplyMessage;
import io.nvmeof.core.auth.Success1Message;
import io.nvmeof.target.config.HostAuth;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The controller's side of DH-HMAC-CHAP on one queue (NVMe Base 2.0 §8.13.5; the steps of Linux nvmet's
 * fabrics-cmd-auth.c): the host sends AUTH_Negotiate, receives the Challenge, sends its Reply, receives Success1 (with
 * the controller's response when it asked for one) and, bidirectionally, sends Success2. A failure makes the next
 * Authentication Receive return AUTH_Failure1 with its reason; a new AUTH_Negotiate starts over (re-authentication).
 * Until a transaction succeeds the queue takes nothing but Authentication Send/Receive ({@link QueueSession}).
 *
 * <p>Owned by one {@link QueueSession}, used on its thread only. Not on the I/O path. Log lines name the host, the
 * subsystem and the queue, never a key.
 */
final class QueueAuthentication {
    private static final Logger LOG = System.getLogger("io.nvmeof.target");
    private static final SecureRandom RANDOM = new SecureRandom();
    /** S1 for every challenge: a random start, then +1, never 0 (nvme_auth_get_seqnum). */
    private static final AtomicInteger SEQNUM = new AtomicInteger(RANDOM.nextInt());

    /** What the controller expects next, named after the message (as nvmet's dhchap_step). */
    enum Step {
        NEGOTIATE,
        CHALLENGE,
        REPLY,
        SUCCESS1,
        SUCCESS2,
        FAILURE1,
        /** The transaction ended (success or a reported failure); only a new AUTH_Negotiate moves on. */
        DONE
    }

    private final Subsystem subsystem;
    /** The host's settings, read again from the subsystem at each AUTH_Negotiate (keys can change at run time). */
    private HostAuth settings;

    private final String hostNqn;
    private final String subNqn;
    private final int qid;

    private Step step = Step.NEGOTIATE;
    private boolean authenticated;
    private int tid;
    private int failure;
    private DhchapHash hash;
    private DhGroup group;
    private KeyPair keyPair;
    private byte[] sessionKey;
    private byte[] c1;
    private int s1;
    private byte[] c2;
    private int s2;

    QueueAuthentication(Subsystem subsystem, HostAuth settings, int qid) {
        this.subsystem = subsystem;
        this.settings = settings;
        this.hostNqn = settings.hostNqn();
        this.subNqn = subsystem.nqn();
        this.qid = qid;
    }

    /** Whether a transaction succeeded on this queue (and no later one failed). */
    boolean authenticated() {
        return authenticated;
    }

    Step step() {
        return step;
    }

    /** An Authentication Send's payload. Protocol failures are recorded for the next receive, not returned. */
    void send(byte[] m) {
        if (m.length >= 2 && (m[0] & 0xFF) == AuthProtocol.TYPE_COMMON && (m[1] & 0xFF) == AuthProtocol.ID_NEGOTIATE) {
            negotiate(m);
            return;
        }
        if (FailureMessage.is(m)) {
            failure2(m);
            return;
        }
        try {
            if (m.length < 6 || (m[0] & 0xFF) != AuthProtocol.TYPE_DHCHAP) {
                throw new AuthMessageException(AuthProtocol.INCORRECT_MESSAGE, "an unknown message");
            }
            int id = m[1] & 0xFF;
            int msgTid = (m[4] & 0xFF) | (m[5] & 0xFF) << 8;
            if (id == AuthProtocol.ID_REPLY && step == Step.REPLY) {
                checkTid(msgTid);
                reply(ReplyMessage.decode(m, hash.length()));
            } else if (id == AuthProtocol.ID_SUCCESS2 && step == Step.SUCCESS2) {
                checkTid(msgTid);
                authenticated = true;
                finish();
                LOG.log(Level.INFO, describe("authenticated bidirectionally"));
            } else {
                throw new AuthMessageException(
                        AuthProtocol.INCORRECT_MESSAGE,
                        String.format(
                                "message %02xh while expecting %s",
                                id, step.name().toLowerCase()));
            }
        } catch (AuthMessageException e) {
            fail(e.explanation(), e.getMessage());
        }
    }

    /**
     * The payload for an Authentication Receive of {@code al} bytes: the Challenge, Success1 or Failure1; null if
     * {@code al} is too small for it (the step does not change, so the host may ask again).
     */
    byte[] receive(int al) {
        byte[] out;
        switch (step) {
            case CHALLENGE:
                out = challenge(al);
                if (out == null) {
                    return null;
                }
                step = Step.REPLY;
                return out;
            case SUCCESS1:
                out = success1();
                if (out == null) {
                    return receive(al); // failed: the Failure1 goes out instead
                }
                if (out.length > al) {
                    return null;
                }
                if (c2 != null) {
                    step = Step.SUCCESS2;
                } else {
                    finish();
                }
                return out;
            default:
                if (step != Step.FAILURE1) {
                    fail(
                            AuthProtocol.FAILED,
                            "Authentication Receive while expecting "
                                    + step.name().toLowerCase());
                }
                if (al < FailureMessage.LENGTH) {
                    return null;
                }
                out = new FailureMessage(tid, true, failure).encode();
                authenticated = false;
                finish();
                return out;
        }
    }

    // ---- steps ----

    private void negotiate(byte[] m) {
        NegotiateMessage n;
        try {
            n = NegotiateMessage.decode(m);
        } catch (AuthMessageException e) {
            tid = m.length >= 6 ? (m[4] & 0xFF) | (m[5] & 0xFF) << 8 : 0;
            fail(e.explanation(), e.getMessage());
            return;
        }
        clearSecrets();
        tid = n.tid();
        HostAuth current = subsystem.hostAuth(hostNqn);
        if (current == null) {
            fail(AuthProtocol.FAILED, "the host has no DH-HMAC-CHAP key on the subsystem any more");
            return;
        }
        settings = current;
        if (n.scC() != AuthProtocol.SC_C_NONE) {
            fail(AuthProtocol.CONCAT_MISMATCH, "secure channel concatenation (SC_C " + n.scC() + ") is not supported");
            return;
        }
        hash = settings.hashes().stream()
                .filter(n.hashes()::contains)
                .findFirst()
                .orElse(null);
        if (hash == null) {
            fail(
                    AuthProtocol.HASH_UNUSABLE,
                    "no common hash function (host " + n.hashes() + ", allowed " + settings.hashes() + ")");
            return;
        }
        group = settings.groups().stream()
                .filter(n.groups()::contains)
                .findFirst()
                .orElse(null);
        if (group == null) {
            fail(
                    AuthProtocol.DHGROUP_UNUSABLE,
                    "no common DH group (host " + n.groups() + ", allowed " + settings.groups() + ")");
            return;
        }
        step = Step.CHALLENGE;
    }

    private byte[] challenge(int al) {
        int hl = hash.length();
        if (al < AuthProtocol.HEADER_LENGTH + hl + group.valueLength()) {
            return null;
        }
        c1 = new byte[hl];
        RANDOM.nextBytes(c1);
        s1 = nextSeqnum();
        byte[] dh = new byte[0];
        if (!group.isNull()) {
            keyPair = group.generateKeyPair(RANDOM);
            dh = group.publicValue(keyPair);
        }
        return new ChallengeMessage(tid, hash, group, s1, c1, dh).encode();
    }

    private void reply(ReplyMessage r) throws AuthMessageException {
        byte[] challenge = c1;
        if (group.isNull()) {
            if (r.dhValue().length != 0) {
                throw new AuthMessageException(AuthProtocol.INCORRECT_PAYLOAD, "a DH value with the null group");
            }
        } else {
            try {
                sessionKey = group.sharedSecret(keyPair, r.dhValue());
            } catch (GeneralSecurityException e) {
                throw new AuthMessageException(AuthProtocol.DHGROUP_UNUSABLE, "the host's DH value: " + e.getMessage());
            }
            challenge = DhchapResponse.augmentedChallenge(hash, sessionKey, c1);
        }
        byte[] kh = settings.key().transform(hostNqn);
        byte[] expected = DhchapResponse.host(hash, kh, challenge, s1, tid, hostNqn, subNqn);
        Arrays.fill(kh, (byte) 0);
        if (!DhchapResponse.matches(expected, r.response())) {
            throw new AuthMessageException(AuthProtocol.FAILED, "the host's response does not match (wrong host key?)");
        }
        if (r.challengeValid() && r.seqnum() != 0) {
            c2 = r.challenge();
            s2 = r.seqnum();
        } else {
            c2 = null;
            authenticated = true;
        }
        step = Step.SUCCESS1;
    }

    /** Success1, with R2 when the host sent a challenge; null (and Failure1 next) without a controller key. */
    private byte[] success1() {
        int hl = hash.length();
        if (c2 == null) {
            LOG.log(Level.INFO, describe("authenticated"));
            return new Success1Message(tid, hl, null).encode();
        }
        if (settings.ctrlKey() == null) {
            fail(AuthProtocol.FAILED, "the host asks for bidirectional authentication but no controller key is set");
            return null;
        }
        byte[] challenge = sessionKey == null ? c2 : DhchapResponse.augmentedChallenge(hash, sessionKey, c2);
        byte[] kc = settings.ctrlKey().transform(subNqn);
        byte[] r2 = DhchapResponse.controller(hash, kc, challenge, s2, tid, subNqn, hostNqn);
        Arrays.fill(kc, (byte) 0);
        return new Success1Message(tid, hl, r2).encode();
    }

    private void failure2(byte[] m) {
        int why = m.length >= FailureMessage.LENGTH ? m[7] & 0xFF : AuthProtocol.FAILED;
        authenticated = false;
        LOG.log(
                Level.WARNING,
                describe("failed: the host refused the controller (AUTH_Failure2: " + AuthProtocol.explanation(why)
                        + "; wrong controller key on one side?)"));
        finish();
    }

    private void checkTid(int msgTid) throws AuthMessageException {
        if (msgTid != tid) {
            throw new AuthMessageException(AuthProtocol.INCORRECT_PAYLOAD, "T_ID " + msgTid + " (" + tid + ")");
        }
    }

    private void fail(int explanation, String why) {
        failure = explanation;
        step = Step.FAILURE1;
        authenticated = false;
        clearSecrets();
        LOG.log(
                Level.WARNING,
                describe("failed: " + why + " → AUTH_Failure1 (" + AuthProtocol.explanation(explanation) + ")"));
    }

    private void finish() {
        step = Step.DONE;
        clearSecrets();
    }

    private void clearSecrets() {
        if (sessionKey != null) {
            Arrays.fill(sessionKey, (byte) 0);
        }
        sessionKey = null;
        keyPair = null;
        c1 = null;
        c2 = null;
        s2 = 0;
    }

    private String describe(String what) {
        return "DH-HMAC-CHAP: host " + hostNqn + " on " + subNqn + " QID " + qid
                + (hash == null ? "" : " (" + hash.shortName() + ", " + (group == null ? "-" : group.groupName()) + ")")
                + " " + what;
    }

    private static int nextSeqnum() {
        int s;
        do {
            s = SEQNUM.incrementAndGet();
        } while (s == 0);
        return s;
    }
}
