package io.nvmeof.core.spi;

/**
 * The transport facts a controller reports for queues on one port: in Identify Controller (nvmeof-protocol.md §3.2.1), CAP (nvmeof-protocol.md §2.3) and
 * discovery log entries (nvmeof-protocol.md §3.3).
 *
 * @param transportType     TRTYPE: 3 TCP, 1 RDMA
 * @param addressFamily     ADRFAM: 1 IPv4, 2 IPv6
 * @param address           TRADDR as text
 * @param serviceId         TRSVCID as text (the port number)
 * @param portId            PORTID
 * @param maxQueueSize      I/O queue entries allowed (CAP.MQES + 1, MAXCMD)
 * @param inCapsuleDataSize in-capsule data bytes on I/O queues (IOCCSZ = 4 + this / 16)
 * @param sgls              Identify SGLS value: TCP 0x00100001, RDMA 0x00100005
 * @param mdts              Identify MDTS (0 = no limit)
 * @param treq              discovery TREQ (bit 2: SQ flow control disable supported)
 * @param tsas              discovery TSAS bytes 768.. (at most 256 bytes; empty for none)
 */
public record PortInfo(
        int transportType,
        int addressFamily,
        String address,
        String serviceId,
        int portId,
        int maxQueueSize,
        int inCapsuleDataSize,
        int sgls,
        int mdts,
        int treq,
        byte[] tsas) {
    public static final int TRTYPE_RDMA = 1;
    public static final int TRTYPE_TCP = 3;
    public static final int ADRFAM_IPV4 = 1;
    public static final int ADRFAM_IPV6 = 2;
    /** TREQ bit 2: SQ flow control disable supported (nvmeof-protocol.md §3.3). */
    public static final int TREQ_SQFLOW_DISABLE_SUPPORTED = 0x04;

    /** IOCCSZ in 16-byte units: the 64-byte SQE plus in-capsule data (nvmeof-protocol.md §3.2.1). */
    public int ioccsz() {
        return (64 + inCapsuleDataSize) / 16;
    }
}
