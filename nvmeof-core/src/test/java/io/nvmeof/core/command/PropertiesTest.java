package io.nvmeof.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** Controller properties, nvmeof-protocol.md §2.3. */
class PropertiesTest {
    @Test
    void offsets() {
        assertEquals(0x00, Properties.CAP);
        assertEquals(0x08, Properties.VS);
        assertEquals(0x14, Properties.CC);
        assertEquals(0x1C, Properties.CSTS);
        assertEquals(0x20, Properties.NSSR);
        assertEquals(0, Properties.SIZE_4);
        assertEquals(1, Properties.SIZE_8);
    }

    @Test
    void capLayout() {
        // MQES 127, CQR, TO 15 (7.5 s), CSS bits 37 (NVM) and 43 (I/O command sets) as nvmet, MPSMIN = MPSMAX = 0.
        long cap = Properties.cap(127, 15);
        assertEquals(0x000008200F01007FL, cap);
        assertEquals(127, Properties.capMqes(cap));
        assertEquals(15, Properties.capTimeout(cap));
        assertEquals(0, Properties.capMpsmin(cap));
        assertEquals(1, (cap >>> 43) & 1, "I/O command sets, as nvmet");
        assertEquals(1, (cap >>> 37) & 1, "NVM command set");
    }

    @Test
    void capAccessorsOnNvmetValue() {
        long nvmetTcp = 0x000008200F0003FFL;
        assertEquals(1023, Properties.capMqes(nvmetTcp));
        assertEquals(15, Properties.capTimeout(nvmetTcp));
        assertEquals(0, Properties.capMpsmin(nvmetTcp));
        assertEquals(3, Properties.capMpsmin(0x0003000000000000L));
        assertEquals(0xFFFF, Properties.capMqes(Properties.cap(0xFFFF, 255)));
        assertEquals(255, Properties.capTimeout(Properties.cap(0xFFFF, 255)));
    }

    @Test
    void ccFieldsOfTheLinuxValues() {
        int enable = 0x00460001;
        assertEquals(1, enable & Properties.CC_EN);
        assertEquals(6, Properties.ccIosqes(enable));
        assertEquals(4, Properties.ccIocqes(enable));
        assertEquals(0, Properties.ccCss(enable));
        assertEquals(0, Properties.ccMps(enable));
        assertEquals(0, Properties.ccAms(enable));
        assertEquals(Properties.CC_SHN_NONE, Properties.ccShn(enable));
        int shutdown = 0x00464001;
        assertEquals(Properties.CC_SHN_NORMAL, Properties.ccShn(shutdown));
        assertEquals(6, Properties.ccCss(0x00460061));
        assertEquals(Properties.CC_SHN_ABRUPT, Properties.ccShn(0x8000));
        assertEquals(enable, (6 << Properties.CC_IOSQES_SHIFT) | (4 << Properties.CC_IOCQES_SHIFT) | Properties.CC_EN);
    }

    @Test
    void cstsFields() {
        assertEquals(0x1, Properties.CSTS_RDY);
        assertEquals(0x2, Properties.CSTS_CFS);
        assertEquals(0x8, Properties.CSTS_SHST_COMPLETE);
        assertEquals(0xC, Properties.CSTS_SHST_MASK);
        assertEquals(0x00010300, Properties.VERSION_1_3);
    }
}
