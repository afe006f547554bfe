package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.core.spi.ListenerOptions;
import java.util.Locale;
import java.util.Set;

/**
 * What nvmf_create_transport set for one transport type. We apply {@code max_queue_depth} and
 * {@code in_capsule_data_size} to the listeners opened later on that transport; the other SPDK options are tuning of
 * SPDK's own buffers and pollers, accepted and ignored.
 */
record TransportOptions(String trtype, int maxQueueDepth, int inCapsuleDataSize) {
    /** SPDK's nvmf_create_transport parameters (TCP and RDMA). */
    static final Set<String> PARAMS = Set.of(
            "trtype",
            "tgt_name",
            "max_queue_depth",
            "max_qpairs_per_ctrlr",
            "max_io_qpairs_per_ctrlr",
            "in_capsule_data_size",
            "max_io_size",
            "io_unit_size",
            "max_aq_depth",
            "num_shared_buffers",
            "buf_cache_size",
            "num_cqe",
            "max_srq_depth",
            "no_srq",
            "c2h_success",
            "dif_insert_or_strip",
            "sock_priority",
            "acceptor_backlog",
            "abort_timeout_sec",
            "acceptor_poll_rate",
            "no_wr_batching",
            "control_msg_num",
            "disable_mappable_bar0",
            "disable_adaptive_irq",
            "disable_shadow_doorbells",
            "zcopy",
            "ack_timeout",
            "data_wr_pool_size",
            "disable_command_passthru",
            "kas_timeout",
            "in_order_requests");

    static final TransportOptions defaults(String trtype) {
        return new TransportOptions(
                trtype, ListenerOptions.DEFAULT_MAX_QUEUE_SIZE, ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE);
    }

    /** TCP or RDMA in upper case, from SPDK's case-insensitive trtype. */
    static String trtype(String method, String value) throws RpcException {
        String t = value.toUpperCase(Locale.ROOT);
        if (!t.equals("TCP") && !t.equals("RDMA")) {
            throw RpcException.invalidParams(
                    method + ": transport type " + value + " is not supported by this target (TCP and RDMA are)");
        }
        return t;
    }

    static TransportOptions parse(JsonNode params) throws RpcException {
        Params p = Params.of("nvmf_create_transport", params, PARAMS);
        String t = trtype("nvmf_create_transport", p.requireString("trtype"));
        int depth = p.intValue("max_queue_depth", ListenerOptions.DEFAULT_MAX_QUEUE_SIZE);
        int icd = p.intValue("in_capsule_data_size", ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE);
        if (depth < 2 || depth > 65536) {
            throw RpcException.invalidParams("nvmf_create_transport: max_queue_depth must be 2..65536: " + depth);
        }
        if (icd < 0 || icd > 1 << 20) {
            throw RpcException.invalidParams("nvmf_create_transport: in_capsule_data_size out of range: " + icd);
        }
        if (p.bool("dif_insert_or_strip", false)) {
            throw RpcException.invalidParams(
                    "nvmf_create_transport: dif_insert_or_strip: this target has no " + "protection information");
        }
        return new TransportOptions(t, depth, icd);
    }

    ObjectNode describe() {
        ObjectNode o = Management.JSON.createObjectNode();
        o.put("trtype", trtype);
        o.put("max_queue_depth", maxQueueDepth);
        o.put("in_capsule_data_size", inCapsuleDataSize);
        return o;
    }
}
