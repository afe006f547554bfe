package io.nvmeof.conformance;

import io.nvmeof.conformance.Outcome.Fate;
import io.nvmeof.core.command.Status;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Compares the two targets' outcomes of a sequence step by step: the connection's fate; then the CQE status (SCT, SC,
 * More, DNR — not CRD, a retry-delay hint), DW0 (DW1 for Property Get), and, when both succeeded, the returned data
 * after {@link Masks}, field by field ({@link Fields}).
 */
final class Comparator {
    private Comparator() {}

    static List<Difference> compare(Sequence seq, List<Outcome> ours, List<Outcome> theirs) {
        List<Difference> out = new ArrayList<>();
        boolean diverged = false;
        Map<Cmd.Queue, Integer> previous = new EnumMap<>(Cmd.Queue.class); // the last step sent on each queue
        StringBuilder earlier = new StringBuilder(); // the labels of all steps before, on either queue
        for (int i = 0; i < seq.steps().size(); i++) {
            Cmd cmd = seq.steps().get(i).cmd();
            Outcome a = ours.get(i);
            Outcome b = theirs.get(i);
            if (cmd == null || a == null || b == null) {
                continue;
            }
            Integer p = previous.put(cmd.queue(), i);
            Map<String, String> prior = new LinkedHashMap<>();
            if (p != null) {
                prior.putAll(Keys.prior(seq.steps().get(p).cmd(), theirs.get(p)));
            }
            prior.put("earlier", earlier.toString());
            earlier.append(earlier.length() == 0 ? "" : " ; ").append(cmd.label());
            List<Difference> d = compare(seq.id(), i, cmd, prior, a, b, diverged);
            out.addAll(d);
            diverged |=
                    d.stream().anyMatch(x -> x.what().equals("fate") || x.what().equals("status"));
        }
        return out;
    }

    static List<Difference> compare(int seq, int step, Cmd cmd, Outcome a, Outcome b, boolean cascade) {
        return compare(seq, step, cmd, Map.of(), a, b, cascade);
    }

    /** One step; {@code prior} holds the keys that describe what came before ({@link Keys#prior}, {@code earlier}). */
    static List<Difference> compare(
            int seq, int step, Cmd cmd, Map<String, String> prior, Outcome a, Outcome b, boolean cascade) {
        Map<String, String> keys = Keys.of(cmd);
        keys.putAll(prior);
        List<Difference> out = new ArrayList<>();
        if (a.fate() != b.fate() || (a.fate() == Fate.TERMINATED && a.fes() != b.fes())) {
            out.add(new Difference(seq, step, keys, "fate", a.fateText(), b.fateText(), cascade));
            return out;
        }
        if (a.fate() != Fate.KEPT) {
            return out;
        }
        if (!statusText(a.status()).equals(statusText(b.status()))) {
            out.add(new Difference(seq, step, keys, "status", statusText(a.status()), statusText(b.status()), cascade));
            return out; // DW0/DW1 mean different things under different statuses
        }
        if (Status.isMore(a.status()) != Status.isMore(b.status())) {
            out.add(new Difference(seq, step, keys, "more", more(a.status()), more(b.status()), cascade));
        }
        int mask = ~(Status.isSuccess(a.status()) && Status.isSuccess(b.status()) ? Masks.dw0Mask(keys) : 0);
        if ((a.dw0() & mask) != (b.dw0() & mask)) {
            out.add(new Difference(seq, step, keys, "dw0", hex32(a.dw0() & mask), hex32(b.dw0() & mask), cascade));
        }
        boolean propertyGet = cmd.isFabrics() && cmd.fctype() == 0x04;
        if (propertyGet && a.dw1() != b.dw1() && (Masks.dw0Mask(keys) == 0)) {
            out.add(new Difference(seq, step, keys, "dw1", hex32(a.dw1()), hex32(b.dw1()), cascade));
        }
        if (Status.isSuccess(a.status()) && Status.isSuccess(b.status())) {
            compareData(seq, step, keys, a.data(), b.data(), cascade, out);
        }
        return out;
    }

    private static void compareData(
            int seq, int step, Map<String, String> keys, byte[] a, byte[] b, boolean cascade, List<Difference> out) {
        if (a.length != b.length) {
            out.add(new Difference(
                    seq, step, keys, "length", Integer.toString(a.length), Integer.toString(b.length), cascade));
        }
        byte[] ma = Arrays.copyOf(a, Math.min(a.length, b.length));
        byte[] mb = Arrays.copyOf(b, ma.length);
        Masks.maskData(keys, ma);
        Masks.maskData(keys, mb);
        boolean named = "06".equals(keys.get("opc")) && "admin".equals(keys.get("queue"));
        if (!named) {
            int first = Arrays.mismatch(ma, mb);
            if (first >= 0) {
                out.add(new Difference(seq, step, keys, "data", excerpt(ma, first), excerpt(mb, first), cascade));
            }
            return;
        }
        Set<String> fields = new LinkedHashSet<>();
        for (int i = 0; i < ma.length; i++) {
            if (ma[i] != mb[i]) {
                fields.add(Fields.name(keys, i));
            }
        }
        for (String f : fields) {
            out.add(new Difference(seq, step, keys, "data:" + f, excerpt(ma, f, keys), excerpt(mb, f, keys), cascade));
        }
    }

    /**
     * SCT/SC in hex, plus {@code +DNR}: e.g. {@code 0/02+DNR}; success is {@code 0/00}. The More bit is compared on
     * its own ({@code what=more}): it says whether the controller logged an Error Information entry, which is
     * independent of the status itself.
     */
    static String statusText(int status) {
        return Status.sct(status) + "/" + String.format("%02x", Status.sc(status))
                + (Status.isDnr(status) ? "+DNR" : "");
    }

    private static String more(int status) {
        return Status.isMore(status) ? "M" : "-";
    }

    private static boolean succeeded(Outcome o) {
        return o.completed() && Status.isSuccess(o.status());
    }

    static String hex32(int v) {
        return String.format("%08x", v);
    }

    private static String excerpt(byte[] data, int from) {
        int to = Math.min(data.length, from + 8);
        return "@" + from + ":" + HexFormat.of().formatHex(data, from, to);
    }

    private static String excerpt(byte[] data, String field, Map<String, String> keys) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < data.length && sb.length() < 32; i++) {
            if (Fields.name(keys, i).equals(field)) {
                sb.append(String.format("%02x", data[i]));
            }
        }
        return sb.toString();
    }
}
