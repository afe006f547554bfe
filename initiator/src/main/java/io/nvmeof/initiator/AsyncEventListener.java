package io.nvmeof.initiator;

/**
 * Told of every Asynchronous Event Request completion of a {@link Controller} (nvmeof-protocol.md §3.6), after the
 * controller's own handling (a namespace rescan for "namespace attribute changed"). Runs on the controller's event
 * thread, never on a queue thread; it may send admin commands (e.g. read the log page the event names) but should
 * not block for long, since later events wait for it.
 */
@FunctionalInterface
public interface AsyncEventListener {
    /**
     * @param type    Asynchronous Event Type (DW0 bits 2:0), e.g. 2 = notice
     * @param info    Asynchronous Event Information (bits 15:8), e.g. 03h = ANA change for a notice
     * @param logPage the log page to read to clear it (bits 23:16), e.g. 0Ch
     */
    void asyncEvent(int type, int info, int logPage);
}
