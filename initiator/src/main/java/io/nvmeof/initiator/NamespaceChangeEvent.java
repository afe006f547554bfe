package io.nvmeof.initiator;

import java.util.List;

/**
 * The controller reported a "namespace attribute changed" asynchronous event (nvmeof-protocol.md §3.6) and the initiator re-read the
 * Changed Namespace List (log 0x04, nvmeof-protocol.md §3.3) and those namespaces; or the controller reconnected and
 * some namespace is gone, new, or another namespace now (NGUID/EUI64/UUID or block size differ: the old
 * {@link Namespace} object is deactivated, a new one is in {@code added}).
 *
 * @param controller the controller
 * @param changed    the NSIDs the controller listed (all active ones if it listed more than 1024)
 * @param added      namespaces that are new
 * @param removed    NSIDs that are gone
 */
public record NamespaceChangeEvent(
        Controller controller, List<Integer> changed, List<Namespace> added, List<Integer> removed) {
    public NamespaceChangeEvent {
        changed = List.copyOf(changed);
        added = List.copyOf(added);
        removed = List.copyOf(removed);
    }
}
