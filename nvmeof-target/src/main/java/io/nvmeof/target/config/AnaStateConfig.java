package io.nvmeof.target.config;

import io.nvmeof.core.command.AnaState;

/**
 * The ANA state of one ANA group on one listener of a subsystem (NVMe Base 2.0 §8.1, Asymmetric Namespace Access
 * Reporting). A group without one is optimized on that listener.
 *
 * @param listener the listener's PORTID: listeners are numbered 1, 2, … in configuration order, as in the discovery log
 * @param group    the ANA group ID, 1..{@value NamespaceConfig#MAX_ANA_GROUP}
 * @param state    the state hosts connected through that listener see
 */
public record AnaStateConfig(int listener, int group, AnaState state) {
    public AnaStateConfig {
        if (listener < 1 || listener > 0xFFFF) {
            throw new IllegalArgumentException("an ANA state's listener is a PORTID, 1..65535: " + listener);
        }
        if (group < 1 || group > NamespaceConfig.MAX_ANA_GROUP) {
            throw new IllegalArgumentException("an ANA group ID is 1.." + NamespaceConfig.MAX_ANA_GROUP + ": " + group);
        }
        if (state == null) {
            throw new IllegalArgumentException("an ANA state needs a state (optimized, non-optimized, inaccessible, "
                    + "persistent-loss, change)");
        }
    }
}
