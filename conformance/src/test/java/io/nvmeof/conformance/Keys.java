package io.nvmeof.conformance;

import io.nvmeof.core.command.AdminOpcode;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The fields of a command that allow-list rules and masks match on, named as in the spec: {@code queue}
 * (admin|io), {@code opc}, {@code fctype}, {@code prop} (property OFST), {@code fid}, {@code sel}, {@code lid},
 * {@code cns}, {@code nsid} — hex, two digits (eight for nsid and prop), lower case — and {@code label}; the
 * comparison adds {@code prior} and {@code priorok} ({@link #prior}).
 */
final class Keys {
    private Keys() {}

    static Map<String, String> of(Cmd c) {
        Map<String, String> k = new LinkedHashMap<>();
        k.put("queue", c.queue() == Cmd.Queue.ADMIN ? "admin" : "io");
        k.put("opc", hex2(c.opcode()));
        if (c.isFabrics()) {
            k.put("fctype", hex2(c.fctype()));
            if (c.fctype() == 0x00 || c.fctype() == 0x04) {
                k.put("prop", hex2(c.cdw(11)));
            }
        } else if (c.queue() == Cmd.Queue.ADMIN) {
            int cdw10 = c.cdw(10);
            if (c.opcode() == AdminOpcode.GET_FEATURES.code()) {
                k.put("fid", hex2(cdw10 & 0xFF));
                k.put("sel", Integer.toString((cdw10 >>> 8) & 0x7));
            } else if (c.opcode() == AdminOpcode.SET_FEATURES.code()) {
                k.put("fid", hex2(cdw10 & 0xFF));
                k.put("sv", Integer.toString(cdw10 >>> 31));
            } else if (c.opcode() == AdminOpcode.GET_LOG_PAGE.code()) {
                k.put("lid", hex2(cdw10 & 0xFF));
            } else if (c.opcode() == AdminOpcode.IDENTIFY.code()) {
                k.put("cns", hex2(cdw10 & 0xFF));
            }
        }
        if (!c.isFabrics()) {
            k.put("nsid", String.format("%08x", c.nsid()));
        }
        k.put("label", c.label());
        return k;
    }

    /**
     * The previous command on the same queue of the sequence, as nvmet saw it: {@code prior} (its label) and
     * {@code priorok} ({@code y} when nvmet completed it with success, else {@code n}). Some of nvmet-tcp's fates
     * depend on the command before (a refused Connect, in-capsule data it did not read).
     */
    static Map<String, String> prior(Cmd previous, Outcome theirs) {
        boolean ok = theirs != null && theirs.completed() && theirs.status() == 0;
        return Map.of("prior", previous.label(), "priorok", ok ? "y" : "n");
    }

    static String hex2(int v) {
        return String.format("%02x", v);
    }
}
