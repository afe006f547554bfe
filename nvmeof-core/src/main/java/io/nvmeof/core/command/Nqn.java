package io.nvmeof.core.command;

/** Well-known NVMe Qualified Names (nvmeof-protocol.md §8). */
public final class Nqn {
    private Nqn() {}

    /** The well-known discovery subsystem NQN. */
    public static final String DISCOVERY = "nqn.2014-08.org.nvmexpress.discovery";
    /** Prefix of UUID-based NQNs. */
    public static final String UUID_PREFIX = "nqn.2014-08.org.nvmexpress:uuid:";
}
