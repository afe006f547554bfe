package io.nvmeof.initiator;

import static io.nvmeof.initiator.Await.waitFor;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.auth.DhGroup;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.core.command.FabricsCommandType;
import io.nvmeof.target.config.HostAuth;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import io.nvmeof.testsupport.TcpProxy;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Reconnect with DH-HMAC-CHAP (docs/security.md, initiator/README.md), our initiator against our target through the
 * fault proxy: a connection cut under a verified workload reconnects and authenticates again on the admin and every
 * I/O queue (seen as Authentication Send commands through the proxy), uni- and bidirectional, and every acknowledged
 * write reads back; a key changed on the target meanwhile (the host's or the controller's) ends the reconnect at once
 * with {@link NvmeControllerLostException} caused by a rejected key, as the Linux host does; an authentication that
 * fails without a rejected key (the controller now asks, the host has no secret) is a failed attempt, retried until it
 * succeeds or until ctrl_loss_tmo.
 */
class DhchapReconnectTest {
    private static final String HOST = DhchapAuthenticationTest.HOST;

    @RegisterExtension
    NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().namespace("64M").blockSize(4096).build(); // one per test

    private final StateEventLog events = new StateEventLog();
    /** Authentication Send commands seen by the proxy, by QID. */
    private final Map<Integer, AtomicInteger> authSends = new ConcurrentHashMap<>();

    private void keys(DhchapSecret host, DhchapSecret ctrl) {
        target.target()
                .setHostAuth(
                        target.nqn(),
                        HOST,
                        host == null
                                ? null
                                : new HostAuth(
                                        HOST, host, ctrl, List.of(DhchapHash.SHA_384), List.of(DhGroup.FFDHE2048)));
    }

    private Controller connect(TcpProxy proxy, String options, DhchapSecret host, DhchapSecret ctrl)
            throws NvmeException {
        String uri = "nvme+tcp://127.0.0.1:" + proxy.port() + "/" + target.nqn() + "?hostnqn=" + HOST + "&" + options;
        ConnectOptions.Builder b =
                ConnectOptions.builder().connectTimeout(Duration.ofSeconds(2)).stateListener(events);
        if (host != null) {
            b.dhchapSecret(host.encode());
        }
        if (ctrl != null) {
            b.dhchapCtrlSecret(ctrl.encode());
        }
        return Nvme.connect(NvmeUri.parse(uri), b.build());
    }

    private void countAuthSends(TcpProxy proxy) {
        proxy.observe((qid, sqe) -> {
            if (sqe.opcode() == FabricsCommandType.OPCODE
                    && sqe.fctype() == FabricsCommandType.AUTHENTICATION_SEND.code()) {
                authSends.computeIfAbsent(qid, q -> new AtomicInteger()).incrementAndGet();
            }
        });
    }

    private int authSends(int qid) {
        AtomicInteger n = authSends.get(qid);
        return n == null ? 0 : n.get();
    }

    @Test
    void uriAndOptionsCarryBothTheReconnectTimesAndTheSecrets() {
        DhchapSecret host = DhchapAuthenticationTest.secret(DhchapHash.SHA_256);
        DhchapSecret ctrl = DhchapAuthenticationTest.secret(null);
        NvmeUri u = NvmeUri.parse(target.uri("reconnect_delay=2&ctrl_loss_tmo=-1&fast_io_fail_tmo=5&dhchap_secret="
                + java.net.URLEncoder.encode(host.encode(), java.nio.charset.StandardCharsets.UTF_8)
                + "&dhchap_ctrl_secret="
                + java.net.URLEncoder.encode(ctrl.encode(), java.nio.charset.StandardCharsets.UTF_8)));
        assertEquals(Duration.ofSeconds(2), u.reconnectDelay());
        assertEquals(NvmeUri.NEVER, u.ctrlLossTmo());
        assertEquals(Duration.ofSeconds(5), u.fastIoFailTmo());
        assertTrue(u.dhchap().bidirectional());
        assertTrue(!u.toString().contains("DHHC-1") && !u.toString().contains("dhchap"), u.toString());
        assertEquals(u, NvmeUri.parse(u.toString()).withSubsystem(u.subsystemNqn()));
        NvmeUri other = u.withSubsystem("nqn.2024-01.io.nvmeof:other");
        assertTrue(other.dhchap() != null && other.reconnectDelay().equals(Duration.ofSeconds(2)));
        ConnectOptions o = ConnectOptions.builder()
                .ctrlLossTmo(Duration.ofSeconds(7))
                .dhchapSecret(host.encode())
                .build();
        assertEquals(Duration.ofSeconds(7), o.ctrlLossTmo());
        assertTrue(o.dhchap() != null && !o.dhchap().bidirectional());
        assertTrue(!o.toString().contains(host.encode().split(":")[2]), "no key in " + o);
        IllegalArgumentException bad = assertThrows(
                IllegalArgumentException.class,
                () -> NvmeUri.parse(target.uri("reconnect_delay=1&dhchap_secret=DHHC-1:00:bm90YXZhbGlka2V5:&bogus=1")));
        assertTrue(!bad.getMessage().contains("bm90YXZhbGlka2V5"), bad.getMessage());
        assertTrue(
                bad.getMessage().contains("reconnect_delay") && bad.getMessage().contains("dhchap_secret"));
    }

    @ParameterizedTest(name = "bidirectional={0}")
    @ValueSource(booleans = {false, true})
    void aCutMidIoReconnectsAndAuthenticatesEveryQueueAgain(boolean bidirectional) throws Exception {
        DhchapSecret host = DhchapAuthenticationTest.secret(DhchapHash.SHA_256);
        DhchapSecret ctrl = bidirectional ? DhchapAuthenticationTest.secret(null) : null;
        keys(host, ctrl);
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=2&depth=32&reconnect_delay=100ms&ctrl_loss_tmo=30", host, ctrl)) {
            assertEquals(2, c.ioQueueCount());
            VerifiedWorkload w = new VerifiedWorkload(c.namespace(), 4, 1024).start();
            waitFor("I/O flowing", 10_000, () -> w.ops() > 50);
            countAuthSends(proxy); // from the cut on: only the reconnect's exchanges
            proxy.cutConnections();
            waitFor("LIVE again", 20_000, () -> events.reconnects() > 0);
            long opsAfter = w.ops();
            waitFor("I/O flowing again", 10_000, () -> w.ops() > opsAfter + 50);
            assertTrue(w.stop(30_000), "a workload call hung");
            assertEquals(List.of(), w.failures(), "every command was retried");
            assertEquals(List.of(), w.verifyAll(), "every acknowledged write reads back");
            assertSame(ControllerState.LIVE, c.state());
            // Negotiate and Reply on each queue, Success2 too when bidirectional.
            int perQueue = bidirectional ? 3 : 2;
            for (int qid = 0; qid <= 2; qid++) {
                assertTrue(authSends(qid) >= perQueue, "queue " + qid + " authenticated again: " + authSends);
            }
            c.reauthenticate(); // still the same secrets on both sides
        }
    }

    @ParameterizedTest(name = "{0} key changed")
    @ValueSource(strings = {"host", "controller"})
    void aKeyChangedOnTheTargetMeanwhileLosesTheControllerAtOnce(String changed) throws Exception {
        DhchapSecret host = DhchapAuthenticationTest.secret(DhchapHash.SHA_256);
        DhchapSecret ctrl = DhchapAuthenticationTest.secret(null);
        keys(host, ctrl);
        // ctrl_loss_tmo 60 s: the controller is lost long before it, at the first refused attempt.
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=2&reconnect_delay=200ms&ctrl_loss_tmo=60", host, ctrl)) {
            VerifiedWorkload w = new VerifiedWorkload(c.namespace(), 2, 256).start();
            waitFor("I/O flowing", 10_000, () -> w.ops() > 50);
            proxy.refuseConnections(true);
            proxy.cutConnections();
            waitFor("RECONNECTING", 5_000, () -> c.state() == ControllerState.RECONNECTING);
            if (changed.equals("host")) {
                keys(DhchapAuthenticationTest.secret(DhchapHash.SHA_256), ctrl);
            } else {
                keys(host, DhchapAuthenticationTest.secret(null));
            }
            proxy.refuseConnections(false);
            waitFor("FAILED", 20_000, () -> c.state() == ControllerState.FAILED);
            NvmeControllerLostException lost = assertInstanceOf(NvmeControllerLostException.class, c.failure());
            assertTrue(lost.getMessage().contains("rejected key"), lost.getMessage());
            NvmeAuthenticationException auth = assertInstanceOf(NvmeAuthenticationException.class, lost.getCause());
            assertTrue(auth.keyRejected());
            assertEquals(AuthProtocol.FAILED, auth.explanation());
            assertTrue(
                    auth.getMessage()
                            .contains(
                                    changed.equals("host")
                                            ? "the controller refused the host"
                                            : "controller's response does not match"),
                    auth.getMessage());
            assertTrue(!lost.getMessage().contains("DHHC-1"), "no key in the message");
            assertTrue(w.stop(5_000), "a call hung after the controller was lost");
            for (Throwable t : w.failures()) {
                assertInstanceOf(NvmeControllerLostException.class, t, t.toString());
            }
            assertThrows(
                    NvmeControllerLostException.class,
                    () -> c.namespace().write(0, 1, ByteBuffer.allocateDirect(4096)));
            ControllerStateEvent last = events.last();
            assertEquals(ControllerState.FAILED, last.state());
            assertEquals(ControllerState.RECONNECTING, last.previous());
        }
    }

    @Test
    void anAuthenticationFailureWithoutARejectedKeyIsRetried() throws Exception {
        // No keys at first: the host connects without authentication.
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=1&reconnect_delay=200ms&ctrl_loss_tmo=30", null, null)) {
            proxy.refuseConnections(true);
            proxy.cutConnections();
            waitFor("RECONNECTING", 5_000, () -> c.state() == ControllerState.RECONNECTING);
            // Now the target requires DH-HMAC-CHAP of this host, which has no secret: every attempt fails.
            keys(DhchapAuthenticationTest.secret(DhchapHash.SHA_256), null);
            int before = proxy.acceptedConnections();
            proxy.refuseConnections(false);
            waitFor("three refused attempts", 10_000, () -> proxy.acceptedConnections() >= before + 3);
            assertSame(ControllerState.RECONNECTING, c.state());
            keys(null, null); // the requirement is lifted again: the next attempt succeeds
            waitFor("LIVE again", 10_000, () -> c.state() == ControllerState.LIVE);
            ByteBuffer b = c.allocateBuffer(4096);
            c.namespace().write(0, 1, b);
            c.namespace().read(0, 1, b);
        }
    }

    @Test
    void anAuthenticationFailureRetriedUntilCtrlLossTmo() throws Exception {
        try (TcpProxy proxy = TcpProxy.start(target.address());
                Controller c = connect(proxy, "queues=1&reconnect_delay=200ms&ctrl_loss_tmo=2", null, null)) {
            proxy.refuseConnections(true);
            proxy.cutConnections();
            waitFor("RECONNECTING", 5_000, () -> c.state() == ControllerState.RECONNECTING);
            keys(DhchapAuthenticationTest.secret(DhchapHash.SHA_256), null);
            proxy.refuseConnections(false);
            waitFor("FAILED", 10_000, () -> c.state() == ControllerState.FAILED);
            NvmeControllerLostException lost = assertInstanceOf(NvmeControllerLostException.class, c.failure());
            assertTrue(lost.getMessage().contains("ctrl_loss_tmo"), lost.getMessage());
            assertTrue(lost.getMessage().contains("requires DH-HMAC-CHAP"), lost.getMessage());
            NvmeAuthenticationException auth = assertInstanceOf(NvmeAuthenticationException.class, lost.getCause());
            assertTrue(!auth.keyRejected());
        }
    }
}
