package io.nvmeof.transport.tcp;

/**
 * The host's checks of an ICResp, as the Linux host makes them (nvmeof-protocol.md §5.4): PFV 0, digests exactly as
 * asked in the ICReq, CPDA 0, MAXH2CDATA a multiple of 4 and at least 4096. TYPE, HLEN and PLEN were checked by the
 * decoder.
 */
final class IcRespCheck {
    private IcRespCheck() {}

    /** What is wrong with {@code ic} for an ICReq that asked for digests {@code wanted} (DGST bits), or null. */
    static String problem(IcRespPdu ic, int wanted) {
        int got = ic.dgst() & (IcReqPdu.DGST_HEADER | IcReqPdu.DGST_DATA);
        long maxH2c = ic.maxH2cData();
        if (ic.pfv() != 0) {
            return "answered ICReq with PFV " + ic.pfv() + " (only 0 exists)";
        } else if (got != wanted) {
            return digestProblem(wanted, got);
        } else if (ic.cpda() != 0) {
            return "asks for PDU data alignment CPDA " + ic.cpda() + " (only 0 is supported, as on Linux)";
        } else if (maxH2c < IcRespPdu.MIN_MAXH2CDATA || maxH2c % 4 != 0) {
            return "sent MAXH2CDATA " + maxH2c + " (must be a multiple of 4 and at least 4096)";
        }
        return null;
    }

    private static String digestProblem(int wanted, int got) {
        StringBuilder b = new StringBuilder();
        int refused = wanted & ~got;
        int unasked = got & ~wanted;
        if (refused != 0) {
            b.append("refused ").append(digestNames(refused));
        }
        if (unasked != 0) {
            b.append(refused != 0 ? " and enabled " : "enabled ")
                    .append(digestNames(unasked))
                    .append(" that were not asked for");
        }
        return b.toString();
    }

    private static String digestNames(int bits) {
        return bits == 3 ? "header and data digests" : bits == IcReqPdu.DGST_HEADER ? "header digests" : "data digests";
    }
}
