package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.FLAG_LAST_PDU;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_DATA_OUT_OF_RANGE;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_INVALID_HEADER_FIELD;

/**
 * Takes the H2CData PDUs of one connection, as nvmet does: finds the slot its TTAG names, which must await data, checks
 * the PDU against it (CCCID, DATAO = bytes so far, the end within the transfer, LAST_PDU exactly on the last one;
 * nvmeof-protocol.md §5.6, §5.10), and puts its data where the command will read it: in place when one PDU carries
 * the whole transfer, else copied into the pooled buffer. One per connection, used on its event loop; after a failed
 * check {@link #fes()}, {@link #fei()} and {@link #fault()} say why (the caller answers with a C2HTermReq).
 */
final class H2cDataCollector {
    private final H2cDataPdu h2cData = new H2cDataPdu(); // the flyweight each PDU is read through
    private int fes;
    private int fei;
    private String fault;

    /**
     * Takes one H2CData PDU for the slot of {@code slots} its TTAG names: that request (its {@code received} counts
     * the bytes in so far), or null, with the reason set, if no slot awaits data under that TTAG or a header field is
     * wrong. Data that comes in one PDU for the whole transfer (DATAO 0, LAST_PDU) is used where the decoder put it if
     * that memory has an address (the slot takes the PDU's buffer reference and its buffer from {@code dataPool}
     * goes back at once); otherwise each PDU's data is copied into that pooled buffer. A PDU with a bad data digest is
     * consumed and remembered: the command fails with Data Transfer Error when its last PDU is in
     * (nvmeof-protocol.md §5.8).
     */
    TcpTargetRequest accept(NvmeTcpPdu pdu, TargetSlots slots, DataBufferPool dataPool) {
        H2cDataPdu h = h2cData.wrap(pdu.buffer(), 0);
        TcpTargetRequest r = slots.awaitingData(h.ttag());
        if (r == null) {
            return fail(
                    FES_INVALID_HEADER_FIELD,
                    H2cDataPdu.TTAG_OFFSET,
                    "H2CData for TTAG " + h.ttag() + ", which awaits no data");
        }
        if (h.cccid() != r.cid()) {
            return fail(
                    FES_INVALID_HEADER_FIELD,
                    H2cDataPdu.CCCID_OFFSET,
                    "H2CData CCCID " + h.cccid() + " but TTAG " + h.ttag() + " belongs to CID " + r.cid());
        }
        long datao = h.datao();
        int datal = pdu.dataLength(); // = DATAL, checked by the decoder
        if (datao != r.received) {
            return fail(
                    FES_INVALID_HEADER_FIELD,
                    H2cDataPdu.DATAO_OFFSET,
                    "H2CData DATAO " + datao + " but " + r.received + " bytes received so far (CID " + r.cid() + ")");
        }
        long end = datao + datal;
        if (end > r.dataLength()) {
            return fail(
                    FES_DATA_OUT_OF_RANGE,
                    0,
                    "H2CData [" + datao + ", " + end + ") beyond the " + r.dataLength() + " bytes of CID " + r.cid());
        }
        boolean last = end == r.dataLength();
        if (pdu.hasFlag(FLAG_LAST_PDU) != last) {
            return fail(
                    FES_INVALID_HEADER_FIELD,
                    PduHeader.FLAGS_OFFSET,
                    "H2CData ending at " + end + " of " + r.dataLength() + (last ? " without" : " with")
                            + " LAST_PDU (CID " + r.cid() + ")");
        }
        if (pdu.dataDigestValid()) {
            if (datao == 0 && last && r.keepPduData(pdu)) {
                // The whole transfer in one PDU, used in place: the buffer taken for it goes back unused.
                dataPool.giveBack(r.data);
                r.data = null;
            } else {
                r.data.buf.setBytes((int) datao, pdu.buffer(), pdu.dataIndex(), datal);
            }
        } else {
            r.dataDigestError = true; // keep consuming; the command fails when its last PDU is in
        }
        r.received = (int) end;
        return r;
    }

    private TcpTargetRequest fail(int fes, int fei, String fault) {
        this.fes = fes;
        this.fei = fei;
        this.fault = fault;
        return null;
    }

    /** The FES of the last failed check (nvmeof-protocol.md §5.7). */
    int fes() {
        return fes;
    }

    /** The FEI of the last failed check: the offset of the bad field. */
    int fei() {
        return fei;
    }

    /** What the last failed check found, for the log and the close cause. */
    String fault() {
        return fault;
    }
}
