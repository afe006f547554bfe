package io.nvmeof.initiator;

import java.util.List;
import java.util.UUID;

/**
 * A Reservation Report, decoded (the extended data structure, NVMe Base 2.0, Reservations, §8.19).
 *
 * @param generation       GEN: counts registration changes
 * @param type             the reservation held, or null if none
 * @param registrantCount  REGCTL: every registrant, even those the report had no room for
 * @param persistThroughPowerLoss PTPLS
 * @param registrants      the registrants the report holds
 */
public record ReservationStatus(
        int generation,
        ReservationType type,
        int registrantCount,
        boolean persistThroughPowerLoss,
        List<Registrant> registrants) {

    /**
     * One registered host.
     *
     * @param cntlid             its controller, or FFFFh (dynamic controllers; registrations belong to hosts)
     * @param holdsReservation   RCSTS bit 0
     * @param key                its reservation key
     * @param hostId             its 128-bit Host Identifier
     */
    public record Registrant(int cntlid, boolean holdsReservation, long key, UUID hostId) {}

    /** The registrant with this Host Identifier, or null. */
    public Registrant registrant(UUID hostId) {
        for (Registrant r : registrants) {
            if (r.hostId().equals(hostId)) {
                return r;
            }
        }
        return null;
    }
}
