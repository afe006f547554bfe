package io.nvmeof.initiator;

/**
 * Told when namespaces of a controller appear, change or go away (nvmeof-protocol.md §3.6). Called on the controller's timer thread,
 * one event at a time; keep it short and do not call blocking admin operations of the same controller that could wait
 * for that thread (namespace I/O is fine).
 */
@FunctionalInterface
public interface NamespaceChangeListener {
    void namespacesChanged(NamespaceChangeEvent event);
}
