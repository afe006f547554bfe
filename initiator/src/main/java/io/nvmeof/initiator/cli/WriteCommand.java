package io.nvmeof.initiator.cli;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code nvmeof write URI -s LBA -z BYTES [-d FILE]}: like {@code nvme write}; data from stdin without {@code -d}. */
@Command(
        name = "write",
        mixinStandardHelpOptions = true,
        description = "Write blocks from a file or from stdin; a partial last block is padded with zeroes.")
final class WriteCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    TransferOptions transfer;

    @Override
    public Integer call() throws Exception {
        if (transfer.data != null && !Files.isReadable(transfer.data)) {
            throw new IllegalArgumentException("cannot read --data " + transfer.data);
        }
        try (Controller c = common.connect()) {
            Namespace ns = transfer.namespace(c);
            long blocks = transfer.blocks(ns);
            int chunk = TransferOptions.chunkBlocks(ns);
            ByteBuffer buf = ByteBuffer.allocateDirect(chunk * ns.blockSize());
            byte[] bytes = new byte[buf.capacity()];
            long left = transfer.dataSize;
            try (InputStream in = transfer.data != null ? Files.newInputStream(transfer.data) : NvmeofCli.STDIN.get()) {
                for (long lba = transfer.startBlock; left > 0; ) {
                    int n = (int) Math.min(chunk, blocks - (lba - transfer.startBlock));
                    int want = (int) Math.min(left, (long) n * ns.blockSize());
                    int got = in.readNBytes(bytes, 0, want);
                    if (got < want) {
                        throw new IllegalArgumentException("--data-size is " + transfer.dataSize
                                + " bytes but the input " + "has only " + (transfer.dataSize - left + got));
                    }
                    Arrays.fill(bytes, want, n * ns.blockSize(), (byte) 0);
                    buf.put(0, bytes, 0, n * ns.blockSize());
                    ns.write(lba, n, buf);
                    left -= want;
                    lba += n;
                }
            }
            if (common.json()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("command", "write");
                m.put("nsid", ns.nsid());
                m.put("start_block", transfer.startBlock);
                m.put("blocks", blocks);
                m.put("bytes", transfer.dataSize);
                m.put("status", "success");
                CommonOptions.printJson(spec.commandLine().getOut(), m);
            } else {
                spec.commandLine().getOut().println("write: Success");
                spec.commandLine().getOut().flush();
            }
            return 0;
        }
    }
}
