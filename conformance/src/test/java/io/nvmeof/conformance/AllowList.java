package io.nvmeof.conformance;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The differences we know of and accept, each with its reason (conformance/allow-list.txt). One rule per line:
 *
 * <pre>
 * key=value key=value ... | reason
 * </pre>
 *
 * Keys are those of {@link Keys} ({@code queue opc fctype prop fid sel sv lid cns nsid label}) and of a difference
 * ({@code what ours theirs}). A value is a glob ({@code *} any run, {@code ?} one character, {@code [128]} one of), case-insensitive; quote
 * it ({@code label="read slba=cap*"}) when it has spaces. A rule matches a difference when every key it names is
 * present and matches. {@code #} starts a comment line. Rules name fields, never sequence numbers, so they stay valid
 * as the generator grows.
 */
final class AllowList {
    /** One line of the file. */
    record Rule(int line, Map<String, Pattern> matchers, String text, String reason) {
        private static final Pattern TOKEN = Pattern.compile("\\s*([a-z0-9]+)=(\"[^\"]*\"|\\S+)");

        static Rule parse(String text) {
            return parse(0, text);
        }

        static Rule parse(int line, String text) {
            int bar = text.indexOf('|');
            if (bar < 0) {
                throw new IllegalArgumentException("line " + line + ": no '| reason': " + text);
            }
            String reason = text.substring(bar + 1).trim();
            if (reason.isEmpty()) {
                throw new IllegalArgumentException("line " + line + ": empty reason: " + text);
            }
            Map<String, Pattern> m = new LinkedHashMap<>();
            String spec = text.substring(0, bar);
            var matcher = TOKEN.matcher(spec);
            int end = 0;
            while (matcher.lookingAt()) {
                String v = matcher.group(2);
                if (v.startsWith("\"")) {
                    v = v.substring(1, v.length() - 1);
                }
                m.put(matcher.group(1), glob(v));
                end = matcher.end();
                matcher.region(end, spec.length());
            }
            if (!spec.substring(end).isBlank() || m.isEmpty()) {
                throw new IllegalArgumentException("line " + line + ": cannot read matcher '" + spec.trim() + "'");
            }
            return new Rule(line, m, spec.trim(), reason);
        }

        boolean matches(Map<String, String> keys) {
            for (Map.Entry<String, Pattern> e : matchers.entrySet()) {
                String v = keys.get(e.getKey());
                if (v == null || !e.getValue().matcher(v).matches()) {
                    return false;
                }
            }
            return true;
        }

        private static Pattern glob(String g) {
            StringBuilder re = new StringBuilder();
            for (int i = 0; i < g.length(); i++) {
                char c = g.charAt(i);
                int close = c == '[' ? g.indexOf(']', i) : -1;
                if (close > i + 1) {
                    re.append('[')
                            .append(Pattern.quote(g.substring(i + 1, close)))
                            .append(']');
                    i = close;
                } else {
                    re.append(c == '*' ? ".*" : c == '?' ? "." : Pattern.quote(String.valueOf(c)));
                }
            }
            return Pattern.compile(re.toString(), Pattern.CASE_INSENSITIVE | Pattern.DOTALL);
        }
    }

    private final List<Rule> rules;
    private final int[] uses;

    AllowList(List<Rule> rules) {
        this.rules = List.copyOf(rules);
        this.uses = new int[rules.size()];
    }

    static AllowList parse(List<String> lines) {
        List<Rule> rules = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String l = lines.get(i).strip();
            if (!l.isEmpty() && !l.startsWith("#")) {
                rules.add(Rule.parse(i + 1, l));
            }
        }
        return new AllowList(rules);
    }

    static AllowList read(Path file) throws IOException {
        return parse(Files.readAllLines(file));
    }

    /** The first rule that matches, counting its use; null if none. */
    Rule match(Difference d) {
        for (int i = 0; i < rules.size(); i++) {
            if (rules.get(i).matches(d.keys())) {
                uses[i]++;
                return rules.get(i);
            }
        }
        return null;
    }

    List<Rule> rules() {
        return rules;
    }

    int uses(Rule r) {
        return uses[rules.indexOf(r)];
    }
}
