package io.nvmeof.core.command;

/** Controller properties reachable with Property Get/Set, and their fields (nvmeof-protocol.md §2.3). */
public final class Properties {
    private Properties() {}

    /** Property offsets. */
    public static final int CAP = 0x00;

    public static final int VS = 0x08;
    public static final int CC = 0x14;
    public static final int CSTS = 0x1C;
    public static final int NSSR = 0x20;

    /** ATTRIB size field values. */
    public static final int SIZE_4 = 0;

    public static final int SIZE_8 = 1;

    // CC fields.
    /** CAP.CSS bit 37: the NVM command set. */
    public static final long CAP_CSS_NVM = 1L << 37;
    /** CAP.CSS bit 43: one or more I/O command sets (the host may enable with CC.CSS = 110b). */
    public static final long CAP_CSS_IO_COMMAND_SETS = 1L << 43;

    /** CC.CSS 000b: the NVM command set. */
    public static final int CC_CSS_NVM = 0;
    /** CC.CSS 110b: all I/O command sets CAP.CSS bit 43 names. */
    public static final int CC_CSS_IO_COMMAND_SETS = 6;
    /** CC.CSS 111b: admin command set only (needs CAP.CSS bit 44, which we do not set). */
    public static final int CC_CSS_ADMIN_ONLY = 7;

    public static final int CC_EN = 1;
    public static final int CC_CSS_SHIFT = 4;
    public static final int CC_MPS_SHIFT = 7;
    public static final int CC_AMS_SHIFT = 11;
    public static final int CC_SHN_SHIFT = 14;
    public static final int CC_IOSQES_SHIFT = 16;
    public static final int CC_IOCQES_SHIFT = 20;
    public static final int CC_SHN_NONE = 0;
    public static final int CC_SHN_NORMAL = 1;
    public static final int CC_SHN_ABRUPT = 2;

    // CSTS fields.
    public static final int CSTS_RDY = 1;
    public static final int CSTS_CFS = 1 << 1;
    public static final int CSTS_SHST_SHIFT = 2;
    public static final int CSTS_SHST_MASK = 0x3 << CSTS_SHST_SHIFT;
    public static final int CSTS_SHST_COMPLETE = 0x2 << CSTS_SHST_SHIFT;

    /** NVMe 1.3.0, the version a conservative target reports (nvmeof-protocol.md §7.7). */
    public static final int VERSION_1_3 = 0x00010300;

    public static int ccShn(int cc) {
        return (cc >>> CC_SHN_SHIFT) & 0x3;
    }

    public static int ccCss(int cc) {
        return (cc >>> CC_CSS_SHIFT) & 0x7;
    }

    public static int ccMps(int cc) {
        return (cc >>> CC_MPS_SHIFT) & 0xF;
    }

    public static int ccAms(int cc) {
        return (cc >>> CC_AMS_SHIFT) & 0x7;
    }

    public static int ccIosqes(int cc) {
        return (cc >>> CC_IOSQES_SHIFT) & 0xF;
    }

    public static int ccIocqes(int cc) {
        return (cc >>> CC_IOCQES_SHIFT) & 0xF;
    }

    /**
     * Builds CAP (nvmeof-protocol.md §2.3): MQES (0's based), CQR, TO in 500 ms units, CSS bit 37 (NVM command set)
     * and bit 43 (one or more I/O command sets, so a host may enable with CC.CSS = 110b; nvmet sets both), MPSMIN =
     * MPSMAX = 0.
     */
    public static long cap(int mqes, int timeout500ms) {
        return (mqes & 0xFFFFL) | (1L << 16) | ((timeout500ms & 0xFFL) << 24) | CAP_CSS_NVM | CAP_CSS_IO_COMMAND_SETS;
    }

    public static int capMqes(long cap) {
        return (int) (cap & 0xFFFF);
    }

    public static int capTimeout(long cap) {
        return (int) ((cap >>> 24) & 0xFF);
    }

    public static int capMpsmin(long cap) {
        return (int) ((cap >>> 48) & 0xF);
    }
}
