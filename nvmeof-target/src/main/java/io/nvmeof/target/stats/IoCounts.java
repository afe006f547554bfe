package io.nvmeof.target.stats;

/** Successful Read and Write commands and their bytes. */
public record IoCounts(long reads, long writes, long bytesRead, long bytesWritten) {
    public static final IoCounts ZERO = new IoCounts(0, 0, 0, 0);

    public IoCounts plus(IoCounts o) {
        return new IoCounts(reads + o.reads, writes + o.writes, bytesRead + o.bytesRead, bytesWritten + o.bytesWritten);
    }
}
