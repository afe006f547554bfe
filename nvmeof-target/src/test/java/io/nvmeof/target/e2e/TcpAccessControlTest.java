package io.nvmeof.target.e2e;

import static io.nvmeof.target.e2e.RawTcpHost.expectOk;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import io.nvmeof.target.e2e.RawTcpHost.Completion;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Who may connect (nvmeof-protocol.md §2.2): host allow lists, unknown subsystems, I/O Connects for someone else's controller. */
@Timeout(60)
class TcpAccessControlTest {
    private E2eTarget t;

    @BeforeEach
    void start() throws Exception {
        t = new E2eTarget();
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @Test
    void hostNotAllowedIsRefusedWithInvalidHost() throws Exception {
        try (RawTcpHost h = RawTcpHost.connect(t.address, false, false)) {
            Completion c = h.connectAdmin(E2eTarget.RESTRICTED_NQN);
            assertTrue(Status.is(c.status(), Status.CONNECT_INVALID_HOST), "expected Connect Invalid Host: " + c);
            assertTrue(Status.isDnr(c.status()), "with DNR, so the Linux host stops retrying: " + c);
        }
        assertTrue(t.target.controllers().isEmpty(), "no controller for a refused host");
        try (RawTcpHost h = RawTcpHost.connect(t.address, false, false)) {
            Completion c = h.connectAdmin(E2eTarget.RESTRICTED_NQN, E2eTarget.ALLOWED_HOST, UUID.randomUUID(), 10_000);
            expectOk(c, "Connect of the allowed host");
            h.enable();
        }
    }

    @Test
    void unknownSubsystemIsInvalidParameters() throws Exception {
        try (RawTcpHost h = RawTcpHost.connect(t.address, false, false)) {
            Completion c = h.connectAdmin("nqn.2026-01.io.nvmeof:nope");
            assertTrue(Status.is(c.status(), Status.CONNECT_INVALID_PARAMETERS), c.toString());
            assertEquals(1 << 16 | 256, c.dw0() & 0xFFFFFF, "IATTR 1 / IPO 256 (SUBNQN in the Connect data)");
        }
    }

    @Test
    void ioConnectForAnotherHostsControllerIsRefused() throws Exception {
        try (RawTcpHost admin = t.admin(false);
                RawTcpHost io = RawTcpHost.connect(t.address, false, false)) {
            Completion c = io.connectIo(
                    1,
                    31,
                    admin.cntlid(),
                    E2eTarget.NQN,
                    "nqn.2014-08.org.nvmexpress:uuid:99999999-0000-4000-8000-000000000000",
                    RawTcpHost.DEFAULT_HOST_ID);
            assertFalse(c.ok(), "an I/O queue joined a controller of another host: " + c);
            assertEquals(0, t.target.controllers().get(0).ioQueueCount());
        }
    }
}
