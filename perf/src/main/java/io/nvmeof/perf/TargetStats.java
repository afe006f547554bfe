package io.nvmeof.perf;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.initiator.NvmeStatusException;
import java.nio.ByteBuffer;

/**
 * Reads our target's CPU use over the fabric: the vendor-specific log page LID 0xC0 of nvmeof-java (layout in
 * target/.../LogPages.perfStats and perf/README.md). Any other target, or one that refuses the page, gives
 * {@link Reading#unknown}.
 */
public final class TargetStats {
    public static final int LID = 0xC0;
    public static final int MAGIC = 'N' | ('V' << 8) | ('O' << 16) | ('J' << 24);
    public static final String OUR_MODEL = "nvmeof-java";

    private TargetStats() {}

    /** One reading: a CPU sample plus the commands-completed counter, or the reason there is none. */
    public record Reading(CpuSample cpu, long commands, int cpus, String unknown) {
        public boolean known() {
            return unknown == null;
        }
    }

    public static Reading read(Controller c) {
        String model = c.modelNumber() == null ? "" : c.modelNumber().trim();
        if (!model.startsWith(OUR_MODEL)) {
            return new Reading(
                    null,
                    0,
                    0,
                    "target model '" + model + "' is not " + OUR_MODEL + ": its CPU cannot be read over the fabric");
        }
        ByteBuffer b;
        try {
            b = c.getLogPage(LID, 0, 0, 512);
        } catch (NvmeStatusException e) {
            return new Reading(
                    null,
                    0,
                    0,
                    "the target has no nvmeof-java performance log page (LID 0xC0): "
                            + io.nvmeof.core.command.Status.toString(e.status()));
        } catch (NvmeException e) {
            return new Reading(null, 0, 0, "reading log page 0xC0 failed: " + e.getMessage());
        }
        if (b.getInt(0) != MAGIC || b.getShort(4) < 1) {
            return new Reading(
                    null,
                    0,
                    0,
                    "log page 0xC0 is not nvmeof-java's (magic 0x" + Integer.toHexString(b.getInt(0)) + ")");
        }
        CpuSample s = new CpuSample(
                b.getLong(8),
                b.getLong(16),
                b.getLong(24) > 0 ? b.getLong(24) : b.getLong(8) + b.getLong(16),
                b.getLong(32));
        return new Reading(s, b.getLong(40), b.getInt(48), null);
    }
}
