package io.nvmeof.target;

import static io.nvmeof.target.InJvmHost.check;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.auth.ChallengeMessage;
import io.nvmeof.core.auth.DhGroup;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapResponse;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.core.auth.FailureMessage;
import io.nvmeof.core.auth.NegotiateMessage;
import io.nvmeof.core.auth.ReplyMessage;
import io.nvmeof.core.auth.Success1Message;
import io.nvmeof.core.auth.Success2Message;
import io.nvmeof.core.command.Properties;
import io.nvmeof.core.command.Status;
import io.nvmeof.target.config.HostAuth;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The controller's side of DH-HMAC-CHAP, driven message by message with the core codecs as the Linux host sends them
 * (drivers/nvme/host/auth.c): ATR in the Connect response, Authentication Required for everything else until the
 * exchange succeeds, uni- and bidirectional exchanges, a wrong key answered with AUTH_Failure1, the field checks of
 * Authentication Send/Receive, and re-authentication.
 */
class AuthenticationTest {
    static final String NQN = "nqn.2024-01.io.nvmeof:auth";
    static final String HOST = InJvmHost.HOST_NQN;
    static final DhchapSecret HOST_KEY = DhchapSecret.of(bytes(32, 1), DhchapHash.SHA_256);
    static final DhchapSecret CTRL_KEY = DhchapSecret.of(bytes(48, 2), null);
    private static final SecureRandom RANDOM = new SecureRandom();

    private NvmeTarget target;
    private InJvmHost host;

    static byte[] bytes(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }

    private void start(HostAuth auth) {
        SubsystemConfig s = new SubsystemConfig(
                        NQN, false, List.of(), List.of(NamespaceConfig.of(1, 1L << 20)), null, null)
                .withHostAuth(List.of(auth));
        target = NvmeTarget.create(new TargetConfig(List.of(), List.of(s), 1L << 30, 0));
        host = new InJvmHost(target);
    }

    @AfterEach
    void tearDown() {
        if (host != null) {
            host.close();
        }
        if (target != null) {
            target.close();
        }
    }

    static FakeRequest authSend(byte[] m) {
        FakeRequest r = new FakeRequest().send(m);
        r.sqe().opcode(0x7F).fctype(0x05).auth(AuthProtocol.SECP_DHCHAP, 1, 1, m.length);
        return r;
    }

    static FakeRequest authReceive(int al) {
        FakeRequest r = new FakeRequest().expect(al);
        r.sqe().opcode(0x7F).fctype(0x06).auth(AuthProtocol.SECP_DHCHAP, 1, 1, al);
        return r;
    }

    /** One exchange as the Linux host runs it; returns the Success1 (or Failure1) payload. */
    private byte[] exchange(InJvmQueue q, DhchapSecret hostKey, DhchapSecret ctrlKey, int tid, boolean sendSuccess2)
            throws Exception {
        check(q.call(authSend(NegotiateMessage.linuxOrder(tid).encode())));
        FakeRequest cr = check(q.call(authReceive(4096)));
        ChallengeMessage ch = ChallengeMessage.decode(cr.received());
        assertEquals(tid, ch.tid());
        byte[] challenge = ch.challenge();
        byte[] dh = new byte[0];
        byte[] session = null;
        if (!ch.group().isNull()) {
            KeyPair kp = ch.group().generateKeyPair(RANDOM);
            dh = ch.group().publicValue(kp);
            session = ch.group().sharedSecret(kp, ch.dhValue());
            challenge = DhchapResponse.augmentedChallenge(ch.hash(), session, challenge);
        }
        byte[] r1 = DhchapResponse.host(ch.hash(), hostKey.transform(HOST), challenge, ch.seqnum(), tid, HOST, NQN);
        byte[] c2 = new byte[ch.hash().length()];
        RANDOM.nextBytes(c2);
        int s2 = ctrlKey == null ? 0 : 0x5EED;
        check(q.call(authSend(new ReplyMessage(tid, r1, ctrlKey != null, s2, c2, dh).encode())));
        byte[] s1 = check(q.call(authReceive(4096))).received();
        if (ctrlKey != null && !FailureMessage.is(s1)) {
            Success1Message m = Success1Message.decode(s1);
            byte[] cb = session == null ? c2 : DhchapResponse.augmentedChallenge(ch.hash(), session, c2);
            byte[] r2 = DhchapResponse.controller(ch.hash(), ctrlKey.transform(NQN), cb, s2, tid, NQN, HOST);
            assertArrayEquals(r2, m.response(), "the controller's response");
            if (sendSuccess2) {
                check(q.call(authSend(new Success2Message(tid).encode())));
            }
        }
        return s1;
    }

    @Test
    void unidirectionalThenAdminCommandsRun() throws Exception {
        start(new HostAuth(HOST, HOST_KEY, null));
        FakeRequest c = check(host.connectAdmin(NQN, 5000));
        assertEquals(AuthProtocol.CONNECT_AUTHREQ_ATR, c.dw0() & 0xFFFF0000, "ATR");
        assertEquals(
                Status.dnr(Status.AUTHENTICATION_REQUIRED),
                host.propertyGet(Properties.CAP, true).status());
        assertEquals(
                Status.dnr(Status.AUTHENTICATION_REQUIRED),
                host.admin(InJvmHost.identify(1, 0)).status() & ~Status.MORE_BIT);
        byte[] s1 = exchange(host.admin, HOST_KEY, null, 3, false);
        assertNull(Success1Message.decode(s1).response());
        host.enable();
        check(host.admin(InJvmHost.identify(1, 0)));
        // I/O queues authenticate too.
        check(host.admin(InJvmHost.setFeatures(0x07, 0)));
        FakeRequest io = check(host.connectIo(1, 31));
        assertEquals(AuthProtocol.CONNECT_AUTHREQ_ATR, io.dw0() & 0xFFFF0000);
        assertEquals(
                Status.dnr(Status.AUTHENTICATION_REQUIRED),
                host.io(InJvmHost.read(1, 0, 1, 4096)).status() & ~Status.MORE_BIT);
        exchange(host.io.get(1), HOST_KEY, null, 4, false);
        check(host.io(InJvmHost.read(1, 0, 1, 4096)));
        // Re-authentication on request, on an authenticated queue.
        exchange(host.admin, HOST_KEY, null, 5, false);
        check(host.admin(InJvmHost.identify(1, 0)));
    }

    @Test
    void bidirectionalWithEachGroupButTheSlowest() throws Exception {
        for (DhGroup g : List.of(DhGroup.NULL, DhGroup.FFDHE2048, DhGroup.FFDHE4096)) {
            tearDown();
            start(new HostAuth(HOST, HOST_KEY, CTRL_KEY, List.of(DhchapHash.SHA_512), List.of(g)));
            check(host.connectAdmin(NQN, 5000));
            byte[] s1 = exchange(host.admin, HOST_KEY, CTRL_KEY, 9, false);
            assertTrue(Success1Message.decode(s1).responseValid(), g.groupName());
            // Not authenticated before Success2.
            assertEquals(
                    Status.dnr(Status.AUTHENTICATION_REQUIRED),
                    host.propertyGet(Properties.CAP, true).status());
            check(host.admin.call(authSend(new Success2Message(9).encode())));
            host.enable();
        }
    }

    @Test
    void wrongHostKeyGetsFailure1AndTheQueueStaysClosed() throws Exception {
        start(new HostAuth(HOST, HOST_KEY, null));
        check(host.connectAdmin(NQN, 5000));
        DhchapSecret wrong = DhchapSecret.of(bytes(32, 7), DhchapHash.SHA_256);
        byte[] f = exchange(host.admin, wrong, null, 1, false);
        assertTrue(FailureMessage.is(f));
        FailureMessage fm = FailureMessage.decode(f);
        assertTrue(fm.failure1());
        assertEquals(AuthProtocol.FAILED, fm.explanation());
        assertEquals(
                Status.dnr(Status.AUTHENTICATION_REQUIRED),
                host.propertyGet(Properties.CAP, true).status());
    }

    @Test
    void hostAskingForTheControllerWithoutAControllerKeyFails() throws Exception {
        start(new HostAuth(HOST, HOST_KEY, null));
        check(host.connectAdmin(NQN, 5000));
        byte[] f = exchange(host.admin, HOST_KEY, CTRL_KEY, 2, false);
        assertEquals(AuthProtocol.FAILED, FailureMessage.decode(f).explanation());
        assertEquals(
                Status.dnr(Status.AUTHENTICATION_REQUIRED),
                host.propertyGet(Properties.CAP, true).status());
    }

    @Test
    void noCommonGroupAndBadFields() throws Exception {
        start(new HostAuth(HOST, HOST_KEY, null, List.of(DhchapHash.SHA_256), List.of(DhGroup.FFDHE8192)));
        check(host.connectAdmin(NQN, 5000));
        NegotiateMessage onlyNull = new NegotiateMessage(1, 0, List.of(DhchapHash.SHA_256), List.of(DhGroup.NULL));
        check(host.admin.call(authSend(onlyNull.encode())));
        FailureMessage f =
                FailureMessage.decode(check(host.admin.call(authReceive(4096))).received());
        assertEquals(AuthProtocol.DHGROUP_UNUSABLE, f.explanation());

        FakeRequest badSecp = authSend(onlyNull.encode());
        badSecp.sqe().auth(0xEA, 1, 1, NegotiateMessage.LENGTH);
        assertEquals(Status.dnr(Status.INVALID_FIELD), host.admin.call(badSecp).status() & ~Status.MORE_BIT);
        FakeRequest badTl = authSend(onlyNull.encode());
        badTl.sqe().auth(AuthProtocol.SECP_DHCHAP, 1, 1, 10);
        assertEquals(Status.dnr(Status.INVALID_FIELD), host.admin.call(badTl).status() & ~Status.MORE_BIT);
        FakeRequest badSpsp = authReceive(64);
        badSpsp.sqe().auth(AuthProtocol.SECP_DHCHAP, 0, 1, 64);
        assertEquals(Status.dnr(Status.INVALID_FIELD), host.admin.call(badSpsp).status() & ~Status.MORE_BIT);
    }

    @Test
    void hostsWithoutSettingsNeedNoAuthentication() throws Exception {
        NvmeTarget t = TestTargets.standard();
        try (InJvmHost h = new InJvmHost(t)) {
            FakeRequest c = check(h.connectAdmin(TestTargets.NQN, 5000));
            assertEquals(0, c.dw0() >>> 16, "no AUTHREQ");
            FakeRequest r = h.admin.call(authReceive(64));
            assertEquals(Status.dnr(Status.INVALID_OPCODE), r.status() & ~Status.MORE_BIT);
            h.enable();
        } finally {
            t.close();
        }
        assertFalse(HOST_KEY.toString().contains("="));
    }
}
