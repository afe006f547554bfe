package io.nvmeof.core.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.DataDirection;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class HostDataCheckTest {
    private static final int READ = 0x02;
    private static final int WRITE = 0x01;
    private static final int KEEP_ALIVE = 0x18;

    private static String refused(TestCommand c, long max) {
        return assertThrows(IllegalArgumentException.class, () -> HostDataCheck.check(c, max))
                .getMessage();
    }

    @Test
    void goodCommandsGiveTheirDirection() {
        ByteBuffer b = ByteBuffer.allocate(100);
        assertEquals(DataDirection.NONE, HostDataCheck.check(new TestCommand(KEEP_ALIVE, 1), 0));
        assertEquals(
                DataDirection.CONTROLLER_TO_HOST, HostDataCheck.check(new TestCommand(READ, 1).data(b, 0, 100), 100));
        assertEquals(
                DataDirection.HOST_TO_CONTROLLER,
                HostDataCheck.check(new TestCommand(WRITE, 1).data(b.asReadOnlyBuffer(), 50, 50), 100));
        TestCommand connect = new TestCommand(0x7F, 0).data(b, 0, 8);
        connect.sqe.fctype(0x01);
        assertEquals(DataDirection.HOST_TO_CONTROLLER, HostDataCheck.check(connect, 100), "fabrics: FCTYPE bits");
    }

    @Test
    void callerErrorsAreNamed() {
        ByteBuffer b = ByteBuffer.allocate(100);
        assertTrue(refused(new TestCommand(READ, 1).data(b, 0, -1), 100).contains("negative dataLength"));
        assertTrue(refused(new TestCommand(READ, 1).data(null, 0, 8), 100).contains("no dataBuffer"));
        assertTrue(refused(new TestCommand(READ, 1).data(b, 50, 51), 100).contains("outside a buffer of capacity 100"));
        assertTrue(refused(new TestCommand(READ, 1).data(b, -1, 8), 100).contains("outside"));
        assertTrue(refused(new TestCommand(KEEP_ALIVE, 1).data(b, 0, 8), 100).contains("moves no data"));
        assertTrue(refused(new TestCommand(0x03, 1).data(b, 0, 8), 100).contains("bidirectional"));
        assertTrue(refused(new TestCommand(READ, 1).data(b.asReadOnlyBuffer(), 0, 8), 100)
                .contains("read-only"));
        assertTrue(refused(new TestCommand(WRITE, 1).data(b, 0, 100), 99).contains("at most 99"));
    }
}
