package io.nvmeof.target.e2e;

import static io.nvmeof.target.e2e.RawTcpHost.expectOk;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * PDUs that arrive in pieces, as they do from the Linux host (which sends header, digest and data with separate
 * socket calls): every PDU the host sends is split into small, separately flushed writes.
 */
@Timeout(120)
class TcpFragmentationTest {
    private E2eTarget t;

    @BeforeEach
    void start() throws Exception {
        t = new E2eTarget();
    }

    @AfterEach
    void stop() {
        t.close();
    }

    @ParameterizedTest(name = "piece {0} bytes, pause {1} ms, header digest {2}, data digest {3}")
    @CsvSource({
        "1, 0, false, false",
        "1, 0, true, true",
        "3, 0, true, false",
        "5, 0, false, true",
        "76, 1, true, true",
        "100, 1, true, true",
    })
    void bringUpAndDataInPieces(int piece, int pauseMillis, boolean hd, boolean dd) throws Exception {
        try (RawTcpHost admin = RawTcpHost.connect(t.address, hd, dd)) {
            admin.dribble = piece;
            admin.dribblePauseMillis = pauseMillis;
            expectOk(admin.connectAdmin(E2eTarget.NQN), "admin Connect in pieces");
            admin.enable();
            try (RawTcpHost io = RawTcpHost.connect(t.address, hd, dd)) {
                io.dribble = piece;
                io.dribblePauseMillis = pauseMillis;
                expectOk(io.connectIo(1, admin.cntlid(), E2eTarget.NQN), "I/O Connect in pieces");
                io.inCapsuleLimit(E2eTarget.ioccsz(admin) * 16 - 64);
                for (int size : new int[] {4096, 16384, 24576}) { // in-capsule, limit, R2T
                    byte[] data = TcpDataPathTest.random(size, size + piece);
                    expectOk(io.write(1, 10, 4096, data), "write " + size + " in pieces");
                    byte[] back = new byte[size];
                    expectOk(io.read(1, 10, 4096, back), "read " + size);
                    assertArrayEquals(data, back);
                }
            }
            admin.shutdown();
        }
        t.assertNoErrorsLogged();
    }
}
