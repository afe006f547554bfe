package io.nvmeof.transport.rdma.disni;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.transport.rdma.verbs.QueuePairAttributes;
import io.nvmeof.transport.rdma.verbs.RdmaProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;

/**
 * Runs on any host. Where there is no RDMA device (CI, this build host: no RDMA kernel modules) the provider must say
 * why, in one of the documented words, and never throw or crash; where there is one it must be available.
 */
class DisniProviderTest {
    @Test
    void foundByServiceLoader() {
        boolean found = ServiceLoader.load(RdmaProvider.class).stream().anyMatch(p -> p.type() == DisniProvider.class);
        assertTrue(found, "META-INF/services lists the DiSNI provider");
    }

    @Test
    void availabilityIsReportedNotThrown() {
        DisniProvider p = new DisniProvider();
        assertEquals("disni", p.name());
        assertFalse(p.isEmulated());
        boolean available = p.isAvailable();
        String reason = p.unavailableReason();
        System.out.println(
                "DiSNI provider: available=" + available + " reason=" + reason + " (" + p.description() + ")");
        if (available) {
            assertEquals(null, reason);
            return;
        }
        assertNotNull(reason);
        assertTrue(
                reason.equals(DisniProvider.NOT_BUILT)
                        || reason.startsWith("no RDMA device (ibv_get_device_list ")
                        || reason.startsWith("cannot load libnvmeofrdma.so: ")
                        || reason.startsWith("RDMA device "),
                "unexpected reason: " + reason);
        // the same answer again, and the calls that need a device fail with it as an IOException
        assertEquals(reason, new DisniProvider().unavailableReason());
        IOException e = assertThrows(
                IOException.class,
                () -> p.connect(
                        new InetSocketAddress("127.0.0.1", 4420),
                        new QueuePairAttributes(4, 4, 1, 1, 8, 1, 1),
                        ByteBuffer.allocate(32),
                        null,
                        Duration.ofSeconds(1)));
        assertTrue(e.getMessage().contains(reason), e.getMessage());
        assertThrows(IOException.class, () -> p.listen(new InetSocketAddress("127.0.0.1", 0), r -> {}));
    }

    @Test
    void nativeLibraryIsInTheJarWhenTheHeadersWereThere() {
        boolean headers = new java.io.File("/usr/include/infiniband/verbs.h").exists()
                && new java.io.File("/usr/include/rdma/rdma_cma.h").exists();
        boolean packaged = DisniProvider.class.getClassLoader().getResource(DisniProvider.NATIVE_RESOURCE) != null;
        assertEquals(headers, packaged, "libnvmeofrdma.so is built exactly when the rdma-core headers are installed");
        if (packaged) {
            assertFalse(DisniProvider.NOT_BUILT.equals(new DisniProvider().unavailableReason()));
        }
    }
}
