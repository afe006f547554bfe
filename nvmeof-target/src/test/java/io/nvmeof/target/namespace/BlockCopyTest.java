package io.nvmeof.target.namespace;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** {@link BlockCopy}: the same bytes and checks as {@code ByteBuffer.put}, through {@code memmove} where it applies. */
class BlockCopyTest {
    private static ByteBuffer random(int length, long seed) {
        ByteBuffer b = ByteBuffer.allocateDirect(length);
        byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        b.put(0, bytes);
        return b;
    }

    private static byte[] bytes(ByteBuffer b, int index, int length) {
        byte[] out = new byte[length];
        b.get(index, out);
        return out;
    }

    @Test
    void theNativeCopyIsUsedWhereTheLibraryIsBuilt() {
        boolean built = NativeLibrary.class.getClassLoader().getResource(NativeLibrary.NATIVE_RESOURCE) != null;
        assumeTrue(built, "libnvmeoffile.so not built (no gcc at build time): the copy falls back to ByteBuffer.put");
        assertNull(NativeLibrary.unavailableReason(), "the native helper is built but does not load");
        assertTrue(BlockCopy.nativeCopy());
    }

    @Test
    void copiesExactlyTheRangeAtEachSize() {
        for (int length : new int[] {1, 512, 4095, 4096, 4097, 65536, 131072 - 8}) {
            ByteBuffer src = random(131072, length);
            ByteBuffer dst = random(131072, -length);
            byte[] before = bytes(dst, 0, dst.capacity());
            BlockCopy.copy(dst, 8 - length % 8, src, 3, length);
            int at = 8 - length % 8;
            assertArrayEquals(bytes(src, 3, length), bytes(dst, at, length), "length " + length);
            assertArrayEquals(java.util.Arrays.copyOfRange(before, 0, at), bytes(dst, 0, at), "before the range");
            int end = at + length;
            assertArrayEquals(
                    java.util.Arrays.copyOfRange(before, end, before.length),
                    bytes(dst, end, before.length - end),
                    "after the range");
            assertEquals(0, dst.position());
            assertEquals(0, src.position());
        }
    }

    @Test
    void heapAndViewSourcesAndOverlapBehaveAsByteBufferPut() {
        ByteBuffer heap = ByteBuffer.wrap(new byte[8192]);
        new Random(7).nextBytes(heap.array());
        ByteBuffer dst = ByteBuffer.allocateDirect(8192);
        BlockCopy.copy(dst, 0, heap, 0, 8192);
        assertArrayEquals(heap.array(), bytes(dst, 0, 8192));

        ByteBuffer view = random(16384, 9).slice(4096, 8192); // a direct slice: its own address and limit
        BlockCopy.copy(dst, 0, view, 0, 8192);
        assertArrayEquals(bytes(view, 0, 8192), bytes(dst, 0, 8192));

        ByteBuffer same = random(16384, 11);
        byte[] expected = bytes(same, 0, 8192);
        BlockCopy.copy(same, 4096, same, 0, 8192); // overlapping, as memmove
        assertArrayEquals(expected, bytes(same, 4096, 8192));
    }

    @Test
    void rangesOutsideALimitAndReadOnlyTargetsAreRefusedBeforeAnyByteMoves() {
        ByteBuffer src = random(8192, 1);
        ByteBuffer dst = random(8192, 2);
        byte[] before = bytes(dst, 0, 8192);
        assertThrows(IndexOutOfBoundsException.class, () -> BlockCopy.copy(dst, 4097, src, 0, 4096));
        assertThrows(IndexOutOfBoundsException.class, () -> BlockCopy.copy(dst, 0, src, 4097, 4096));
        assertThrows(IndexOutOfBoundsException.class, () -> BlockCopy.copy(dst, -1, src, 0, 4096));
        dst.limit(4096);
        assertThrows(IndexOutOfBoundsException.class, () -> BlockCopy.copy(dst, 1, src, 0, 4096));
        dst.limit(8192);
        assertThrows(ReadOnlyBufferException.class, () -> BlockCopy.copy(dst.asReadOnlyBuffer(), 0, src, 0, 4096));
        assertArrayEquals(before, bytes(dst, 0, 8192));
    }
}
