package io.nvmeof.initiator.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeException;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.config.TlsKeyConfig;
import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.testkit.peervm.RunningVm;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * NVMe/TCP with TLS 1.3 between the real Linux 6.12 kernel (peer VM guest linux-6.12: nvme-cli 2.13, libnvme 1.13,
 * tlshd from ktls-utils) and our code, in one VM boot ({@code interop/linux-tls.sh}):
 *
 * <ol>
 *   <li>the kernel's host against our target (TLS required, this JVM, reached as 10.0.2.2): nvme-cli puts the TLS PSK
 *       for a configured SHA-256 PSK into the {@code .nvme} keyring (identity v0, libnvme 1.13's "compat"
 *       derivation), {@code nvme connect --tls}, fio verify and a dd round trip; the same identity with another key is
 *       refused;
 *   <li>our initiator against the kernel's nvmet-tcp with a TLS 1.3 port (addr_tsas tls1.3, addr_treq required),
 *       SHA-256 PSKs under identities v0 and v1: verified I/O over each, with digests on one; a wrong key refused.
 * </ol>
 *
 * Run with {@code mvn -B -pl initiator verify -Dit.test=LinuxTlsIT -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false
 * -Dfailsafe.failIfNoSpecifiedTests=false}. The VM is emulated: nothing is timed.
 */
@Tag("vm")
@Timeout(value = 40, unit = TimeUnit.MINUTES)
class LinuxTlsIT {
    static final String HOST_A = "nqn.2014-08.org.nvmexpress:uuid:6b1d3c8e-1f0a-4c55-9d4e-0a1b2c3d4e5a";
    static final String SUB_A = "nqn.2024-01.io.nvmeof:tls-kernel-host";
    static final String HOST_B = "nqn.2014-08.org.nvmexpress:uuid:6b1d3c8e-1f0a-4c55-9d4e-0a1b2c3d4e5b";
    static final String SUB_B = "nqn.2014-08.org.nvmexpress:peervm-tls";
    static final String HOST_A384 = "nqn.2014-08.org.nvmexpress:uuid:6b1d3c8e-1f0a-4c55-9d4e-0a1b2c3d4e6a";
    static final String HOST_B384 = "nqn.2014-08.org.nvmexpress:uuid:6b1d3c8e-1f0a-4c55-9d4e-0a1b2c3d4e6b";
    static final List<String> GUEST_CHECKS = List.of(
            "tlshd-running",
            "a-gen-tls-key",
            "a-connect",
            "a-state",
            "a-fio-verify",
            "a-dd",
            "a-disconnect",
            "a-gen-tls-key-discovery",
            "a-discover-tls",
            "a-gen-wrong-key",
            "a-wrong-key-refused",
            "a-no-controller-left",
            "a384-gen-tls-key",
            "a384-connect",
            "a384-dd",
            "a384-disconnect",
            "b384-gen-tls-key",
            "b-gen-tls-key-v0",
            "b-gen-tls-key-v1");

    @Test
    void kernelHostAgainstOurTargetAndOurInitiatorAgainstNvmetTcpOverTls() throws Exception {
        SecureRandom random = new SecureRandom();
        byte[] secretA = new byte[32];
        byte[] wrongA = new byte[32];
        byte[] secretB = new byte[32];
        byte[] secret384 = new byte[48];
        random.nextBytes(secret384);
        random.nextBytes(secretA);
        random.nextBytes(wrongA);
        random.nextBytes(secretB);
        HexFormat hex = HexFormat.of();
        int portA = PeerVm.freePort();
        TargetConfig config = new TargetConfig(
                List.of(ListenerConfig.parse("tcp://127.0.0.1:" + portA + "?tls=required", 128, 16384)),
                List.of(new SubsystemConfig(
                        SUB_A, true, List.of(), List.of(NamespaceConfig.of(1, 256L << 20)), null, null)),
                512L << 20,
                0,
                List.of(
                        new TlsKeyConfig(HOST_A, SUB_A, ConfiguredPsk.of(1, secretA), PskDerivation.LIBNVME_COMPAT),
                        new TlsKeyConfig(
                                HOST_A,
                                "nqn.2014-08.org.nvmexpress.discovery",
                                ConfiguredPsk.of(1, secretA),
                                PskDerivation.LIBNVME_COMPAT),
                        new TlsKeyConfig(
                                HOST_A384, SUB_A, ConfiguredPsk.of(2, secret384), PskDerivation.LIBNVME_COMPAT)));
        PeerVm peer = PeerVm.locate().guest(PeerVm.Guest.LINUX_6_12);
        peer.ensureImage(Duration.ofMinutes(15));
        Path work = Files.createTempDirectory("linux-tls-it");
        Path script = PeerVm.copyResource(LinuxTlsIT.class, "/interop/linux-tls.sh", work);
        int fwd = PeerVm.freePort();
        boolean passed = false;
        try (NvmeTarget target = NvmeTarget.start(config);
                RunningVm vm = peer.startServing(
                        script,
                        List.of(
                                Integer.toString(portA),
                                hex.formatHex(secretA),
                                hex.formatHex(wrongA),
                                HOST_A,
                                SUB_A,
                                hex.formatHex(secretB),
                                HOST_B,
                                SUB_B,
                                "1200",
                                hex.formatHex(secret384),
                                HOST_A384,
                                HOST_B384),
                        fwd,
                        4420,
                        Duration.ofMinutes(30),
                        work.resolve("job"),
                        "^PEERVM READY",
                        Duration.ofMinutes(15))) {
            try {
                String out = vm.output();
                Matcher failed = Pattern.compile("(?m)^CHECK FAIL .*$").matcher(out);
                if (failed.find()) {
                    fail("guest check failed: " + failed.group());
                }
                for (String c : GUEST_CHECKS) {
                    assertTrue(
                            Pattern.compile("(?m)^CHECK OK " + Pattern.quote(c) + ":")
                                    .matcher(out)
                                    .find(),
                            "no OK for " + c);
                }
                // B: our initiator against nvmet-tcp's TLS port, the keys nvme-cli 2.13 derived (compat)
                String base = "nvme+tcp://127.0.0.1:" + fwd + "/" + SUB_B + "?hostnqn=" + HOST_B
                        + "&timeout=60s&queues=2&psk_derivation=compat&psk="
                        + ConfiguredPsk.of(1, secretB).interchange();
                long t0 = System.nanoTime();
                try (Controller c = Nvme.connect(base + "&psk_identity=0")) {
                    verifyIo(c.namespace(), 1);
                }
                try (Controller c = Nvme.connect(base + "&psk_identity=1&digest=header,data")) {
                    verifyIo(c.namespace(), 2);
                }
                // a SHA-384 key, bound to SHA-256 as tlshd expects
                try (Controller c = Nvme.connect("nvme+tcp://127.0.0.1:" + fwd + "/" + SUB_B + "?hostnqn=" + HOST_B384
                        + "&timeout=60s&queues=2&psk_derivation=compat&tls_hash=sha256&psk="
                        + ConfiguredPsk.of(2, secret384).interchange())) {
                    verifyIo(c.namespace(), 3);
                }
                System.out.printf("our initiator over TLS against nvmet-tcp: %.1f s%n", (System.nanoTime() - t0) / 1e9);
                byte[] wrong = new byte[32];
                random.nextBytes(wrong);
                String wrongUri = "nvme+tcp://127.0.0.1:" + fwd + "/" + SUB_B + "?hostnqn=" + HOST_B
                        + "&timeout=60s&queues=1&psk_derivation=compat&psk="
                        + ConfiguredPsk.of(1, wrong).interchange();
                NvmeException e = assertThrows(
                        NvmeException.class, () -> Nvme.connect(wrongUri).close());
                System.out.println("wrong key refused by nvmet-tcp: " + e.getMessage());
                passed = true;
            } finally {
                vm.stop(Duration.ofMinutes(2));
                System.out.println("===== guest output\n" + vm.output());
            }
        } finally {
            if (passed) {
                PeerVm.deleteRecursively(work);
            } else {
                System.out.println("kept " + work);
            }
        }
    }

    /** Writes 8 MiB in pieces of 4 KiB to 1 MiB and reads it back, byte for byte. */
    private static void verifyIo(Namespace ns, int seed) throws NvmeException {
        Random r = new Random(seed);
        long lba = (seed - 1) * (16L << 20) / ns.blockSize();
        for (int bytes : new int[] {4096, 16384, 65536, 131072, 1 << 20, 4096 * 3}) {
            int blocks = bytes / ns.blockSize();
            byte[] data = new byte[bytes];
            r.nextBytes(data);
            ns.write(lba, blocks, ByteBuffer.allocateDirect(bytes).put(data).flip());
            ByteBuffer back = ByteBuffer.allocateDirect(bytes);
            ns.read(lba, blocks, back);
            byte[] got = new byte[bytes];
            back.get(0, got);
            assertArrayEquals(data, got, bytes + " bytes through nvmet-tcp over TLS");
            lba += blocks;
        }
    }
}
