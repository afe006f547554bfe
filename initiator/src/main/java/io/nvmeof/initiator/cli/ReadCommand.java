package io.nvmeof.initiator.cli;

import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code nvmeof read URI -s LBA -z BYTES [-d FILE]}: like {@code nvme read}; data to stdout without {@code -d}. */
@Command(
        name = "read",
        mixinStandardHelpOptions = true,
        description = "Read blocks into a file or to stdout (status goes to stderr, so stdout is only data).")
final class ReadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    CommonOptions common;

    @Mixin
    TransferOptions transfer;

    @Override
    public Integer call() throws Exception {
        if (transfer.data == null && common.json()) {
            throw new IllegalArgumentException("--output-format json needs --data FILE (stdout carries the data)");
        }
        try (Controller c = common.connect()) {
            Namespace ns = transfer.namespace(c);
            long blocks = transfer.blocks(ns);
            int chunk = TransferOptions.chunkBlocks(ns);
            ByteBuffer buf = ByteBuffer.allocateDirect(chunk * ns.blockSize());
            byte[] bytes = new byte[buf.capacity()];
            long left = transfer.dataSize;
            try (OutputStream out =
                    transfer.data != null ? Files.newOutputStream(transfer.data) : nonClosing(NvmeofCli.STDOUT.get())) {
                for (long lba = transfer.startBlock; left > 0; ) {
                    int n = (int) Math.min(chunk, blocks - (lba - transfer.startBlock));
                    ns.read(lba, n, buf);
                    int len = (int) Math.min(left, (long) n * ns.blockSize());
                    buf.get(0, bytes, 0, len);
                    out.write(bytes, 0, len);
                    left -= len;
                    lba += n;
                }
                out.flush();
            }
            if (common.json()) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("command", "read");
                m.put("nsid", ns.nsid());
                m.put("start_block", transfer.startBlock);
                m.put("blocks", blocks);
                m.put("bytes", transfer.dataSize);
                m.put("status", "success");
                CommonOptions.printJson(spec.commandLine().getOut(), m);
            } else {
                spec.commandLine().getErr().println("read: Success");
                spec.commandLine().getErr().flush();
            }
            return 0;
        }
    }

    static OutputStream nonClosing(OutputStream out) {
        return new java.io.FilterOutputStream(out) {
            @Override
            public void write(byte[] b, int off, int len) throws java.io.IOException {
                out.write(b, off, len);
            }

            @Override
            public void close() throws java.io.IOException {
                flush();
            }
        };
    }
}
