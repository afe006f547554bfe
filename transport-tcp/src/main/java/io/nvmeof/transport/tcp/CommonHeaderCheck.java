package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.DIGEST_LENGTH;
import static io.nvmeof.transport.tcp.PduHeader.FLAGS_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_DDGSTF;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_HDGSTF;
import static io.nvmeof.transport.tcp.PduHeader.HLEN_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.PDO_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.PLEN_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_C2H_DATA;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_C2H_TERM_REQ;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_CAPSULE_CMD;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_CAPSULE_RESP;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_H2C_DATA;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_H2C_TERM_REQ;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_IC_REQ;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_IC_RESP;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_OFFSET;
import static io.nvmeof.transport.tcp.PduHeader.TYPE_R2T;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_DATA_LIMIT_EXCEEDED;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_INVALID_HEADER_FIELD;
import static io.nvmeof.transport.tcp.TermReqPdu.FES_PDU_SEQUENCE_ERROR;

import io.nvmeof.transport.tcp.NvmeTcpPduDecoder.Role;

/**
 * The checks of a PDU's 8-byte common header against the connection state and direction (nvmeof-protocol.md §5.2,
 * §5.3, §5.4, §5.9, §5.10), made by {@link NvmeTcpPduDecoder} as soon as those 8 bytes are in, before any of the body
 * is buffered. Pure logic over the header fields: no buffers, no channel. A passed check gives PLEN, the digest
 * lengths and the data length; a failed one gives the TermReq's FES and FEI and the reason, or {@link #silent()} when
 * the connection is only to be closed (a malformed TermReq is never answered, nvmeof-protocol.md §5.7). One per
 * decoder, on its event loop.
 */
final class CommonHeaderCheck {
    private final Role role;
    private final int maxInCapsuleData;
    private final int maxDataPerPdu;
    private final int termReqType;
    private boolean headerDigest;
    private boolean dataDigest;

    // The header being checked.
    private int type;
    private int flags;
    private int hlen;

    // The outcome.
    private int plen;
    private int hdgst;
    private int ddgst;
    private int dataLength;
    private int fes;
    private int fei;
    private String problem;
    private boolean silent;

    CommonHeaderCheck(Role role, int maxInCapsuleData, int maxDataPerPdu, int termReqType) {
        this.role = role;
        this.maxInCapsuleData = maxInCapsuleData;
        this.maxDataPerPdu = maxDataPerPdu;
        this.termReqType = termReqType;
    }

    /** The digests negotiated in ICReq/ICResp (nvmeof-protocol.md §5.4); every later PDU must carry exactly these. */
    void digests(boolean header, boolean data) {
        this.headerDigest = header;
        this.dataDigest = data;
    }

    /**
     * Checks TYPE, FLAGS, HLEN, PDO and PLEN; {@code initialized} says whether the IC exchange is done. True if the
     * PDU is legal here ({@link #plen()}, {@link #hdgst()}, {@link #ddgst()}, {@link #dataLength()} describe it);
     * false if not ({@link #fes()}, {@link #fei()}, {@link #problem()}, {@link #silent()}).
     */
    boolean check(int type, int flags, int hlen, int pdo, long plenLong, boolean initialized) {
        this.type = type;
        this.flags = flags;
        this.hlen = hlen;
        plen = 0;
        hdgst = 0;
        ddgst = 0;
        dataLength = 0;
        silent = false;

        if (!initialized) {
            int expected = role == Role.CONTROLLER ? TYPE_IC_REQ : TYPE_IC_RESP;
            if (type != expected) {
                // A legal PDU type at the wrong time is a sequence error; anything else is a bad TYPE field
                // (nvmeof-protocol.md §5.7).
                return legalLiveType(type)
                        ? fault(
                                FES_PDU_SEQUENCE_ERROR,
                                0,
                                PduHeader.typeName(type) + " before " + PduHeader.typeName(expected))
                        : fault(
                                FES_INVALID_HEADER_FIELD,
                                TYPE_OFFSET,
                                "first PDU has type " + PduHeader.typeName(type));
            }
            // ICReq/ICResp: HLEN = PLEN = 128, no flags, PDO 0 (nvmeof-protocol.md §5.4).
            if (hlen != IcReqPdu.LENGTH) {
                return fault(FES_INVALID_HEADER_FIELD, HLEN_OFFSET, "IC PDU with HLEN " + hlen);
            }
            if (flags != 0) {
                return fault(FES_INVALID_HEADER_FIELD, FLAGS_OFFSET, "IC PDU with FLAGS " + flags);
            }
            if (pdo != 0) {
                return fault(FES_INVALID_HEADER_FIELD, PDO_OFFSET, "IC PDU with PDO " + pdo);
            }
            if (plenLong != IcReqPdu.LENGTH) {
                return fault(FES_INVALID_HEADER_FIELD, PLEN_OFFSET, "IC PDU with PLEN " + plenLong);
            }
            plen = IcReqPdu.LENGTH;
            return true;
        }

        int expectedHlen;
        int maxData;
        switch (type) {
            case TYPE_IC_REQ:
            case TYPE_IC_RESP:
                return fault(FES_PDU_SEQUENCE_ERROR, 0, "second " + PduHeader.typeName(type));
            case TYPE_H2C_TERM_REQ:
            case TYPE_C2H_TERM_REQ:
                if (type == termReqType) {
                    return fault(
                            FES_INVALID_HEADER_FIELD,
                            TYPE_OFFSET,
                            PduHeader.typeName(type) + " in the wrong direction");
                }
                // The peer is terminating: never answer a TermReq with one (nvmeof-protocol.md §5.7); just close if it
                // is malformed.
                if (hlen != TermReqPdu.HLEN || plenLong < TermReqPdu.HLEN || plenLong > TermReqPdu.MAX_PLEN) {
                    return closeSilently(
                            "malformed " + PduHeader.typeName(type) + " (HLEN " + hlen + ", PLEN " + plenLong + ")");
                }
                plen = (int) plenLong;
                dataLength = plen - TermReqPdu.HLEN;
                return true;
            case TYPE_CAPSULE_CMD:
                if (role != Role.CONTROLLER) {
                    return badType();
                }
                expectedHlen = CapsuleCmdPdu.HLEN;
                maxData = maxInCapsuleData;
                break;
            case TYPE_H2C_DATA:
                if (role != Role.CONTROLLER) {
                    return badType();
                }
                expectedHlen = H2cDataPdu.HLEN;
                maxData = maxDataPerPdu;
                break;
            case TYPE_C2H_DATA:
                if (role != Role.HOST) {
                    return badType();
                }
                expectedHlen = C2hDataPdu.HLEN;
                maxData = maxDataPerPdu;
                break;
            case TYPE_CAPSULE_RESP:
            case TYPE_R2T:
                if (role != Role.HOST) {
                    return badType();
                }
                expectedHlen = CapsuleRespPdu.HLEN;
                maxData = 0;
                break;
            default:
                return badType();
        }
        if (hlen != expectedHlen) {
            return fault(
                    FES_INVALID_HEADER_FIELD,
                    HLEN_OFFSET,
                    PduHeader.typeName(type) + " with HLEN " + hlen + " (must be " + expectedHlen + ")");
        }
        if (((flags & FLAG_HDGSTF) != 0) != headerDigest) {
            return fault(
                    FES_INVALID_HEADER_FIELD,
                    FLAGS_OFFSET,
                    PduHeader.typeName(type)
                            + (headerDigest
                                    ? " without HDGSTF (header digest negotiated)"
                                    : " with HDGSTF (not negotiated)"));
        }
        hdgst = headerDigest ? DIGEST_LENGTH : 0;
        long headerEnd = hlen + hdgst;
        if (plenLong < headerEnd) {
            return fault(
                    FES_INVALID_HEADER_FIELD,
                    PLEN_OFFSET,
                    PduHeader.typeName(type) + " with PLEN " + plenLong + " < " + headerEnd);
        }
        if (plenLong == headerEnd) {
            // No data. H2CData/C2HData must carry some (0 < DATAL, nvmeof-protocol.md §5.10).
            if (type == TYPE_H2C_DATA || type == TYPE_C2H_DATA) {
                return fault(FES_INVALID_HEADER_FIELD, PLEN_OFFSET, PduHeader.typeName(type) + " without data");
            }
            plen = (int) plenLong;
            return true;
        }
        if (maxData == 0) {
            return fault(
                    FES_INVALID_HEADER_FIELD,
                    PLEN_OFFSET,
                    PduHeader.typeName(type) + " with PLEN " + plenLong + " (must be " + headerEnd + ")");
        }
        if (((flags & FLAG_DDGSTF) != 0) != dataDigest) {
            return fault(
                    FES_INVALID_HEADER_FIELD,
                    FLAGS_OFFSET,
                    PduHeader.typeName(type)
                            + (dataDigest
                                    ? " without DDGSTF (data digest negotiated)"
                                    : " with DDGSTF (not negotiated)"));
        }
        ddgst = dataDigest ? DIGEST_LENGTH : 0;
        if (pdo != headerEnd) {
            // We advertise 0 alignment (CPDA/HPDA 0), so data follows the header (+HDGST) directly (nvmeof-protocol.md
            // §5.9).
            return fault(
                    FES_INVALID_HEADER_FIELD,
                    PDO_OFFSET,
                    PduHeader.typeName(type) + " with PDO " + pdo + " (must be " + headerEnd + ")");
        }
        long data = plenLong - headerEnd - ddgst;
        if (data <= 0) {
            return fault(
                    FES_INVALID_HEADER_FIELD,
                    PLEN_OFFSET,
                    PduHeader.typeName(type) + " with PLEN " + plenLong + " too small for its digests");
        }
        if (data > maxData) {
            return fault(
                    FES_DATA_LIMIT_EXCEEDED,
                    0,
                    PduHeader.typeName(type) + " carries " + data + " data bytes, more than the " + maxData
                            + " allowed");
        }
        plen = (int) plenLong;
        dataLength = (int) data;
        return true;
    }

    private boolean badType() {
        return fault(
                FES_INVALID_HEADER_FIELD,
                TYPE_OFFSET,
                "unexpected " + PduHeader.typeName(type) + " from the "
                        + (role == Role.CONTROLLER ? "host" : "controller"));
    }

    private boolean legalLiveType(int t) {
        return role == Role.CONTROLLER
                ? t == TYPE_CAPSULE_CMD || t == TYPE_H2C_DATA || t == TYPE_H2C_TERM_REQ
                : t == TYPE_CAPSULE_RESP || t == TYPE_C2H_DATA || t == TYPE_R2T || t == TYPE_C2H_TERM_REQ;
    }

    private boolean fault(int fes, int fei, String problem) {
        this.fes = fes;
        this.fei = fei;
        this.problem = problem;
        return false;
    }

    private boolean closeSilently(String problem) {
        this.silent = true;
        this.problem = problem;
        return false;
    }

    /** PLEN of a legal PDU. */
    int plen() {
        return plen;
    }

    /** 4 if it carries a header digest, else 0. */
    int hdgst() {
        return hdgst;
    }

    /** 4 if it carries a data digest, else 0. */
    int ddgst() {
        return ddgst;
    }

    /** Its data bytes: PLEN − PDO − DDGST (nvmeof-protocol.md §5.2); for a TermReq, the copied header length. */
    int dataLength() {
        return dataLength;
    }

    /** FES of a failed check (nvmeof-protocol.md §5.7). */
    int fes() {
        return fes;
    }

    /** FEI of a failed check: the offset of the bad field, or 0. */
    int fei() {
        return fei;
    }

    /** Why the check failed (for the log and the close cause). */
    String problem() {
        return problem;
    }

    /** The failed PDU is a malformed TermReq: close without answering. */
    boolean silent() {
        return silent;
    }
}
