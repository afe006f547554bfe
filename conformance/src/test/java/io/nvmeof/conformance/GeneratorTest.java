package io.nvmeof.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.junit.jupiter.api.Test;

class GeneratorTest {
    private static final Geometry G = Geometry.DEFAULT;

    @Test
    void aSeedGivesTheSameCorpusEveryTime() {
        List<Sequence> a = new Generator(42, G).generate(300);
        List<Sequence> b = new Generator(42, G).generate(300);
        assertEquals(a.size(), b.size());
        for (int i = 0; i < a.size(); i++) {
            assertEquals(a.get(i).steps().size(), b.get(i).steps().size());
            for (int j = 0; j < a.get(i).steps().size(); j++) {
                Cmd x = a.get(i).steps().get(j).cmd();
                Cmd y = b.get(i).steps().get(j).cmd();
                if (x != null) {
                    assertArrayEquals(x.sqe(), y.sqe());
                    assertArrayEquals(x.inCapsule(), y.inCapsule());
                    assertEquals(x.label(), y.label());
                }
            }
        }
    }

    @Test
    void aLongerRunExtendsAShorterOneAndSeedsDiffer() {
        Sequence s = new Generator(7, G).generate(50).get(49);
        assertEquals(labels(s), labels(new Generator(7, G).sequence(49)));
        assertNotEquals(labels(new Generator(7, G).sequence(3)), labels(new Generator(8, G).sequence(3)));
    }

    @Test
    void theCorpusCoversEveryAreaStateAndSglVariant() {
        List<Sequence> corpus = new Generator(20260101L, G).generate(700);
        Set<String> opcodes = new HashSet<>();
        Set<String> states = new HashSet<>();
        Set<String> sgls = new HashSet<>();
        int commands = 0;
        for (Sequence s : corpus) {
            states.add(s.start());
            commands += s.commandCount();
            s.steps().stream().map(Sequence.Step::cmd).filter(Objects::nonNull).forEach(c -> {
                opcodes.add(c.queue() + ":" + Keys.hex2(c.opcode()));
                for (SglVariant v : SglVariant.values()) {
                    if (c.label().contains("sgl=" + v)) {
                        sgls.add(v.name());
                    }
                }
            });
        }
        assertEquals(Generator.State.values().length, states.size(), "states " + states);
        for (String op : List.of(
                "ADMIN:06",
                "ADMIN:02",
                "ADMIN:09",
                "ADMIN:0a",
                "ADMIN:18",
                "ADMIN:08",
                "ADMIN:0c",
                "ADMIN:7f",
                "ADMIN:01",
                "IO:01",
                "IO:02",
                "IO:00",
                "IO:05",
                "IO:08",
                "IO:09",
                "IO:0c",
                "IO:04",
                "IO:19",
                "IO:7f")) {
            assertTrue(opcodes.contains(op), "no " + op + " in " + opcodes);
        }
        assertTrue(sgls.size() >= SglVariant.values().length - 2, "SGL variants " + sgls);
        assertTrue(commands > 3000 && commands < 12000, "commands " + commands);
    }

    @Test
    void mediaChangingCommandsStayInTheEdgeRegionsOrBeyondTheEnd() {
        for (Sequence s : new Generator(99, G).generate(500)) {
            for (Sequence.Step st : s.steps()) {
                Cmd c = st.cmd();
                if (c == null || c.queue() != Cmd.Queue.IO || c.isFabrics() || !NvmGen.modifies(c.opcode())) {
                    continue;
                }
                assertTrue(s.modifiesMedia());
                if (c.opcode() == 0x01 || c.opcode() == 0x08 || c.opcode() == 0x04) {
                    long slba = (c.cdw(10) & 0xFFFFFFFFL) | ((long) c.cdw(11) << 32);
                    boolean inside = slba >= 0 && slba < G.blocks();
                    boolean edge =
                            slba < Geometry.EDGE_REGION_BLOCKS || slba >= G.blocks() - Geometry.EDGE_REGION_BLOCKS;
                    assertTrue(!inside || edge, c.label());
                    long end = slba + (c.cdw(12) & 0xFFFF) + 1; // one past the last block
                    boolean restored = slba >= G.blocks() - Geometry.EDGE_REGION_BLOCKS
                            || end <= Geometry.RESTORED_HEAD_BLOCKS
                            || end > G.blocks(); // beyond the namespace: refused by both
                    assertTrue(!inside || restored, "reaches past what the runner restores: " + c.label());
                }
            }
        }
    }

    private static List<String> labels(Sequence s) {
        return s.steps().stream()
                .map(x -> x.cmd() == null ? "wait" : x.cmd().label())
                .toList();
    }
}
