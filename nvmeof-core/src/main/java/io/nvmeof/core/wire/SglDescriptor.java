package io.nvmeof.core.wire;

/**
 * A 16-byte SGL descriptor (nvmeof-protocol.md §1.3).
 *
 * <pre>
 *  byte 0            8            11          15
 *       +------------+------------+-----------+----+
 *  unkeyed   ADDRESS (u64)  LENGTH (u32)   reserved  ID
 *  keyed     ADDRESS (u64)  LENGTH (u24) KEY (u32)   ID
 * </pre>
 * The identifier byte holds the type in bits 7:4 and the subtype in bits 3:0.
 */
public final class SglDescriptor extends Flyweight {
    public static final int LENGTH = 16;
    public static final int ADDRESS_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    public static final int KEY_OFFSET = 11;
    public static final int IDENTIFIER_OFFSET = 15;

    // Types, nvmeof-protocol.md §1.3.
    public static final int TYPE_DATA_BLOCK = 0x0;
    public static final int TYPE_BIT_BUCKET = 0x1;
    public static final int TYPE_SEGMENT = 0x2;
    public static final int TYPE_LAST_SEGMENT = 0x3;
    public static final int TYPE_KEYED_DATA_BLOCK = 0x4;
    public static final int TYPE_TRANSPORT_DATA_BLOCK = 0x5;
    // Subtypes, nvmeof-protocol.md §1.3.
    public static final int SUBTYPE_ADDRESS = 0x0;
    public static final int SUBTYPE_OFFSET = 0x1;
    public static final int SUBTYPE_TRANSPORT_SPECIFIC = 0xA;
    public static final int SUBTYPE_INVALIDATE = 0xF;

    /** Data block, offset: in-capsule data (TCP and RDMA). */
    public static final int ID_IN_CAPSULE = 0x01;
    /** Transport data block, transport specific: NVMe/TCP data in C2HData/H2CData PDUs. */
    public static final int ID_TCP_TRANSPORT = 0x5A;
    /** Keyed data block, address: RDMA. */
    public static final int ID_KEYED = 0x40;
    /** Keyed data block, address + invalidate: RDMA with remote invalidation. */
    public static final int ID_KEYED_INVALIDATE = 0x4F;

    @Override
    public int length() {
        return LENGTH;
    }

    public long address() {
        return u64(ADDRESS_OFFSET);
    }

    public SglDescriptor address(long address) {
        u64(ADDRESS_OFFSET, address);
        return this;
    }

    /** LENGTH of an unkeyed descriptor, 32 bits (as an unsigned value in a long). */
    public long dataLength() {
        return u32(LENGTH_OFFSET) & 0xFFFFFFFFL;
    }

    public SglDescriptor dataLength(int length) {
        u32(LENGTH_OFFSET, length);
        return this;
    }

    /** LENGTH of a keyed descriptor: 24 bits. */
    public int keyedLength() {
        return u16(LENGTH_OFFSET) | (u8(LENGTH_OFFSET + 2) << 16);
    }

    public SglDescriptor keyedLength(int length) {
        if ((length & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException("a keyed SGL length has 24 bits: " + length);
        }
        u16(LENGTH_OFFSET, length & 0xFFFF);
        u8(LENGTH_OFFSET + 2, length >>> 16);
        return this;
    }

    public int key() {
        return u32(KEY_OFFSET);
    }

    public SglDescriptor key(int key) {
        u32(KEY_OFFSET, key);
        return this;
    }

    public int identifier() {
        return u8(IDENTIFIER_OFFSET);
    }

    public SglDescriptor identifier(int identifier) {
        u8(IDENTIFIER_OFFSET, identifier);
        return this;
    }

    public int type() {
        return identifier() >>> 4;
    }

    public int subtype() {
        return identifier() & 0xF;
    }

    public boolean isKeyed() {
        return type() == TYPE_KEYED_DATA_BLOCK;
    }

    /** Fills an unkeyed descriptor. */
    public SglDescriptor set(int identifier, long address, int length) {
        address(address);
        dataLength(length);
        buffer.put(offset + 12, (byte) 0).put(offset + 13, (byte) 0).put(offset + 14, (byte) 0);
        return identifier(identifier);
    }

    /** Fills a keyed descriptor. */
    public SglDescriptor setKeyed(int identifier, long address, int length, int key) {
        address(address);
        keyedLength(length);
        key(key);
        return identifier(identifier);
    }
}
