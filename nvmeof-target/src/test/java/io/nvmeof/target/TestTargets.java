package io.nvmeof.target;

import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import java.util.List;

/** Small target configurations for the core tests. */
final class TestTargets {
    static final String NQN = "nqn.2024-01.io.nvmeof:test";
    static final String PRIVATE_NQN = "nqn.2024-01.io.nvmeof:private";
    static final String OTHER_HOST = "nqn.2014-08.org.nvmexpress:uuid:99999999-9999-9999-9999-999999999999";

    private TestTargets() {}

    /** NQN with namespace 1 (64 MiB, 4 KiB blocks), 2 (1 MiB, 512-byte blocks) and 3 (read-only 1 MiB); PRIVATE_NQN for OTHER_HOST only. */
    static NvmeTarget standard(long budget, int discoveryKatoMillis) {
        SubsystemConfig open = new SubsystemConfig(
                NQN,
                true,
                List.of(),
                List.of(
                        NamespaceConfig.of(1, 64L << 20),
                        new NamespaceConfig(2, 1L << 20, 512, null, false),
                        new NamespaceConfig(3, 1L << 20, 4096, null, true)),
                "SN-TEST",
                "test model");
        SubsystemConfig closed = new SubsystemConfig(
                PRIVATE_NQN, false, List.of(OTHER_HOST), List.of(NamespaceConfig.of(1, 1L << 20)), null, null);
        return NvmeTarget.create(new TargetConfig(List.of(), List.of(open, closed), budget, discoveryKatoMillis));
    }

    static NvmeTarget standard() {
        return standard(1L << 30, 0);
    }
}
