package io.nvmeof.initiator.multipath;

import io.nvmeof.core.command.AnaState;

/**
 * One path of a {@link MultipathNamespace} at one moment (a snapshot, for monitoring and tests).
 *
 * @param address     the path's URI address ({@code transport://host:port})
 * @param connected   whether its controller is LIVE (not reconnecting, not lost) and its namespace active
 * @param anaState    the ANA state of the namespace's group on this path (optimized when the controller does not
 *                    report ANA), or null while unknown (not connected, or the ANA log not read yet)
 * @param usable      whether a command may be sent on it now
 * @param cntlid      its controller's ID, or -1 while not connected
 * @param commands    commands sent on this path so far
 * @param reconnects  times the path was connected again: by its controller's own reconnect, or by a new controller
 *                    after the previous one was lost for good
 */
public record PathStatus(
        String address,
        boolean connected,
        AnaState anaState,
        boolean usable,
        int cntlid,
        long commands,
        long reconnects) {}
