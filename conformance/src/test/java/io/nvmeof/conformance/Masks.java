package io.nvmeof.conformance;

import java.util.List;
import java.util.Map;

/**
 * What the comparison ignores, and why: fields that identify a product or an instance, or that count or time things,
 * and so differ between any two conforming controllers. The list is explicit on purpose (docs/conformance.md prints it);
 * everything not here is compared. A rule applies when its matcher (allow-list syntax) matches the command.
 */
final class Masks {
    /** Ignore {@code data[from, to)} of the commands {@code matcher} selects. */
    record DataMask(String matcher, int from, int to, String field) {}

    /** Ignore the CQE DW0 bits in {@code bits} of successful commands {@code matcher} selects. */
    record Dw0Mask(String matcher, int bits, String field) {}

    /** NVMe Base 2.0, Figure 275 (Identify Controller) and Figure 280 (Identify Namespace, NVM command set). */
    static final List<DataMask> DATA = List.of(
            new DataMask("opc=06 cns=01", 0, 4, "VID, SSVID (PCI vendor IDs)"),
            new DataMask("opc=06 cns=01", 4, 24, "SN (serial number)"),
            new DataMask("opc=06 cns=01", 24, 64, "MN (model number)"),
            new DataMask("opc=06 cns=01", 64, 72, "FR (firmware revision)"),
            new DataMask("opc=06 cns=01", 73, 76, "IEEE (OUI)"),
            new DataMask("opc=06 cns=01", 78, 80, "CNTLID"),
            new DataMask("opc=06 cns=01", 80, 84, "VER (version-specific)"),
            new DataMask("opc=06 cns=01", 112, 128, "FGUID"),
            new DataMask("opc=06 cns=01", 768, 1024, "SUBNQN"),
            new DataMask("opc=06 cns=01", 3072, 4096, "vendor specific"),
            new DataMask("opc=06 cns=00", 104, 120, "NGUID"),
            new DataMask("opc=06 cns=00", 120, 128, "EUI64"),
            new DataMask("opc=06 cns=00", 3840, 4096, "vendor specific"),
            new DataMask("opc=02 lid=02", 32, 192, "SMART counters (data units, commands, busy time, power-on)"),
            new DataMask("opc=02 lid=01", 0, 8, "Error Information: error count"),
            new DataMask("opc=02 lid=c0", 0, RawHost.MAX_DATA, "vendor specific (our performance counters)"),
            new DataMask("opc=0a fid=0e", 0, 6, "Timestamp"));

    static final List<Dw0Mask> DW0 = List.of(
            new Dw0Mask("opc=7f fctype=01", 0xFFFF, "Connect: CNTLID"),
            new Dw0Mask("opc=7f fctype=04 prop=08", 0xFFFFFFFF, "Property Get VS (version-specific)"));

    private Masks() {}

    /** Applies the data masks (and the Namespace Identification Descriptor values, CNS 03h) in place. */
    static void maskData(Map<String, String> keys, byte[] data) {
        for (DataMask m : DATA) {
            if (AllowList.Rule.parse(m.matcher + " | mask").matches(keys)) {
                for (int i = m.from; i < Math.min(m.to, data.length); i++) {
                    data[i] = 0;
                }
            }
        }
        if ("06".equals(keys.get("opc")) && "03".equals(keys.get("cns")) && "admin".equals(keys.get("queue"))) {
            // NIDT (1 byte), NIDL (1), reserved (2), then NIDL bytes of EUI64/NGUID/UUID/CSI: the values are random.
            int i = 0;
            while (i + 4 <= data.length && data[i] != 0) {
                int nidt = data[i] & 0xFF;
                int nidl = data[i + 1] & 0xFF;
                if (nidt != 0x04) { // keep the CSI value (NIDT 04h): it is the command set, not an identity
                    for (int j = i + 4; j < Math.min(i + 4 + nidl, data.length); j++) {
                        data[j] = 0;
                    }
                }
                i += 4 + nidl;
            }
        }
    }

    static int dw0Mask(Map<String, String> keys) {
        int bits = 0;
        for (Dw0Mask m : DW0) {
            if (AllowList.Rule.parse(m.matcher + " | mask").matches(keys)) {
                bits |= m.bits;
            }
        }
        return bits;
    }
}
