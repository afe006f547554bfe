package io.nvmeof.transport.tcp;

/**
 * Reads the length of the first PSK binder in a TLS 1.3 ClientHello (RFC 8446 §4.2.11: the pre_shared_key extension,
 * type 41, last in the ClientHello: identities, then binders, each binder one length byte and an HMAC). The binder's
 * length is the output length of the hash the client bound its PSK to: 32 for SHA-256, 48 for SHA-384.
 *
 * <p>Why the controller looks: tlshd (ktls-utils 1.0, GnuTLS 3.8), which does the Linux host's handshakes, binds
 * every external PSK to SHA-256, also the 48-byte PSKs of "NVMe0R02" identities, and then negotiates a SHA-256 cipher
 * suite (seen in the peer VM: TLS_CHACHA20_POLY1305_SHA256 for an R02 key). A controller that assumed SHA-384 for
 * R02 would fail every such handshake.
 */
final class ClientHelloBinders {
    /** RFC 8446 §4.2: extension type pre_shared_key. */
    private static final int PRE_SHARED_KEY = 41;

    private ClientHelloBinders() {}

    /**
     * @param b   bytes starting with the TLS record that carries the ClientHello
     * @param len how many bytes of {@code b} are valid
     * @return the first binder's length, -1 if the record is not complete yet, 0 if there is no PSK extension or the
     *     ClientHello does not fit in the first record
     */
    static int firstBinderLength(byte[] b, int len) {
        if (len < 5) {
            return -1;
        }
        int recordEnd = 5 + u16(b, 3);
        if (len < recordEnd) {
            return -1;
        }
        int p = 5;
        if (recordEnd - p < 4 || b[p] != 1) { // handshake type client_hello
            return 0;
        }
        int helloEnd = p + 4 + (u8(b, p + 1) << 16 | u16(b, p + 2));
        if (helloEnd > recordEnd) {
            return 0;
        }
        p += 4 + 2 + 32; // header, legacy_version, random
        p = skip8(b, p, helloEnd); // legacy_session_id
        p = skip16(b, p, helloEnd); // cipher_suites
        p = skip8(b, p, helloEnd); // legacy_compression_methods
        if (p < 0 || p + 2 > helloEnd) {
            return 0;
        }
        int end = Math.min(helloEnd, p + 2 + u16(b, p));
        p += 2;
        while (p + 4 <= end) {
            int type = u16(b, p);
            int extLen = u16(b, p + 2);
            int body = p + 4;
            if (type == PRE_SHARED_KEY && body + extLen <= end) {
                int binders = skip16(b, body, body + extLen); // identities
                if (binders < 0 || binders + 3 > body + extLen) {
                    return 0;
                }
                return u8(b, binders + 2);
            }
            p = body + extLen;
        }
        return 0;
    }

    /** Whether a complete ClientHello in the first record offers {@code suite} (false if it cannot be read). */
    static boolean offers(byte[] b, int len, int suite) {
        if (len < 9 || len < 5 + u16(b, 3) || b[5] != 1) {
            return false;
        }
        int end = Math.min(len, 5 + u16(b, 3));
        int p = skip8(b, 5 + 4 + 2 + 32, end); // legacy_session_id
        if (p < 0 || p + 2 > end) {
            return false;
        }
        int suitesEnd = Math.min(end, p + 2 + u16(b, p));
        for (int i = p + 2; i + 2 <= suitesEnd; i += 2) {
            if (u16(b, i) == suite) {
                return true;
            }
        }
        return false;
    }

    private static int skip8(byte[] b, int p, int end) {
        return p < 0 || p + 1 > end ? -1 : p + 1 + u8(b, p);
    }

    private static int skip16(byte[] b, int p, int end) {
        return p < 0 || p + 2 > end ? -1 : p + 2 + u16(b, p);
    }

    private static int u8(byte[] b, int p) {
        return b[p] & 0xFF;
    }

    private static int u16(byte[] b, int p) {
        return (b[p] & 0xFF) << 8 | (b[p + 1] & 0xFF);
    }
}
