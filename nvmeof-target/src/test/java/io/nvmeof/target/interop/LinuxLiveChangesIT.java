package io.nvmeof.target.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.rpc.Management;
import io.nvmeof.target.rpc.RpcClient;
import io.nvmeof.target.rpc.RpcServer;
import io.nvmeof.testkit.peervm.PeerVm;
import io.nvmeof.testkit.peervm.RunningVm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The Linux kernel host (peer VM) connected to a subsystem of the Java target, which the test changes over JSON-RPC
 * (our Unix socket, SPDK's methods): a namespace hot-added appears as a new block device, a null bdev resized
 * changes the block device's size, the namespace removed goes away, all on the same live controller; a listener
 * added at run time shows in {@code nvme discover}. Guest side: {@code interop/linux-rpc-live.sh}.
 *
 * <p>Run with {@code mvn -B -o -pl nvmeof-target -am verify -Dit.test=LinuxLiveChangesIT -Dtest=none
 * -Dsurefire.failIfNoSpecifiedTests=false -Dfailsafe.failIfNoSpecifiedTests=false}. One VM boot; 67 s measured with
 * the linux-6.1 guest (add-to-visible 290 ms, resize seen 535 ms, removal seen 501 ms, each counted from the guest's
 * READY line, so including the time this side takes to read it).
 */
@Tag("vm")
@Timeout(value = 25, unit = java.util.concurrent.TimeUnit.MINUTES)
class LinuxLiveChangesIT {
    static final String NQN = "nqn.2016-06.io.spdk:cnode1";
    static final Duration STEP_MAX = Duration.ofMinutes(4);
    static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void kernelHostSeesChangesMadeOverRpc() throws Exception {
        PeerVm vm = PeerVm.locate().guest(System.getProperty("live.guest", PeerVm.DEFAULT_GUEST));
        vm.ensureImage(Duration.ofMinutes(10));
        Path work = Files.createTempDirectory("linux-live-changes-it");
        Path job = work.resolve("job");
        long t0 = System.nanoTime();
        try (NvmeTarget target = NvmeTarget.start(new TargetConfig(
                        List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)), List.of(), 1L << 30, 0));
                RpcServer server = new RpcServer(new Management(target)).listenUnix(work.resolve("rpc.sock"));
                RpcClient rpc = RpcClient.unix(work.resolve("rpc.sock"))) {
            int port = target.boundAddresses().get(0).getPort();
            int newPort = PeerVm.freePort();
            rpc.call("bdev_null_create", json("{\"name\":\"Null0\",\"num_blocks\":16384,\"block_size\":4096}"));
            rpc.call("bdev_malloc_create", json("{\"name\":\"Malloc0\",\"num_blocks\":8192,\"block_size\":4096}"));
            rpc.call("nvmf_create_subsystem", json("{\"nqn\":\"" + NQN + "\",\"allow_any_host\":true}"));
            rpc.call(
                    "nvmf_subsystem_add_ns", json("{\"nqn\":\"" + NQN + "\",\"namespace\":{\"bdev_name\":\"Null0\"}}"));
            // A subsystem created over RPC is reachable only on the listeners added to it (SPDK): the open one here.
            rpc.call(
                    "nvmf_subsystem_add_listener",
                    json("{\"nqn\":\"" + NQN + "\",\"listen_address\":{\"trtype\":\"TCP\",\"adrfam\":\"IPv4\","
                            + "\"traddr\":\"127.0.0.1\",\"trsvcid\":\"" + port + "\"}}"));

            Path script = PeerVm.copyResource(LinuxLiveChangesIT.class, "/interop/linux-rpc-live.sh", work);
            List<String> args = List.of("10.0.2.2", Integer.toString(port), NQN, Integer.toString(newPort));
            System.out.println("peer VM: " + vm.dir() + " run.sh --no-fwd " + script + " " + args);
            try (RunningVm guest = vm.start(script, args, List.of("--no-fwd"), Duration.ofMinutes(20), job)) {
                await(guest, "READY ADD");
                int cntlid = target.subsystem(NQN).controllers().get(0).cntlid();
                rpc.call(
                        "nvmf_subsystem_add_ns",
                        json("{\"nqn\":\"" + NQN + "\",\"namespace\":{\"bdev_name\":\"Malloc0\",\"nsid\":2}}"));
                String added = await(guest, "ADDED \\d+ ms").group();
                await(guest, "READY RESIZE");
                rpc.call("bdev_null_resize", json("{\"name\":\"Null0\",\"new_size\":128}"));
                String resized = await(guest, "RESIZED \\d+ ms").group();
                await(guest, "READY REMOVE");
                rpc.call("nvmf_subsystem_remove_ns", json("{\"nqn\":\"" + NQN + "\",\"nsid\":2}"));
                String removed = await(guest, "REMOVED \\d+ ms").group();
                await(guest, "READY LISTENER");
                assertEquals(1, target.subsystem(NQN).controllers().size(), "one I/O controller: no reconnect");
                assertEquals(cntlid, target.subsystem(NQN).controllers().get(0).cntlid(), "the same controller");
                rpc.call(
                        "nvmf_subsystem_add_listener",
                        json("{\"nqn\":\"" + NQN + "\",\"listen_address\":{\"trtype\":\"TCP\",\"adrfam\":\"IPv4\","
                                + "\"traddr\":\"127.0.0.1\",\"trsvcid\":\"" + newPort + "\"}}"));
                await(guest, "ALL PASS");
                int rc = guest.stop(Duration.ofMinutes(2));
                System.out.println("===== guest output (rc " + rc + ")\n" + guest.output());
                assertEquals(0, rc, "guest script exit status");
                System.out.println("add-to-visible: " + added + "; resize: " + resized + "; remove: " + removed);
            } catch (IllegalStateException e) {
                fail("the kernel host failed: " + e.getMessage());
            }
            System.out.printf("LinuxLiveChangesIT: %.1f s%n", (System.nanoTime() - t0) / 1e9);
        } finally {
            if (!Boolean.getBoolean("peervm.keep")) {
                PeerVm.deleteRecursively(work);
            }
        }
    }

    private static JsonNode json(String text) throws Exception {
        return JSON.readTree(text);
    }

    private static Matcher await(RunningVm guest, String regex) throws InterruptedException {
        return guest.await("^" + regex + "$", STEP_MAX);
    }
}
