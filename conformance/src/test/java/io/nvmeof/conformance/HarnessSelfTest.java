package io.nvmeof.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The whole harness without the VM: our target against a second instance of itself. Any difference here is the
 * harness's own (a mask missing, state leaking between sequences, a runner bug), never a target's.
 */
class HarnessSelfTest {
    @Test
    void ourTargetAgainstItselfHasNoDifferences() throws Exception {
        Geometry g = Geometry.DEFAULT;
        try (OurTarget a = new OurTarget(g);
                OurTarget b = new OurTarget(g)) {
            List<Sequence> corpus = new Generator(Long.getLong("conformance.selfSeed", 5), g)
                    .generate(Integer.getInteger("conformance.selfCount", 150));
            Harness h = new Harness(a.address, b.address, g, AllowList.parse(List.of()));
            ByteArrayOutputStream buf = new ByteArrayOutputStream();
            PrintStream out = new PrintStream(buf, true, StandardCharsets.UTF_8);
            Harness.Result r = h.run(corpus, out);
            h.report(r, out);
            String report = buf.toString(StandardCharsets.UTF_8);
            System.out.println(report);
            assertTrue(r.commands() > 500, report);
            assertEquals(List.of(), r.fresh(), report);
            assertEquals(List.of(), r.cascades(), report);
        }
    }
}
