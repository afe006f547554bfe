package io.nvmeof.initiator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.spi.IoMode;
import org.junit.jupiter.api.Test;

/** The {@code engine=} and {@code hipri=} URI options and {@link ConnectOptions#ioMode()}. */
class IoModeUriTest {
    private static final String BASE = "nvme+tcp://127.0.0.1:4420/nqn.2024-01.io.nvmeof:disk1";

    @Test
    void defaultsAreAutoAndSleeping() {
        NvmeUri u = NvmeUri.parse(BASE);
        assertEquals("auto", u.engine());
        assertFalse(u.hipri());
        assertEquals(IoMode.DEFAULT, u.ioMode());
        assertFalse(u.toString().contains("engine="), u.toString());
        assertFalse(u.toString().contains("hipri"), u.toString());
    }

    @Test
    void parsesEngineAndHipri() {
        for (String e : new String[] {"auto", "epoll", "io_uring", "nio", "IO_URING"}) {
            assertEquals(e.toLowerCase(), NvmeUri.parse(BASE + "?engine=" + e).engine());
        }
        assertTrue(NvmeUri.parse(BASE + "?hipri=1").hipri());
        assertTrue(NvmeUri.parse(BASE + "?hipri=true").hipri());
        assertFalse(NvmeUri.parse(BASE + "?hipri=0").hipri());
        NvmeUri u = NvmeUri.parse(BASE + "?queues=1&engine=io_uring&hipri=1");
        assertEquals(new IoMode("io_uring", true), u.ioMode());
    }

    @Test
    void roundTripsAndSurvivesForEntryAndWithSubsystem() {
        NvmeUri u = NvmeUri.parse(BASE + "?engine=epoll&hipri=1");
        assertTrue(u.toString().contains("engine=epoll"), u.toString());
        assertTrue(u.toString().contains("hipri=1"), u.toString());
        assertEquals(u, NvmeUri.parse(u.toString()));
        NvmeUri other = u.withSubsystem("nqn.2024-01.io.nvmeof:disk2");
        assertEquals("epoll", other.engine());
        assertTrue(other.hipri());
    }

    @Test
    void badValuesNameTheOption() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(BASE + "?engine=kqueue"));
        assertTrue(
                e.getMessage().contains("engine must be one of auto, epoll, io_uring, nio, not 'kqueue'"),
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(BASE + "?hipri=fast"));
        assertTrue(e.getMessage().contains("hipri must be 1 or 0, not 'fast'"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(BASE + "?hipri"));
        assertTrue(e.getMessage().contains("has no value"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> NvmeUri.parse(BASE + "?polling=1"));
        assertTrue(e.getMessage().contains("engine, hipri"), e.getMessage());
    }

    @Test
    void connectOptionsIoModeDefaultsToNullAndBuilds() {
        assertEquals(null, ConnectOptions.defaults().ioMode());
        IoMode m = new IoMode("nio", true);
        assertEquals(m, ConnectOptions.builder().ioMode(m).build().ioMode());
    }
}
