package io.nvmeof.target;

import io.nvmeof.core.command.LogPageId;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The log pages that describe the controller rather than its state (NVMe Base 2.0c §5.16.1): Supported Log Pages
 * (00h) and Firmware Slot Information (03h, mandatory). Admin path: pages are built per command.
 */
final class SupportLogPages {
    /** Supported Log Pages entry: LSUPP (bit 0) and IOS, index offset supported (bit 1: we honour LPOL/LPOU). */
    private static final int LSUPP = 1;

    private static final int IOS = 1 << 1;
    /** Firmware Slot Information is 512 bytes: AFI at 0, FRS1..FRS7 at 8, 16, .. 56 (8 ASCII bytes each). */
    static final int FIRMWARE_SLOT_SIZE = 512;
    /** Identify Controller FRMW: bit 0 slot 1 read-only, bits 3:1 one slot; no activation without reset (bit 4). */
    static final int FRMW = 0x03;

    private SupportLogPages() {}

    /** LID 00h: every LID an I/O controller answers (LogPageId, less the discovery log), 4 bytes each. */
    static ByteBuffer supportedLogPages() {
        ByteBuffer b = page(1024);
        for (LogPageId lid : LogPageId.values()) {
            if (lid != LogPageId.DISCOVERY) {
                b.putInt(4 * lid.code(), LSUPP | IOS);
            }
        }
        return b;
    }

    /** LID 03h: AFI = slot 1 active (and next at reset: 0, none named), FRS1 = Identify FR; slots 2–7 absent. */
    static ByteBuffer firmwareSlots() {
        ByteBuffer b = page(FIRMWARE_SLOT_SIZE);
        b.put(0, (byte) 1); // AFI bits 2:0: the running firmware is in slot 1
        byte[] fr = ControllerProfile.FIRMWARE_REVISION.getBytes(StandardCharsets.US_ASCII);
        for (int i = 0; i < 8; i++) {
            b.put(8 + i, i < fr.length ? fr[i] : (byte) ' ');
        }
        return b;
    }

    private static ByteBuffer page(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }
}
