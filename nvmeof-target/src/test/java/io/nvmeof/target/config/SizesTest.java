package io.nvmeof.target.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class SizesTest {
    @Test
    void parsesBinarySuffixes() {
        assertEquals(4096, Sizes.parse("4096"));
        assertEquals(4096, Sizes.parse("4k"));
        assertEquals(4096, Sizes.parse("4KiB"));
        assertEquals(64L << 20, Sizes.parse("64M"));
        assertEquals(1L << 30, Sizes.parse("1g"));
        assertEquals(1L << 30, Sizes.parse("1GB"));
        assertEquals(1L << 40, Sizes.parse(" 1T "));
    }

    @Test
    void rejectsNonsense() {
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("lots"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse(""));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("-1G"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("99999999P"));
        assertThrows(IllegalArgumentException.class, () -> Sizes.parse("1X"));
    }

    @Test
    void formatsForPeople() {
        assertEquals("1 GiB", Sizes.format(1L << 30));
        assertEquals("1.5 KiB", Sizes.format(1536));
        assertEquals("11.8 GiB", Sizes.format(12638255104L));
        assertEquals("100 B", Sizes.format(100));
    }
}
