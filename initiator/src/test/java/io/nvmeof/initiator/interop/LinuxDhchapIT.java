package io.nvmeof.initiator.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.auth.DhGroup;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.initiator.ConnectOptions;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.HostIdentity;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeAuthenticationException;
import io.nvmeof.initiator.NvmeUri;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.HostAuth;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.testkit.peervm.RunningVm;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * DH-HMAC-CHAP with the Linux 6.12 kernel in the peer VM (guest linux-6.12, nvme-cli 2.13), both ways, in one boot
 * ({@code interop/linux-dhchap.sh}; docs/security.md):
 *
 * <ol>
 *   <li>the kernel's host against our target in this JVM (10.0.2.2 in the guest): {@code nvme connect
 *       --dhchap-secret} unidirectional (SHA-256, null group) and {@code --dhchap-ctrl-secret} bidirectional
 *       (SHA-512, ffdhe4096), fio verify over each, a wrong key, no key and a wrong controller key refused;
 *   <li>our initiator against the kernel's nvmet-tcp with {@code dhchap_key}, {@code dhchap_ctrl_key},
 *       {@code dhchap_hash hmac(sha384)} and {@code dhchap_dhgroup ffdhe3072}, I/O verified, wrong keys refused;
 *   <li>nvme-cli's own {@code gen-dhchap-key} for fixed secrets equals ours, and {@code check-dhchap-key} accepts our
 *       key with our CRC.
 * </ol>
 *
 * Run with {@code mvn -B -pl initiator -am verify -Dit.test=LinuxDhchapIT -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false}.
 */
@Tag("vm")
@Timeout(value = 40, unit = TimeUnit.MINUTES)
class LinuxDhchapIT {
    /** The peer VM's fixed host NQN (interop/peer-vm/README.md). */
    static final String VM_HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:5eed0000-0000-4000-8000-000000000001";

    static final String NQN_UNI = "nqn.2026-01.io.nvmeof:auth-uni";
    static final String NQN_BIDI = "nqn.2026-01.io.nvmeof:auth-bidi";
    static final String NVMET_NQN = "nqn.2014-08.org.nvmexpress:peervm-auth";
    static final String JAVA_HOST_NQN = "nqn.2014-08.org.nvmexpress:uuid:0a0b0c0d-1111-4222-8333-444455556666";
    static final List<String> HOST_CHECKS = List.of(
            "uni-connect",
            "uni-fio-verify",
            "uni-kernel-log",
            "uni-reauth",
            "uni-reauth-io",
            "uni-disconnect",
            "bidi-connect",
            "bidi-fio-verify",
            "bidi-kernel-log",
            "bidi-disconnect",
            "wrong-key-refused",
            "no-key-refused",
            "wrong-ctrl-key-refused",
            "none-left");
    /** The NQN and untransformed key of DhchapSecretTest's known answers. */
    static final String FACT_NQN = "nqn.2014-08.org.nvmexpress:uuid:11111111-2222-3333-4444-555555555555";

    static final String FACT_KEY = "DHHC-1:00:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh+KfiaR:";
    private static final SecureRandom RANDOM = new SecureRandom();

    private static byte[] range(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) i;
        }
        return b;
    }

    private static final HexFormat HEX = HexFormat.of();

    private static byte[] random(int n) {
        byte[] b = new byte[n];
        RANDOM.nextBytes(b);
        return b;
    }

    /** A key as {@code nvme gen-dhchap-key --hmac 1 --nqn NQN} makes it. */
    private static DhchapSecret key(String nqn) {
        return DhchapSecret.generate(random(32), DhchapHash.SHA_256, nqn);
    }

    @Test
    void kernelHostAndNvmetWithDhchap() throws Exception {
        DhchapSecret hostKey = key(VM_HOST_NQN);
        DhchapSecret ctrlKey = key(NQN_BIDI);
        DhchapSecret wrong = key(VM_HOST_NQN);
        DhchapSecret newKey = key(VM_HOST_NQN);
        // The fixed inputs of DhchapSecretTest: nvme-cli must make the keys recorded there.
        byte[] s32 = range(32);
        byte[] s48 = range(48);
        byte[] s64 = range(64);
        DhchapSecret nvmetKey = key(JAVA_HOST_NQN);
        DhchapSecret nvmetCtrlKey = DhchapSecret.generate(random(48), DhchapHash.SHA_384, NVMET_NQN);

        SubsystemConfig uni = new SubsystemConfig(
                        NQN_UNI, false, List.of(), List.of(NamespaceConfig.of(1, 64L << 20)), null, null)
                .withHostAuth(List.of(
                        new HostAuth(VM_HOST_NQN, hostKey, null, List.of(DhchapHash.SHA_256), List.of(DhGroup.NULL))));
        SubsystemConfig bidi = new SubsystemConfig(
                        NQN_BIDI, false, List.of(), List.of(NamespaceConfig.of(1, 64L << 20)), null, null)
                .withHostAuth(List.of(new HostAuth(
                        VM_HOST_NQN, hostKey, ctrlKey, List.of(DhchapHash.SHA_512), List.of(DhGroup.FFDHE4096))));
        TargetConfig config = new TargetConfig(
                List.of(ListenerConfig.parse("tcp://127.0.0.1:0", 128, 16384)), List.of(uni, bidi), 1L << 30, 0);

        PeerVm peer = PeerVm.locate().guest(PeerVm.Guest.LINUX_6_12);
        peer.ensureImage(Duration.ofMinutes(15));
        Path work = Files.createTempDirectory("linux-dhchap-it");
        boolean passed = false;
        try (NvmeTarget target = NvmeTarget.start(config)) {
            InetSocketAddress addr = target.boundAddresses().get(0);
            Path script = PeerVm.copyResource(LinuxDhchapIT.class, "/interop/linux-dhchap.sh", work);
            int fwd = PeerVm.freePort();
            List<String> args = List.of(
                    Integer.toString(addr.getPort()),
                    NQN_UNI,
                    NQN_BIDI,
                    hostKey.encode(),
                    ctrlKey.encode(),
                    wrong.encode(),
                    HEX.formatHex(s32),
                    HEX.formatHex(s48),
                    HEX.formatHex(s64),
                    NVMET_NQN,
                    JAVA_HOST_NQN,
                    nvmetKey.encode(),
                    nvmetCtrlKey.encode(),
                    FACT_NQN,
                    FACT_KEY,
                    newKey.encode());
            Path job = work.resolve("job");
            try (RunningVm vm = peer.start(script, args, fwd, 4420, Duration.ofMinutes(30), job)) {
                // Re-authentication: the host key changes on the target, then the kernel is given it (sysfs).
                vm.await("^REAUTH READY", Duration.ofMinutes(15));
                target.setHostAuth(
                        NQN_UNI,
                        VM_HOST_NQN,
                        new HostAuth(VM_HOST_NQN, newKey, null, List.of(DhchapHash.SHA_256), List.of(DhGroup.NULL)));
                Files.writeString(job.resolve("reauth"), "");
                vm.await("^PEERVM READY", Duration.ofMinutes(10));
                String out = vm.output();
                // 1. the kernel host against our target
                List<String> missing = new ArrayList<>();
                for (String c : HOST_CHECKS) {
                    if (!Pattern.compile("(?m)^CHECK OK " + Pattern.quote(c) + ":")
                            .matcher(out)
                            .find()) {
                        missing.add(c);
                    }
                }
                Matcher failed = Pattern.compile("(?m)^CHECK FAIL .*$").matcher(out);
                if (failed.find() || !missing.isEmpty()) {
                    fail("kernel host against our target: " + (failed.find(0) ? failed.group() : "") + " no OK for "
                            + missing + "\n" + PeerVm.tail(out, 80));
                }
                // 3. nvme-cli's facts (the values DhchapSecretTest records)
                assertEquals(
                        DhchapSecret.generate(s32, DhchapHash.SHA_256, FACT_NQN).encode(), fact(out, "gen1"));
                assertEquals(
                        DhchapSecret.generate(s48, DhchapHash.SHA_384, FACT_NQN).encode(), fact(out, "gen2"));
                assertEquals(
                        DhchapSecret.generate(s64, DhchapHash.SHA_512, FACT_NQN).encode(), fact(out, "gen3"));
                assertEquals(DhchapSecret.generate(s32, null, FACT_NQN).encode(), fact(out, "gen0"));
                assertEquals("Key is valid (HMAC 0, length 32, CRC 91267e8a)", fact(out, "check"));
                String check = fact(out, "checkhost");
                assertTrue(
                        check.contains(String.format("%08x", hostKey.crc())) && check.contains("valid"),
                        "nvme check-dhchap-key: " + check);

                // 2. our initiator against nvmet with DH-HMAC-CHAP
                String base = "nvme+tcp://127.0.0.1:" + fwd + "/" + NVMET_NQN + "?queues=2&timeout=60s&kato=30s";
                ConnectOptions good = ConnectOptions.builder()
                        .hostIdentity(HostIdentity.of(JAVA_HOST_NQN))
                        .connectTimeout(Duration.ofSeconds(60))
                        .dhchapSecret(nvmetKey.encode())
                        .dhchapCtrlSecret(nvmetCtrlKey.encode())
                        .build();
                try (Controller c = Nvme.connect(NvmeUri.parse(base), good)) {
                    assertEquals(2, c.ioQueueCount());
                    verifyIo(c);
                    c.reauthenticate();
                    verifyIo(c);
                }
                NvmeAuthenticationException e = assertThrows(
                        NvmeAuthenticationException.class,
                        () -> Nvme.connect(
                                        NvmeUri.parse(base),
                                        ConnectOptions.builder()
                                                .hostIdentity(HostIdentity.of(JAVA_HOST_NQN))
                                                .dhchapSecret(key(JAVA_HOST_NQN).encode())
                                                .build())
                                .close());
                // nvmet tears the controller down when it refuses a host, often before its Failure1 goes out.
                assertTrue(
                        e.explanation() == AuthProtocol.FAILED || e.getMessage().contains("closed the connection"),
                        e.getMessage());
                e = assertThrows(
                        NvmeAuthenticationException.class,
                        () -> Nvme.connect(
                                        NvmeUri.parse(base),
                                        ConnectOptions.builder()
                                                .hostIdentity(HostIdentity.of(JAVA_HOST_NQN))
                                                .dhchapSecret(nvmetKey.encode())
                                                .dhchapCtrlSecret(key(NVMET_NQN).encode())
                                                .build())
                                .close());
                assertTrue(e.getMessage().contains("controller's response does not match"), e.getMessage());
                e = assertThrows(
                        NvmeAuthenticationException.class,
                        () -> Nvme.connect(
                                        NvmeUri.parse(base),
                                        ConnectOptions.builder()
                                                .hostIdentity(HostIdentity.of(JAVA_HOST_NQN))
                                                .build())
                                .close());
                assertTrue(e.getMessage().contains("requires DH-HMAC-CHAP"), e.getMessage());
                vm.stop(Duration.ofMinutes(2));
                System.out.println("===== guest output\n" + vm.output());
                passed = true;
            }
        } finally {
            if (passed) {
                PeerVm.deleteRecursively(work);
            } else {
                System.out.println("kept " + work);
            }
        }
    }

    private static String fact(String out, String name) {
        Matcher m = Pattern.compile("(?m)^FACT " + name + " (.*)$").matcher(out);
        assertTrue(m.find(), "no FACT " + name);
        return m.group(1).trim();
    }

    /** A verified write and read from one thread per I/O queue (queues are picked by thread ID). */
    private static void verifyIo(Controller c) throws Exception {
        Namespace ns = c.namespace();
        for (int q = 0; q < c.ioQueueCount(); q++) {
            long lba = 64L * q;
            Exception[] err = new Exception[1];
            Thread t = new Thread(() -> {
                try {
                    byte[] pattern = random(64 * 1024);
                    ByteBuffer w = c.allocateBuffer(pattern.length);
                    w.put(0, pattern);
                    int blocks = pattern.length / ns.blockSize();
                    ns.write(lba, blocks, w);
                    ByteBuffer r = c.allocateBuffer(pattern.length);
                    ns.read(lba, blocks, r);
                    byte[] back = new byte[pattern.length];
                    r.get(0, back);
                    assertArrayEquals(pattern, back);
                } catch (Exception ex) {
                    err[0] = ex;
                }
            });
            t.start();
            t.join();
            if (err[0] != null) {
                throw err[0];
            }
        }
    }
}
