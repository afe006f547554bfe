package io.nvmeof.target.stats;

/** One namespace's successful reads and writes since the target started, over every queue that ever touched it. */
public record NamespaceStats(String subsystem, int nsid, IoCounts io) {}
