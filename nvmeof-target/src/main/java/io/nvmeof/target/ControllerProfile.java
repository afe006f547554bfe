package io.nvmeof.target;

/**
 * The fixed values this target advertises, each from the conservative profile that the Linux host accepts
 * (nvmeof-protocol.md §7.7) unless noted.
 */
final class ControllerProfile {
    private ControllerProfile() {}

    /** VS and Identify VER: 1.3.0, so the host uses CNS 0x02/0x03 and not CNS 0x08 (nvmeof-protocol.md §3.2.4, §7.7). */
    static final int VERSION = 0x00010300;
    /** CAP.TO in 500 ms units: 15 = 7.5 s, like nvmet; TO = 0 would leave the host no slack (nvmeof-protocol.md §7.1 step 9). */
    static final int CAP_TIMEOUT = 15;
    /** Admin queue entries: 32 (SQSIZE 31), the Linux NVME_AQ_DEPTH and the admin queue of every transport (nvmeof-protocol.md §8). */
    static final int ADMIN_QUEUE_SIZE = 32;
    /** I/O queues a controller may have, like nvmet's max_qid (nvmeof-protocol.md §3.4, §8). */
    static final int MAX_IO_QUEUES = 128;
    /** Valid dynamic CNTLIDs: 1..0xFFEF (nvmeof-protocol.md §8). */
    static final int MIN_CNTLID = 1;

    static final int MAX_CNTLID = 0xFFEF;
    /** Identify KAS: keep-alive granularity in 100 ms units; 10 = 1 s like nvmet, and non-zero as the host requires (nvmeof-protocol.md §3.2.1). */
    static final int KAS = 10;
    /** Keep-alive granularity in ms that KAS implies: KATO is rounded up to it (nvmeof-protocol.md §3.5). */
    static final int KATO_GRANULARITY_MILLIS = KAS * 100;
    /** AERL, 0's based: 4 outstanding Asynchronous Event Requests, like nvmet (nvmeof-protocol.md §3.6). */
    static final int AERL = 3;
    /** ACL, 0's based (nvmeof-protocol.md §3.2.1). */
    static final int ACL = 3;
    /** Error log entries kept (ELPE + 1, nvmeof-protocol.md §3.2.1, §3.3). */
    static final int ERROR_LOG_ENTRIES = 16;
    /**
     * CMIC bit 0: more than one port; bit 1: more than one controller per subsystem, so a host may connect twice /
     * multipath (nvmeof-protocol.md §3.2.1). Bit 3 (ANA reporting) is added by {@link AnaGroups#identifyController}.
     */
    static final int CMIC = 0x03;
    /**
     * ONCS: bit 0 Compare, bit 2 Dataset Management, bit 3 Write Zeroes, bit 4 Save field and Select field (Get
     * Features SEL is answered; no feature is saveable), bit 5 Reservations, bit 7 Verify, bit 8 Copy; no Timestamp (bit 6),
     * nvmeof-protocol.md §3.2.1. nvmet has bits 2, 3 and 5 only.
     */
    static final int ONCS = 0x01 | 0x04 | 0x08 | (1 << 4) | ControllerProfile.ONCS_RESERVATIONS | (1 << 7) | (1 << 8);
    /** FUSES bit 0: fused Compare and Write (FusedCompareAndWrite). nvmet has 0. */
    static final int FUSES = 0x1;
    /** ACWU, 0's based blocks: a fused Compare and Write is atomic at any length (FusedGate), so the most it can say. */
    static final int ACWU = 0xFFFF;
    /** OCFS bit 0: Copy source range entries of format 0 (NvmCopy). */
    static final int OCFS_COPY = 0x1;
    /** ONCS bit 5: Reservations (NVMe Base 2.0 §8.19). */
    static final int ONCS_RESERVATIONS = 0x20;
    /** CTRATT bit 0: 128-bit Host Identifiers, the only kind on fabrics (reservations key hosts by them). */
    static final int CTRATT = 0x01;
    /** Identify Namespace RESCAP: bits 1–6 the six reservation types, bit 7 IEKEY (1.3 semantics); no PTPL (bit 0). */
    static final int RESCAP = 0xFE;
    /** VWC bit 0: a volatile write cache is reported so the host sends Flush and FUA (both trivially done in RAM). */
    static final int VWC = 0x01;
    /** OAES bit 8: namespace attribute notices, bit 11: ANA change notices (I/O controller); bit 31: discovery log change (discovery), nvmeof-protocol.md §3.2.1. */
    static final int OAES_IO = 0x100 | 0x800;

    static final int OAES_DISCOVERY = 0x80000000;
    /**
     * LPA: bit 0 SMART / Health log per namespace (LogPages.health counts the NSID's namespace alone), bit 1 commands
     * supported and effects log, bit 2 extended data (LPO/NUMDU); discovery: bit 2 only (nvmeof-protocol.md §3.2.1,
     * §3.7). nvmet sets 07h too.
     */
    static final int LPA_IO = 0x07;

    static final int LPA_DISCOVERY = 0x04;
    /** SQES/CQES: 64-byte SQEs, 16-byte CQEs (nvmeof-protocol.md §3.2.1). */
    static final int SQES = 0x66;

    static final int CQES = 0x44;
    /** IORCSZ: a response capsule is one 16-byte CQE (nvmeof-protocol.md §3.2.1). */
    static final int IORCSZ = 1;
    /** OFCS bit 0: Disconnect is supported (nvmeof-protocol.md §2.4). */
    static final int OFCS = 0x01;
    /** NN: the highest NSID that may ever exist here, so namespaces added at run time stay in range (nvmeof-protocol.md §3.2.1). */
    static final int NN = io.nvmeof.target.config.NamespaceConfig.MAX_NSID;
    /** CNTRLTYPE (nvmeof-protocol.md §3.7). */
    static final int CNTRLTYPE_IO = 1;

    static final int CNTRLTYPE_DISCOVERY = 2;
    /** Discovery log entry ASQSZ: the admin queue size (nvmeof-protocol.md §3.3). */
    static final int DISCOVERY_ASQSZ = ADMIN_QUEUE_SIZE;
    /** FR, firmware revision (8 ASCII characters, space padded, nvmeof-protocol.md §3.2.1). */
    static final String FIRMWARE_REVISION = "0.1.0";

    static final String DEFAULT_MODEL = "nvmeof-java";
}
