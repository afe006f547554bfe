package io.nvmeof.transport.tcp;

import static io.nvmeof.transport.tcp.PduHeader.FLAG_LAST_PDU;
import static io.nvmeof.transport.tcp.PduHeader.FLAG_SUCCESS;

import io.netty.buffer.ByteBuf;

/**
 * The host's C2HData receive path on one NVMe/TCP connection (nvmeof-protocol.md §5.10, §7.5), for the HOST-role
 * {@link NvmeTcpPduDecoder}: the rules a C2HData header must pass before any of its data is taken, then the data
 * itself, copied once from the socket's read buffers into the caller's buffer piece by piece as it arrives (a 128 KiB
 * read never grows the cumulation to 128 KiB). Owned by the connection's event loop; the command state it reads and
 * advances is the {@link TcpHostRequest} of the {@link NvmeTcpHostHandler} it serves.
 */
final class C2hDataReceiver implements NvmeTcpPduDecoder.C2hDataCheck, NvmeTcpPduDecoder.C2hDataSink {
    private final NvmeTcpHostHandler handler;
    private final HostPduWriter writer;

    C2hDataReceiver(NvmeTcpHostHandler handler, HostPduWriter writer) {
        this.handler = handler;
        this.writer = writer;
    }

    /**
     * The C2HData rules, as soon as the header is in and before any of its data reaches {@link #c2hData}: a known
     * controller→host CID, DATAO = bytes so far, DATAO + DATAL ≤ LENGTH, SUCCESS only with LAST_PDU and the whole
     * length. Allocates only to describe a fault.
     */
    @Override
    public String check(int cid, long datao, int datal, int flags) {
        TcpHostRequest r = handler.inFlight(cid);
        if (r == null) {
            return "C2HData for CID " + cid + ", which is not in flight";
        }
        if (r.hostToController || r.length == 0) {
            return "C2HData for CID " + cid + ", which reads no data";
        }
        if (r.lastPdu) {
            return "C2HData for CID " + cid + " after its LAST_PDU";
        }
        if (datao != r.received) {
            return "C2HData DATAO " + datao + " but " + r.received + " bytes received so far (CID " + cid + ")";
        }
        long end = datao + datal;
        if (end > r.length) {
            return "C2HData [" + datao + ", " + end + ") beyond the " + r.length + " bytes of CID " + cid;
        }
        if ((flags & FLAG_SUCCESS) != 0) {
            if ((flags & FLAG_LAST_PDU) == 0) {
                return "C2HData with SUCCESS but without LAST_PDU (CID " + cid + ")";
            }
            if (end != r.length) {
                return "C2HData with SUCCESS after " + end + " of " + r.length + " bytes (CID " + cid + ")";
            }
        }
        return null;
    }

    /** C2HData bytes, straight from the socket's read buffer into the caller's buffer (the one copy). */
    @Override
    public void c2hData(int cid, long offset, ByteBuf src, int index, int length) {
        if (handler.closed()) {
            return;
        }
        // check() accepted the header, and nothing but the close completes or reuses a CID while its C2HData streams.
        writer.copyOut(src, index, handler.request(cid), (int) offset, length);
    }

    /** The end of a C2HData: bytes received, LAST_PDU, the data digest, and completion on SUCCESS. */
    @Override
    public void c2hDataEnd(int cid, long datao, int datal, int flags, boolean digestOk) {
        if (handler.closed()) {
            return;
        }
        TcpHostRequest r = handler.request(cid);
        if (!digestOk) {
            // The bytes are not trusted: the command fails with Data Transfer Error (nvmeof-protocol.md §5.8).
            r.digestError = true;
        }
        r.received = datao + datal;
        r.lastPdu = (flags & FLAG_LAST_PDU) != 0;
        if ((flags & FLAG_SUCCESS) != 0) {
            handler.completeWithoutCapsuleResp(r);
        }
    }
}
