package io.nvmeof.conformance;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Runs a corpus against two targets (ours, theirs), compares, sorts the differences into allowed (with the rule's
 * reason), cascades and new ones, and prints the summary the IT ends with.
 */
final class Harness {
    /** What a run found. */
    record Result(
            int sequences,
            int commands,
            Map<String, Integer> fates,
            long oursMillis,
            long theirsMillis,
            List<Difference> allowed,
            List<Difference> cascades,
            List<Difference> fresh,
            long millis) {}

    private final Runner ours;
    private final Runner theirs;
    private final AllowList allowList;
    private final Map<Difference, AllowList.Rule> reasons = new LinkedHashMap<>();

    Harness(InetSocketAddress ours, InetSocketAddress theirs, Geometry g, AllowList allowList) {
        this.ours = new Runner(ours, g);
        this.theirs = new Runner(theirs, g);
        this.allowList = allowList;
    }

    /** Prints every step's outcome on both targets (for re-running a few sequences with -Dconformance.only). */
    boolean verbose;

    private static String text(Outcome o) {
        return o == null
                ? ""
                : o.completed()
                        ? Comparator.statusText(o.status()) + " dw0=" + Comparator.hex32(o.dw0())
                        : o.fateText();
    }

    Result run(List<Sequence> corpus, PrintStream log) throws IOException {
        long t0 = System.nanoTime();
        List<Difference> allowed = new ArrayList<>();
        List<Difference> cascades = new ArrayList<>();
        List<Difference> fresh = new ArrayList<>();
        int commands = 0;
        Map<String, Integer> fates = new TreeMap<>();
        long oursNanos = 0;
        long theirsNanos = 0;
        for (Sequence seq : corpus) {
            long t = System.nanoTime();
            List<Outcome> a = ours.run(seq);
            if (seq.modifiesMedia()) {
                ours.restore();
            }
            long t2 = System.nanoTime();
            List<Outcome> b = theirs.run(seq);
            if (seq.modifiesMedia()) {
                theirs.restore();
            }
            oursNanos += t2 - t;
            theirsNanos += System.nanoTime() - t2;
            for (int i = 0; i < a.size(); i++) {
                if (a.get(i) != null) {
                    fates.merge("ours " + a.get(i).fate(), 1, Integer::sum);
                    fates.merge("nvmet " + b.get(i).fate(), 1, Integer::sum);
                }
            }
            commands += seq.commandCount();
            if (verbose) {
                log.printf("--- sequence %d (%s)%n", seq.id(), seq.start());
                for (int i = 0; i < seq.steps().size(); i++) {
                    Cmd c = seq.steps().get(i).cmd();
                    log.printf(
                            "  %2d %-70s ours %-22s nvmet %s%n",
                            i, c == null ? "(wait)" : c.toString(), text(a.get(i)), text(b.get(i)));
                }
            }
            for (Difference d : Comparator.compare(seq, a, b)) {
                AllowList.Rule r = allowList.match(d);
                if (r != null) {
                    allowed.add(d);
                    reasons.put(d, r);
                } else if (d.cascade()) {
                    cascades.add(d);
                } else {
                    fresh.add(d);
                }
            }
            if ((seq.id() + 1) % 100 == 0) {
                log.printf(
                        "conformance: %d sequences, %d commands, %d new differences so far%n",
                        seq.id() + 1, commands, fresh.size());
            }
        }
        return new Result(
                corpus.size(),
                commands,
                fates,
                oursNanos / 1_000_000,
                theirsNanos / 1_000_000,
                allowed,
                cascades,
                fresh,
                (System.nanoTime() - t0) / 1_000_000);
    }

    /** The summary: counts, allowed differences by rule with reason, new ones by category (and as rules). */
    void report(Result r, PrintStream out) {
        out.printf("%n===== differential conformance: ours vs nvmet =====%n");
        out.printf(
                "sequences %d, commands %d, %d s (ours %d s, nvmet %d s)%n",
                r.sequences(), r.commands(), r.millis() / 1000, r.oursMillis() / 1000, r.theirsMillis() / 1000);
        out.printf("fates: %s%n", r.fates());
        out.printf(
                "differences: %d allow-listed, %d cascades (after an earlier difference), %d NEW%n",
                r.allowed().size(), r.cascades().size(), r.fresh().size());
        out.printf("%n--- allow-listed, by rule (uses: rule | reason)%n");
        for (AllowList.Rule rule : allowList.rules()) {
            int n = allowList.uses(rule);
            out.printf("%5d  %s | %s%n", n, rule.text(), rule.reason());
            if (n > 0) {
                out.printf("       e.g. %s%n", examples(rule));
            }
        }
        out.printf("%n--- cascades by category%n");
        byCategory(r.cascades()).forEach((k, v) -> out.printf("%5d  %s%n", v.size(), k));
        if (!r.fresh().isEmpty()) {
            out.printf("%n--- NEW differences by category (first example)%n");
            byCategory(r.fresh()).forEach((k, v) -> out.printf("%5d  %s%n       e.g. %s%n", v.size(), k, v.get(0)));
            out.printf("%n--- NEW differences as allow-list rules (give each a reason)%n");
            Map<String, String> rules = new LinkedHashMap<>(); // one line per matcher, with the first example
            for (Difference d : r.fresh()) {
                String rule = d.toRule();
                rules.putIfAbsent(rule.substring(0, rule.indexOf(" | ")), rule);
            }
            rules.values().forEach(out::println);
        }
    }

    /** The first sequences (sequence:step) whose differences the rule allowed, to re-run with -Dconformance.only. */
    private String examples(AllowList.Rule rule) {
        StringBuilder sb = new StringBuilder();
        int shown = 0;
        for (Map.Entry<Difference, AllowList.Rule> e : reasons.entrySet()) {
            if (e.getValue() == rule && shown++ < 12) {
                sb.append(shown > 1 ? ", " : "")
                        .append(e.getKey().sequence())
                        .append(':')
                        .append(e.getKey().step());
            }
        }
        return sb.toString();
    }

    private static Map<String, List<Difference>> byCategory(List<Difference> ds) {
        Map<String, List<Difference>> m = new TreeMap<>();
        for (Difference d : ds) {
            m.computeIfAbsent(
                            d.category()
                                    + ("status".equals(d.what()) || "fate".equals(d.what())
                                            ? " ours=" + d.ours() + " theirs=" + d.theirs()
                                            : ""),
                            k -> new ArrayList<>())
                    .add(d);
        }
        return m;
    }
}
