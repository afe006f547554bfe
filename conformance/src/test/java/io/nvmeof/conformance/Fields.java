package io.nvmeof.conformance;

import java.util.Map;
import java.util.TreeMap;

/**
 * Names of data structure fields for the report and for {@code what=data:NAME} rules: Identify Controller (NVMe Base
 * 2.0 Figure 275), Identify Namespace (NVM Command Set 1.0 Figure 97). Bytes outside a named field are reported by
 * their 16-byte-aligned chunk, {@code @0x0120}, so that a rule stays valid whatever values differ.
 */
final class Fields {
    private static final TreeMap<Integer, String[]> CONTROLLER = new TreeMap<>();
    private static final TreeMap<Integer, String[]> NAMESPACE = new TreeMap<>();

    static {
        field(CONTROLLER, 72, 1, "RAB");
        field(CONTROLLER, 76, 1, "CMIC");
        field(CONTROLLER, 77, 1, "MDTS");
        field(CONTROLLER, 84, 4, "RTD3R");
        field(CONTROLLER, 88, 4, "RTD3E");
        field(CONTROLLER, 92, 4, "OAES");
        field(CONTROLLER, 96, 4, "CTRATT");
        field(CONTROLLER, 100, 2, "RRLS");
        field(CONTROLLER, 111, 1, "CNTRLTYPE");
        field(CONTROLLER, 128, 6, "CRDT");
        field(CONTROLLER, 253, 1, "NVMSR");
        field(CONTROLLER, 254, 1, "VWCI");
        field(CONTROLLER, 255, 1, "MEC");
        field(CONTROLLER, 256, 2, "OACS");
        field(CONTROLLER, 258, 1, "ACL");
        field(CONTROLLER, 259, 1, "AERL");
        field(CONTROLLER, 260, 1, "FRMW");
        field(CONTROLLER, 261, 1, "LPA");
        field(CONTROLLER, 262, 1, "ELPE");
        field(CONTROLLER, 263, 1, "NPSS");
        field(CONTROLLER, 264, 1, "AVSCC");
        field(CONTROLLER, 265, 1, "APSTA");
        field(CONTROLLER, 266, 2, "WCTEMP");
        field(CONTROLLER, 268, 2, "CCTEMP");
        field(CONTROLLER, 270, 2, "MTFA");
        field(CONTROLLER, 272, 4, "HMPRE");
        field(CONTROLLER, 276, 4, "HMMIN");
        field(CONTROLLER, 280, 16, "TNVMCAP");
        field(CONTROLLER, 296, 16, "UNVMCAP");
        field(CONTROLLER, 312, 4, "RPMBS");
        field(CONTROLLER, 316, 2, "EDSTT");
        field(CONTROLLER, 318, 1, "DSTO");
        field(CONTROLLER, 319, 1, "FWUG");
        field(CONTROLLER, 320, 2, "KAS");
        field(CONTROLLER, 322, 2, "HCTMA");
        field(CONTROLLER, 328, 4, "SANICAP");
        field(CONTROLLER, 338, 1, "NSETIDMAX");
        field(CONTROLLER, 343, 1, "ANATT");
        field(CONTROLLER, 344, 1, "ANACAP");
        field(CONTROLLER, 345, 4, "ANAGRPMAX");
        field(CONTROLLER, 349, 4, "NANAGRPID");
        field(CONTROLLER, 353, 4, "PELS");
        field(CONTROLLER, 512, 1, "SQES");
        field(CONTROLLER, 513, 1, "CQES");
        field(CONTROLLER, 514, 2, "MAXCMD");
        field(CONTROLLER, 516, 4, "NN");
        field(CONTROLLER, 520, 2, "ONCS");
        field(CONTROLLER, 522, 2, "FUSES");
        field(CONTROLLER, 524, 1, "FNA");
        field(CONTROLLER, 525, 1, "VWC");
        field(CONTROLLER, 526, 2, "AWUN");
        field(CONTROLLER, 528, 2, "AWUPF");
        field(CONTROLLER, 530, 1, "ICSVSCC");
        field(CONTROLLER, 531, 1, "NWPC");
        field(CONTROLLER, 532, 2, "ACWU");
        field(CONTROLLER, 534, 2, "OCFS");
        field(CONTROLLER, 536, 4, "SGLS");
        field(CONTROLLER, 540, 4, "MNAN");
        field(CONTROLLER, 1792, 4, "IOCCSZ");
        field(CONTROLLER, 1796, 4, "IORCSZ");
        field(CONTROLLER, 1800, 2, "ICDOFF");
        field(CONTROLLER, 1802, 1, "FCATT");
        field(CONTROLLER, 1803, 1, "MSDBD");
        field(CONTROLLER, 1804, 2, "OFCS");
        field(CONTROLLER, 2048, 32, "PSD0");

        field(NAMESPACE, 0, 8, "NSZE");
        field(NAMESPACE, 8, 8, "NCAP");
        field(NAMESPACE, 16, 8, "NUSE");
        field(NAMESPACE, 24, 1, "NSFEAT");
        field(NAMESPACE, 25, 1, "NLBAF");
        field(NAMESPACE, 26, 1, "FLBAS");
        field(NAMESPACE, 27, 1, "MC");
        field(NAMESPACE, 28, 1, "DPC");
        field(NAMESPACE, 29, 1, "DPS");
        field(NAMESPACE, 30, 1, "NMIC");
        field(NAMESPACE, 31, 1, "RESCAP");
        field(NAMESPACE, 32, 1, "FPI");
        field(NAMESPACE, 33, 1, "DLFEAT");
        field(NAMESPACE, 34, 2, "NAWUN");
        field(NAMESPACE, 36, 2, "NAWUPF");
        field(NAMESPACE, 38, 2, "NACWU");
        field(NAMESPACE, 40, 2, "NABSN");
        field(NAMESPACE, 42, 2, "NABO");
        field(NAMESPACE, 44, 2, "NABSPF");
        field(NAMESPACE, 46, 2, "NOIOB");
        field(NAMESPACE, 48, 16, "NVMCAP");
        field(NAMESPACE, 64, 2, "NPWG");
        field(NAMESPACE, 66, 2, "NPWA");
        field(NAMESPACE, 68, 2, "NPDG");
        field(NAMESPACE, 70, 2, "NPDA");
        field(NAMESPACE, 72, 2, "NOWS");
        field(NAMESPACE, 92, 4, "ANAGRPID");
        field(NAMESPACE, 99, 1, "NSATTR");
        field(NAMESPACE, 100, 2, "NVMSETID");
        field(NAMESPACE, 102, 2, "ENDGID");
        field(NAMESPACE, 128, 4, "LBAF0");
        field(NAMESPACE, 132, 4, "LBAF1");
    }

    private Fields() {}

    private static void field(TreeMap<Integer, String[]> table, int offset, int length, String name) {
        table.put(offset, new String[] {name, Integer.toString(length)});
    }

    /** The field name for byte {@code offset} of the data the command returned, e.g. {@code OACS} or {@code @0x0120}. */
    static String name(Map<String, String> keys, int offset) {
        TreeMap<Integer, String[]> table = null;
        if ("06".equals(keys.get("opc")) && "admin".equals(keys.get("queue"))) {
            table = "01".equals(keys.get("cns")) ? CONTROLLER : "00".equals(keys.get("cns")) ? NAMESPACE : null;
        }
        if (table != null) {
            Map.Entry<Integer, String[]> e = table.floorEntry(offset);
            if (e != null && offset < e.getKey() + Integer.parseInt(e.getValue()[1])) {
                return e.getValue()[0];
            }
        }
        return String.format("@0x%04x", offset & ~0xF);
    }
}
