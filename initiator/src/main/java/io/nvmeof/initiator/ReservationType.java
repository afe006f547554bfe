package io.nvmeof.initiator;

/** The reservation types (RTYPE, NVMe Base 2.0, Reservations, §8.19) and who may read and write under each. */
public enum ReservationType {
    /** Only the holder writes; everyone reads. */
    WRITE_EXCLUSIVE(1),
    /** Only the holder reads or writes. */
    EXCLUSIVE_ACCESS(2),
    /** Registrants write; everyone reads. */
    WRITE_EXCLUSIVE_REGISTRANTS_ONLY(3),
    /** Only registrants read or write. */
    EXCLUSIVE_ACCESS_REGISTRANTS_ONLY(4),
    /** Registrants write, everyone reads; every registrant is a holder. */
    WRITE_EXCLUSIVE_ALL_REGISTRANTS(5),
    /** Only registrants read or write; every registrant is a holder. */
    EXCLUSIVE_ACCESS_ALL_REGISTRANTS(6);

    private final int code;

    ReservationType(int code) {
        this.code = code;
    }

    /** The RTYPE value. */
    public int code() {
        return code;
    }

    /** The type for RTYPE {@code code}, or null for 0 (no reservation) or a value the spec does not define. */
    public static ReservationType of(int code) {
        for (ReservationType t : values()) {
            if (t.code == code) {
                return t;
            }
        }
        return null;
    }
}
