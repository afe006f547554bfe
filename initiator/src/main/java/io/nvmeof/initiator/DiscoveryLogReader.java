package io.nvmeof.initiator;

import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the discovery log (LID 0x70, nvmeof-protocol.md §3.3, §7.2) the way libnvme does: the 20-byte header (RAE=1),
 * the entries from LPO 1024 in chunks of at most 4096 bytes (RAE=1 on every chunk but the last), then the header
 * again. If GENCTR changed meanwhile it starts over, up to 10 times; if NUMREC changed with the same GENCTR the log is
 * inconsistent and the read fails.
 */
final class DiscoveryLogReader {
    private static final System.Logger LOG = System.getLogger("io.nvmeof.initiator");
    /** The discovery log page identifier. */
    static final int LID_DISCOVERY = 0x70;
    /** Bytes of the header the reader uses: GENCTR (8), NUMREC (8), RECFMT (2), 2 reserved. */
    static final int HEADER_LENGTH = 20;
    /** Bytes per entry, and the LPO of the first one. */
    static final int ENTRY_LENGTH = 1024;
    /** Largest Get Log Page of entries, as libnvme reads them. */
    static final int CHUNK_LENGTH = 4096;

    static final int MAX_ATTEMPTS = 10;

    private final AdminCommands commands;

    DiscoveryLogReader(AdminCommands commands) {
        this.commands = commands;
    }

    DiscoveryLog read() throws NvmeException {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
            ByteBuffer header = commands.getLogPage(LID_DISCOVERY, 0, 0, HEADER_LENGTH, true);
            long genctr = header.getLong(0);
            long numrec = header.getLong(8);
            if (numrec < 0 || numrec > 1_000_000) {
                throw new NvmeException("discovery log header claims " + numrec + " records");
            }
            long total = numrec * ENTRY_LENGTH;
            ByteBuffer entries = ByteBuffer.allocate((int) total).order(ByteOrder.LITTLE_ENDIAN);
            for (long off = 0; off < total; off += CHUNK_LENGTH) {
                int len = (int) Math.min(CHUNK_LENGTH, total - off);
                ByteBuffer chunk = commands.getLogPage(LID_DISCOVERY, 0, ENTRY_LENGTH + off, len, off + len < total);
                entries.put((int) off, chunk, 0, len);
            }
            ByteBuffer again = commands.getLogPage(LID_DISCOVERY, 0, 0, HEADER_LENGTH, false);
            if (again.getLong(0) != genctr) {
                LOG.log(
                        Level.DEBUG,
                        "discovery log changed while reading (GENCTR " + genctr + " → " + again.getLong(0)
                                + "); reading again");
                continue;
            }
            if (again.getLong(8) != numrec) {
                throw new NvmeException("discovery log NUMREC changed from " + numrec + " to " + again.getLong(8)
                        + " with the same GENCTR " + genctr);
            }
            List<DiscoveryEntry> list = new ArrayList<>();
            for (int i = 0; i < numrec; i++) {
                list.add(parseEntry(entries, i * ENTRY_LENGTH));
            }
            return new DiscoveryLog(genctr, list);
        }
        throw new NvmeException("the discovery log kept changing while it was read (" + MAX_ATTEMPTS + " attempts)");
    }

    /** One 1024-byte Discovery Log Page Entry (nvmeof-protocol.md §3.3). */
    private static DiscoveryEntry parseEntry(ByteBuffer b, int at) {
        return new DiscoveryEntry(
                b.get(at) & 0xFF,
                b.get(at + 1) & 0xFF,
                b.get(at + 2) & 0xFF,
                b.get(at + 3) & 0xFF,
                b.getShort(at + 4) & 0xFFFF,
                b.getShort(at + 6) & 0xFFFF,
                b.getShort(at + 8) & 0xFFFF,
                b.getShort(at + 10) & 0xFFFF,
                text(b, at + 32, 32),
                text(b, at + 256, 256),
                text(b, at + 512, 256),
                b.getInt(at + 768),
                b.getShort(at + 776) & 0xFFFF);
    }

    /** A discovery text field: NUL-terminated or padded; trailing spaces stripped like libnvme (nvmeof-protocol.md §3.3). */
    private static String text(ByteBuffer b, int at, int width) {
        int len = 0;
        while (len < width && b.get(at + len) != 0) {
            len++;
        }
        byte[] bytes = new byte[len];
        b.get(at, bytes);
        return new String(bytes, StandardCharsets.US_ASCII).stripTrailing();
    }
}
