package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/** bdev_malloc_create/delete, bdev_null_create/delete/resize, bdev_get_bdevs (SPDK's names and shapes). */
final class BdevMethods {
    /** The SPDK parameters of bdev_malloc_create / bdev_null_create we accept; see {@link #create}. */
    private static final Set<String> CREATE_PARAMS = Set.of(
            "name",
            "num_blocks",
            "block_size",
            "uuid",
            "physical_block_size",
            "optimal_io_boundary",
            "md_size",
            "md_interleave",
            "dif_type",
            "dif_is_head_of_md",
            "dif_pi_format",
            "preferred_write_granularity",
            "preferred_write_alignment",
            "optimal_write_size",
            "preferred_unmap_granularity",
            "preferred_unmap_alignment");

    private final Management m;

    BdevMethods(Management m) {
        this.m = m;
    }

    void register(Map<String, Management.Method> methods) {
        methods.put("bdev_malloc_create", p -> create("bdev_malloc_create", Bdev.Kind.MALLOC, p));
        methods.put("bdev_malloc_delete", p -> delete("bdev_malloc_delete", Bdev.Kind.MALLOC, p));
        methods.put("bdev_null_create", p -> create("bdev_null_create", Bdev.Kind.NULL, p));
        methods.put("bdev_null_delete", p -> delete("bdev_null_delete", Bdev.Kind.NULL, p));
        methods.put("bdev_null_resize", this::resize);
        methods.put("bdev_get_bdevs", this::get);
    }

    private JsonNode create(String method, Bdev.Kind kind, JsonNode params) throws RpcException {
        Params p = Params.of(method, params, CREATE_PARAMS);
        String name = p.string("name", null);
        long numBlocks = p.requireLong("num_blocks");
        int blockSize = p.intValue("block_size", 512);
        UUID uuid = p.uuid("uuid");
        if (p.intValue("md_size", 0) != 0 || p.intValue("dif_type", 0) != 0) {
            throw RpcException.invalidParams(
                    method + ": md_size/dif_type: this target has no metadata or protection information");
        }
        if (blockSize != 512 && blockSize != 4096) {
            throw RpcException.invalidParams(method + ": block_size must be 512 or 4096, not " + blockSize);
        }
        if (numBlocks <= 0 || numBlocks > Long.MAX_VALUE / blockSize) {
            throw RpcException.invalidParams(method + ": num_blocks must be positive: " + numBlocks);
        }
        if (name == null) {
            String prefix = kind == Bdev.Kind.MALLOC ? "Malloc" : "Null";
            int i = 0;
            while (m.bdevs.containsKey(prefix + i)) {
                i++;
            }
            name = prefix + i;
        }
        if (name.isEmpty()) {
            throw RpcException.invalidParams(method + ": name must not be empty");
        }
        if (m.bdevs.containsKey(name)) {
            throw new RpcException(RpcException.EEXIST, "File exists: bdev " + name + " already exists");
        }
        if (uuid == null) {
            uuid = UUID.randomUUID();
        } else {
            for (Bdev b : m.bdevs.values()) {
                if (b.uuid().equals(uuid)) {
                    throw new RpcException(
                            RpcException.EEXIST, "File exists: bdev " + b.name() + " already has UUID " + uuid);
                }
            }
        }
        m.bdevs.put(name, new Bdev(name, kind, blockSize, numBlocks, uuid, null, 0));
        return TextNode.valueOf(name);
    }

    private JsonNode delete(String method, Bdev.Kind kind, JsonNode params) throws RpcException {
        Params p = Params.of(method, params, Set.of("name"));
        Bdev b = require(p.requireString("name"), kind);
        if (b.claimed()) {
            // As SPDK does: deleting a bdev that is a namespace hot-removes the namespace.
            m.target().removeNamespace(b.claimedBy(), b.nsid());
        }
        m.bdevs.remove(b.name());
        return BooleanNode.TRUE;
    }

    /** {@code new_size} is in MiB, as in SPDK. Blocks are not kept (a null bdev has none). */
    private JsonNode resize(JsonNode params) throws RpcException {
        Params p = Params.of("bdev_null_resize", params, Set.of("name", "new_size"));
        Bdev b = require(p.requireString("name"), Bdev.Kind.NULL);
        long mib = p.requireLong("new_size");
        if (mib <= 0 || mib > Long.MAX_VALUE >> 20) {
            throw RpcException.invalidParams("bdev_null_resize: new_size (MiB) must be positive: " + mib);
        }
        long bytes = mib << 20;
        if (bytes % b.blockSize() != 0) {
            throw RpcException.invalidParams("bdev_null_resize: new_size is not a multiple of the block size");
        }
        Bdev resized = b.withNumBlocks(bytes / b.blockSize());
        if (b.claimed()) {
            m.target().resizeNamespace(b.claimedBy(), b.nsid(), bytes);
        }
        m.bdevs.put(b.name(), resized);
        return BooleanNode.TRUE;
    }

    private JsonNode get(JsonNode params) throws RpcException {
        Params p = Params.of("bdev_get_bdevs", params, Set.of("name", "timeout"));
        String name = p.string("name", null);
        p.longValue("timeout", 0);
        ArrayNode out = Management.JSON.createArrayNode();
        if (name != null) {
            Bdev b = m.bdevs.get(name);
            if (b == null) {
                throw new RpcException(RpcException.ENODEV, "No such device: bdev " + name);
            }
            out.add(describe(b));
        } else {
            m.bdevs.values().forEach(b -> out.add(describe(b)));
        }
        return out;
    }

    private Bdev require(String name, Bdev.Kind kind) throws RpcException {
        Bdev b = m.bdevs.get(name);
        if (b == null || b.kind() != kind) {
            throw new RpcException(
                    RpcException.ENODEV,
                    "No such device: no " + kind.name().toLowerCase(java.util.Locale.ROOT) + " bdev " + name);
        }
        return b;
    }

    static ObjectNode describe(Bdev b) {
        ObjectNode o = Management.JSON.createObjectNode();
        o.put("name", b.name());
        o.putArray("aliases");
        o.put("product_name", b.kind().productName);
        o.put("block_size", b.blockSize());
        o.put("num_blocks", b.numBlocks());
        o.put("uuid", b.uuid().toString());
        o.put("claimed", b.claimed());
        o.put("zoned", false);
        ObjectNode io = o.putObject("supported_io_types");
        io.put("read", true);
        io.put("write", true);
        io.put("unmap", true);
        io.put("write_zeroes", true);
        io.put("flush", true);
        io.put("reset", false);
        io.put("compare", true);
        io.put("compare_and_write", true);
        io.put("nvme_admin", false);
        io.put("nvme_io", false);
        o.putObject("driver_specific");
        return o;
    }
}
