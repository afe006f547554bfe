package io.nvmeof.initiator;

/**
 * One entry of a discovery log page (LID 0x70, nvmeof-protocol.md §3.3).
 *
 * @param trtype  TRTYPE: 1 RDMA, 2 FC, 3 TCP, 0xFE loop
 * @param adrfam  ADRFAM: 1 IPv4, 2 IPv6, 3 IB, 4 FC
 * @param subtype SUBTYPE: 1 referral, 2 NVM subsystem, 3 the current discovery subsystem
 * @param treq    TREQ: bits 1:0 secure channel, bit 2 SQ flow control disable supported
 * @param portid  PORTID
 * @param cntlid  CNTLID (0xFFFF: dynamic controller model)
 * @param asqsz   ASQSZ, the maximum admin queue size
 * @param eflags  EFLAGS
 * @param trsvcid TRSVCID, the port as text (trailing spaces and NULs stripped)
 * @param subnqn  SUBNQN
 * @param traddr  TRADDR, the address as text (trailing spaces and NULs stripped)
 * @param tsas    TSAS bytes 768..771 as a little-endian int (nvmeof-protocol.md §3.3). TCP: byte 0 SECTYPE (0 none, 1 TLS 1.2,
 *                2 TLS 1.3). RDMA: byte 0 QPTYPE, byte 1 PRTYPE, byte 2 CMS
 * @param rdmaPkey TSAS bytes 776..777 for RDMA: PKEY
 */
public record DiscoveryEntry(
        int trtype,
        int adrfam,
        int subtype,
        int treq,
        int portid,
        int cntlid,
        int asqsz,
        int eflags,
        String trsvcid,
        String subnqn,
        String traddr,
        int tsas,
        int rdmaPkey) {
    public static final int TRTYPE_RDMA = 1;
    public static final int TRTYPE_TCP = 3;

    public static final int SUBTYPE_REFERRAL = 1;
    public static final int SUBTYPE_NVM = 2;
    public static final int SUBTYPE_CURRENT_DISCOVERY = 3;

    /** Whether this entry names an NVM subsystem one can connect to for I/O. */
    public boolean isNvmSubsystem() {
        return subtype == SUBTYPE_NVM;
    }

    /** The transport name for TRTYPE: "tcp", "rdma", "fc", "loop" or "trtype-N". */
    public String transportName() {
        switch (trtype) {
            case 1:
                return "rdma";
            case 2:
                return "fc";
            case 3:
                return "tcp";
            case 0xFE:
                return "loop";
            default:
                return "trtype-" + trtype;
        }
    }

    /** ADRFAM as nvme-cli prints it: "ipv4", "ipv6", "ib", "fc" or "adrfam-N". */
    public String addressFamilyName() {
        switch (adrfam) {
            case 1:
                return "ipv4";
            case 2:
                return "ipv6";
            case 3:
                return "ib";
            case 4:
                return "fc";
            default:
                return "adrfam-" + adrfam;
        }
    }

    /** SUBTYPE as nvme-cli prints it. */
    public String subtypeName() {
        switch (subtype) {
            case SUBTYPE_REFERRAL:
                return "discovery subsystem referral";
            case SUBTYPE_NVM:
                return "nvme subsystem";
            case SUBTYPE_CURRENT_DISCOVERY:
                return "current discovery subsystem";
            default:
                return "unknown subtype " + subtype;
        }
    }

    /** TREQ bit 2: the controller can disable SQ flow control (a host may set Connect CATTR bit 2). */
    public boolean sqFlowControlDisableSupported() {
        return (treq & 0x4) != 0;
    }

    /** TREQ as nvme-cli prints it: the secure channel requirement, plus "sq flow control disable supported". */
    public String treqDescription() {
        String secure;
        switch (treq & 0x3) {
            case 1:
                secure = "required";
                break;
            case 2:
                secure = "not required";
                break;
            default:
                secure = "not specified";
                break;
        }
        return sqFlowControlDisableSupported() ? secure + ", sq flow control disable supported" : secure;
    }

    /** SECTYPE, TSAS byte 0 of a TCP entry. */
    public int sectype() {
        return trtype == TRTYPE_TCP ? tsas & 0xFF : 0;
    }

    /** RDMA QPTYPE (1 reliable connected, 2 reliable datagram), TSAS byte 0 of an RDMA entry. */
    public int rdmaQptype() {
        return trtype == TRTYPE_RDMA ? tsas & 0xFF : 0;
    }

    /** RDMA PRTYPE (1 not specified, 2 IB, 3 RoCE v1, 4 RoCE v2, 5 iWARP), TSAS byte 1. */
    public int rdmaPrtype() {
        return trtype == TRTYPE_RDMA ? (tsas >>> 8) & 0xFF : 0;
    }

    /** RDMA CMS (1 RDMA_CM), TSAS byte 2. */
    public int rdmaCms() {
        return trtype == TRTYPE_RDMA ? (tsas >>> 16) & 0xFF : 0;
    }

    /** RDMA QPTYPE as nvme-cli prints it. */
    public String rdmaQptypeName() {
        switch (rdmaQptype()) {
            case 1:
                return "connected";
            case 2:
                return "datagram";
            default:
                return "unrecognized";
        }
    }

    /** RDMA PRTYPE as nvme-cli prints it. */
    public String rdmaPrtypeName() {
        switch (rdmaPrtype()) {
            case 1:
                return "not specified";
            case 2:
                return "infiniband";
            case 3:
                return "roce";
            case 4:
                return "roce-v2";
            case 5:
                return "iwarp";
            default:
                return "unrecognized";
        }
    }

    /** RDMA CMS as nvme-cli prints it. */
    public String rdmaCmsName() {
        return rdmaCms() == 1 ? "rdma-cm" : "unrecognized";
    }

    /** SECTYPE as nvme-cli prints it. */
    public String sectypeName() {
        switch (sectype()) {
            case 0:
                return "none";
            case 1:
                return "tls1.2";
            case 2:
                return "tls1.3";
            default:
                return "sectype-" + sectype();
        }
    }
}
