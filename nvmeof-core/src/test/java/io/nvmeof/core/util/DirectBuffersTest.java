package io.nvmeof.core.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class DirectBuffersTest {
    @Test
    void slicesAndDuplicatesShareTheBaseAddress() {
        assertTrue(DirectBuffers.addressSupported(), "Unsafe is available on the project's JDK");
        ByteBuffer b = ByteBuffer.allocateDirect(4096);
        long base = DirectBuffers.address(b);
        assertNotEquals(0, base);
        assertEquals(base, DirectBuffers.address(b.duplicate()));
        assertEquals(base + 100, DirectBuffers.address(b.slice(100, 50)));
    }

    @Test
    void heapBuffersHaveNoAddress() {
        assertEquals(0, DirectBuffers.address(ByteBuffer.allocate(16)));
    }
}
