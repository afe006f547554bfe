package io.nvmeof.core.auth;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Helpers the message records share: little-endian buffers and the header check. Package-private. */
final class Messages {
    private Messages() {}

    static ByteBuffer allocate(int length) {
        return ByteBuffer.allocate(length).order(ByteOrder.LITTLE_ENDIAN);
    }

    static ByteBuffer wrap(byte[] message) {
        return ByteBuffer.wrap(message).order(ByteOrder.LITTLE_ENDIAN);
    }

    static void header(ByteBuffer b, int type, int id, int tid) {
        b.put(0, (byte) type).put(1, (byte) id).putShort(4, (short) tid);
    }

    /** Checks the length and the AUTH_Type/AUTH_Id of {@code m}; returns it as a little-endian buffer. */
    static ByteBuffer expect(byte[] m, int minLength, int type, int id, String name) throws AuthMessageException {
        if (m.length < 2 || (m[0] & 0xFF) != type || (m[1] & 0xFF) != id) {
            throw new AuthMessageException(
                    AuthProtocol.INCORRECT_MESSAGE,
                    m.length < 2
                            ? "expected " + name + ", got " + m.length + " bytes"
                            : String.format(
                                    "expected %s, got message type %02xh id %02xh", name, m[0] & 0xFF, m[1] & 0xFF));
        }
        if (m.length < minLength) {
            throw new AuthMessageException(
                    AuthProtocol.INCORRECT_PAYLOAD, name + " of " + m.length + " bytes (at least " + minLength + ")");
        }
        return wrap(m);
    }

    static int u8(ByteBuffer b, int i) {
        return b.get(i) & 0xFF;
    }

    static int u16(ByteBuffer b, int i) {
        return b.getShort(i) & 0xFFFF;
    }

    static byte[] bytes(ByteBuffer b, int from, int length) {
        byte[] out = new byte[length];
        b.get(from, out);
        return out;
    }

    /** AUTH_Type and AUTH_Id of a message, or -1 if it has fewer than two bytes. */
    static int kind(byte[] m) {
        return m.length < 2 ? -1 : (m[0] & 0xFF) << 8 | (m[1] & 0xFF);
    }
}
