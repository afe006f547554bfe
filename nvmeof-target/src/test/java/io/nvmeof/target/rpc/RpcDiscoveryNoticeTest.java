package io.nvmeof.target.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.nvmeof.core.command.AdminOpcode;
import io.nvmeof.core.command.Nqn;
import io.nvmeof.core.command.Status;
import io.nvmeof.core.wire.CompletionQueueEntry;
import io.nvmeof.core.wire.SglDescriptor;
import io.nvmeof.core.wire.SubmissionQueueEntry;
import io.nvmeof.target.NvmeTarget;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.e2e.RawTcpHost;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A discovery controller connected over real NVMe/TCP, with an Asynchronous Event Request outstanding, gets the
 * discovery log change notice (AEN 0x70F002) for each change an operator makes over JSON-RPC: a subsystem created
 * and deleted, a listener added to and removed from it, a host allowed and disallowed; and the log it then reads
 * (RAE cleared, which re-arms the notice) shows the change.
 */
class RpcDiscoveryNoticeTest {
    private static final String NQN = "nqn.2016-06.io.spdk:cnode1";
    private static final int DISCOVERY_LOG_CHANGED = 0x0070F002;
    private static final int AER_CID = 0x0AE0;

    @TempDir
    Path dir;

    private NvmeTarget target;
    private RpcServer server;
    private Path socket;
    private RawTcpHost discovery;
    private JsonNode startListener;

    @BeforeEach
    void start() throws Exception {
        target = NvmeTarget.start(new TargetConfig(
                List.of(new ListenerConfig("tcp", "127.0.0.1", 0, 128, 16384)), List.of(), 1L << 30, 0));
        socket = dir.resolve("rpc.sock");
        server = new RpcServer(new Management(target)).listenUnix(socket);
        int port = target.boundAddresses().get(0).getPort();
        startListener = RpcServerTest.JSON.readTree(
                "{\"trtype\":\"tcp\",\"adrfam\":\"IPv4\",\"traddr\":\"127.0.0.1\",\"trsvcid\":\"" + port + "\"}");
        discovery = RawTcpHost.connect(new InetSocketAddress("127.0.0.1", port), false, false);
        RawTcpHost.expectOk(discovery.connectAdmin(Nqn.DISCOVERY), "discovery Connect");
        discovery.enable();
        RawTcpHost.expectOk(
                discovery.execute(
                        sqe -> sqe.opcode(AdminOpcode.SET_FEATURES.code())
                                .cdw(10, 0x0B)
                                .cdw(11, 0x80000000),
                        null,
                        null),
                "Set Features AEC: discovery log change notices, as Linux");
    }

    @AfterEach
    void stop() throws IOException {
        discovery.close();
        server.close();
        target.close();
    }

    private void ok(String method, String params) throws Exception {
        JsonNode r = RpcServerTest.call(socket, method, params);
        assertFalse(r.has("error"), () -> method + " failed: " + r);
    }

    /** Sends an Asynchronous Event Request and leaves it outstanding (nothing is read). */
    private void sendAer() throws IOException {
        ByteBuffer b = ByteBuffer.allocate(SubmissionQueueEntry.LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        SubmissionQueueEntry sqe = new SubmissionQueueEntry();
        sqe.wrap(b, 0);
        sqe.opcode(AdminOpcode.ASYNC_EVENT_REQUEST.code()).cid(AER_CID).flags(SubmissionQueueEntry.FLAGS_SGL);
        sqe.sgl().set(SglDescriptor.ID_TCP_TRANSPORT, 0, 0);
        discovery.sendCapsule(b.array(), null);
    }

    /** Reads the completion of the outstanding AER: its DW0. */
    private int awaitAer() throws IOException {
        discovery.soTimeout(10_000);
        RawTcpHost.Pdu p = discovery.readPdu();
        assertEquals(RawTcpHost.CAPSULE_RESP, p.type(), p.toString());
        CompletionQueueEntry cqe = new CompletionQueueEntry();
        cqe.wrap(p.header(), 8);
        assertEquals(AER_CID, cqe.cid());
        assertTrue(Status.isSuccess(cqe.status()), Status.toString(cqe.status()));
        return cqe.dw0();
    }

    /** The discovery log's NVM subsystem entries as "PORTID NQN", read with RAE cleared. */
    private List<String> log() throws IOException {
        byte[] page = new byte[4 * 1024];
        int numd = page.length / 4 - 1;
        RawTcpHost.expectOk(
                discovery.execute(
                        sqe -> sqe.opcode(AdminOpcode.GET_LOG_PAGE.code()).cdw(10, 0x70 | (numd << 16)), null, page),
                "Get Log Page 70h");
        ByteBuffer b = ByteBuffer.wrap(page).order(ByteOrder.LITTLE_ENDIAN);
        List<String> out = new ArrayList<>();
        for (int i = 0; i < (int) b.getLong(8) && (i + 2) * 1024 <= page.length; i++) {
            int e = 1024 * (i + 1);
            if (b.get(e + 2) == 2) {
                String nqn = new String(page, e + 256, 256, StandardCharsets.US_ASCII).trim();
                out.add(b.getShort(e + 4) + " " + nqn.replace("\0", ""));
            }
        }
        return out;
    }

    /** Makes the RPC call with an AER outstanding, checks the notice, and returns the log read afterwards. */
    private List<String> change(String method, String params) throws Exception {
        sendAer();
        ok(method, params);
        assertEquals(DISCOVERY_LOG_CHANGED, awaitAer(), method);
        return log();
    }

    @Test
    void everyChangeOverRpcReachesAConnectedDiscoveryControllerOverTcp() throws Exception {
        assertEquals(List.of(), log());
        String nqn = "{\"nqn\":\"" + NQN + "\"";
        String listener = nqn + ",\"listen_address\":" + startListener + "}";
        String host = nqn + ",\"host\":\"" + RawTcpHost.DEFAULT_HOST_NQN + "\"}";

        assertEquals(List.of(), change("nvmf_create_subsystem", nqn + "}"), "on no listener yet");
        assertEquals(List.of(), change("nvmf_subsystem_add_listener", listener), "this host is not allowed");
        assertEquals(List.of("1 " + NQN), change("nvmf_subsystem_add_host", host));
        assertEquals(List.of(), change("nvmf_subsystem_remove_listener", listener));
        assertEquals(List.of("1 " + NQN), change("nvmf_subsystem_add_listener", listener));
        assertEquals(List.of(), change("nvmf_subsystem_remove_host", host));
        assertEquals(List.of("1 " + NQN), change("nvmf_subsystem_allow_any_host", nqn + ",\"allow_any_host\":true}"));
        assertEquals(List.of(), change("nvmf_delete_subsystem", nqn + "}"));
        assertEquals(1, target.listeners().size(), "the listener the target started with stays open");
    }
}
