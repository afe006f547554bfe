package io.nvmeof.testkit.peervm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The second guest is real, not just buildable: boots {@link PeerVm.Guest#LINUX_6_12} (building its image first if the
 * cache has none for the current recipe) and runs {@code interop/linux-6.12-guest.sh} in it, which checks what the
 * NVMe security work needs: a 6.12 kernel; nvmet, nvmet-tcp, nvme-tcp and nvme-auth load; an nvmet host entry has
 * {@code dhchap_key}; tlshd, nvme-cli's {@code --tls}, an nvmet tcp port that takes {@code addr_tsas} tls1.3 and the
 * kernel's {@code .nvme} keyring; and DH-HMAC-CHAP between the kernel's nvmet-tcp and nvme-tcp inside the guest (a key
 * from {@code nvme gen-dhchap-key} connects and does I/O, a wrong key and no key are refused, bidirectional works).
 *
 * <p>One VM boot, 23–34 s with the image cached (a build from nothing adds about 3 minutes). Run alone with
 * {@code mvn -B -pl peervm-testkit verify -Dit.test=Linux612GuestIT -Dtest=NoSuchTest
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
@Tag("vm")
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class Linux612GuestIT {
    static final List<String> CHECKS = List.of(
            "kernel-6.12",
            "modules",
            "nvmet-dhchap-key-attr",
            "tlshd",
            "nvme-cli-tls",
            "nvmet-tcp-tls-port",
            "nvme-tls-keyring",
            "gen-dhchap-key",
            "auth-connect",
            "auth-state",
            "auth-kernel-log",
            "auth-io",
            "auth-disconnect",
            "auth-wrong-key-refused",
            "no-controller-left",
            "auth-no-key-refused",
            "auth-bidirectional",
            "auth-bidirectional-kernel-log",
            "auth-bidirectional-disconnect");

    @Test
    void linux612GuestHasNvmeAuthAndWhatTlsNeeds() throws Exception {
        PeerVm vm = PeerVm.locate().guest(PeerVm.Guest.LINUX_6_12);
        long t0 = System.nanoTime();
        vm.ensureImage(Duration.ofMinutes(15));
        System.out.printf("linux-6.12 image ready after %.1f s%n", (System.nanoTime() - t0) / 1e9);
        Path work = Files.createTempDirectory("linux-612-guest-it");
        Path script = PeerVm.copyResource(Linux612GuestIT.class, "/interop/linux-6.12-guest.sh", work);
        PeerVm.Result r = vm.run(script, List.of(), Duration.ofMinutes(5), work.resolve("job"), List.of());
        String out = r.output();
        System.out.println(
                "===== linux-6.12 guest (" + r.boot() + ", run " + r.wall().toMillis() + " ms)\n" + out);
        boolean passed = false;
        try {
            assertEquals(0, r.rc(), "guest script status\n" + PeerVm.tail(r.console(), 40));
            assertTrue(out.contains("CHECKS DONE"), "the script did not finish");
            Matcher failed = Pattern.compile("(?m)^CHECK FAIL .*$").matcher(out);
            if (failed.find()) {
                fail("first failed check: " + failed.group());
            }
            for (String c : CHECKS) {
                assertTrue(
                        Pattern.compile("(?m)^CHECK OK " + Pattern.quote(c) + ":")
                                .matcher(out)
                                .find(),
                        "no OK for " + c);
            }
            passed = true;
        } finally {
            if (passed) {
                PeerVm.deleteRecursively(work);
            } else {
                System.out.println("kept " + work);
            }
        }
    }
}
