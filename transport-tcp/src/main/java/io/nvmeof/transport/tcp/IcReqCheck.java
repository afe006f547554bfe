package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.TermReqPdu.FES_UNSUPPORTED_PARAMETER;

/**
 * The target's answer to an ICReq (nvmeof-protocol.md §5.4): PFV must be 0; HPDA must be 0 (like nvmet we never pad
 * C2HData, so we cannot honour a host alignment, §5.9); the ICResp enables the digests the host asked for when the
 * listener allows digests, none otherwise. A refusal is FES Unsupported Parameter; {@link #fei()} and {@link #fault()}
 * then say which field (the caller answers with a C2HTermReq). Stateless but for the last refusal; one per connection.
 */
final class IcReqCheck {
    private int fei;
    private String fault;

    /** The DGST bits the ICResp enables (both directions use them), or -1 if the ICReq is refused. */
    int digests(IcReqPdu ic, boolean digestsAllowed) {
        if (ic.pfv() != 0) {
            return refuse(IcReqPdu.PFV_OFFSET, "ICReq PFV " + ic.pfv() + " (only 0 exists)");
        }
        if (ic.hpda() != 0) {
            return refuse(IcReqPdu.HPDA_OFFSET, "ICReq HPDA " + ic.hpda() + " (only 0 supported)");
        }
        return digestsAllowed ? ic.dgst() & (IcReqPdu.DGST_HEADER | IcReqPdu.DGST_DATA) : 0;
    }

    int fes() {
        return FES_UNSUPPORTED_PARAMETER;
    }

    int fei() {
        return fei;
    }

    String fault() {
        return fault;
    }

    private int refuse(int offset, String why) {
        fei = offset;
        fault = why;
        return -1;
    }
}
