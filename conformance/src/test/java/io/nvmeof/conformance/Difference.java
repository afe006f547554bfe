package io.nvmeof.conformance;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One way the two targets answered one command differently.
 *
 * @param sequence the sequence's index in the corpus
 * @param step the step's index in the sequence
 * @param keys the command's keys ({@link Keys}) — what rules match on, with {@code what}, {@code ours} and
 *     {@code theirs} added
 * @param what {@code fate}, {@code status}, {@code dw0}, {@code dw1}, {@code length} or {@code data:FIELD}
 * @param ours our target's value, as printed
 * @param theirs nvmet's value, as printed
 * @param cascade an earlier step of the sequence already differed in status or fate, so the two controllers may be in
 *     different states; reported, not failed on
 */
public record Difference(
        int sequence, int step, Map<String, String> keys, String what, String ours, String theirs, boolean cascade) {

    public Difference {
        Map<String, String> all = new LinkedHashMap<>(keys);
        all.put("what", what);
        all.put("ours", ours);
        all.put("theirs", theirs);
        keys = Map.copyOf(all);
    }

    /** The category for the summary: the area and what differed, e.g. {@code admin opc=06 cns=01 data:OACS}. */
    public String category() {
        StringBuilder sb = new StringBuilder(keys.get("queue")).append(" opc=").append(keys.get("opc"));
        for (String k : new String[] {"fctype", "prop", "fid", "lid", "cns"}) {
            if (keys.containsKey(k)) {
                sb.append(' ').append(k).append('=').append(keys.get(k));
            }
        }
        return sb.append(' ').append(what).toString();
    }

    /** An allow-list line that matches this difference (and its kind), to paste and give a reason. */
    public String toRule() {
        StringBuilder sb = new StringBuilder(category().replaceFirst("^(admin|io) ", "queue=$1 "));
        int at = sb.lastIndexOf(" " + what);
        sb.replace(at, sb.length(), " what=" + what);
        boolean values = what.equals("status")
                || what.equals("fate")
                || what.equals("length")
                || what.equals("dw0")
                || what.equals("dw1");
        if (values) {
            sb.append(" ours=").append(ours).append(" theirs=").append(theirs);
        }
        return sb.append(" | to fix: ? (e.g. ")
                .append(keys.get("label"))
                .append(')')
                .toString();
    }

    @Override
    public String toString() {
        return String.format(
                "seq %d step %d %s: %s ours=%s theirs=%s%s [%s]",
                sequence, step, category(), what, ours, theirs, cascade ? " (cascade)" : "", keys.get("label"));
    }
}
