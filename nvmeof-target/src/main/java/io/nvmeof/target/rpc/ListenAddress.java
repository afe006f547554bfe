package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmeof.core.spi.PortInfo;
import io.nvmeof.core.spi.TargetListener;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Set;

/** SPDK's {@code listen_address} object: {@code trtype}, {@code adrfam}, {@code traddr}, {@code trsvcid}. */
record ListenAddress(String trtype, String traddr, int port) {
    private static final Set<String> KEYS = Set.of("trtype", "adrfam", "traddr", "trsvcid");

    static ListenAddress parse(Params params) throws RpcException {
        String method = params.method();
        Params p = params.object("listen_address", KEYS);
        String trtype = TransportOptions.trtype(method, p.requireString("trtype"));
        String traddr = p.requireString("traddr");
        JsonNode svc = p.node("trsvcid");
        int port;
        try {
            port = svc == null || svc.isNull() ? 4420 : Integer.parseInt(svc.asText());
        } catch (NumberFormatException e) {
            throw RpcException.invalidParams(method + ": trsvcid must be a port number: " + svc.asText());
        }
        if (port < 0 || port > 65535) {
            throw RpcException.invalidParams(method + ": trsvcid must be a port number: " + port);
        }
        String adrfam = p.string("adrfam", null);
        if (adrfam != null && !adrfam.equalsIgnoreCase("ipv4") && !adrfam.equalsIgnoreCase("ipv6")) {
            throw RpcException.invalidParams(method + ": adrfam " + adrfam + " is not supported (IPv4 and IPv6 are)");
        }
        try {
            // A literal address only: no name lookups from the management path.
            if (!traddr.matches("[0-9a-fA-F:.]+")) {
                throw new UnknownHostException(traddr);
            }
            InetAddress.getByName(traddr);
        } catch (UnknownHostException e) {
            throw RpcException.invalidParams(method + ": traddr must be an IP address: " + traddr);
        }
        return new ListenAddress(trtype, traddr, port);
    }

    /** Whether {@code listener} listens here. */
    boolean matches(TargetListener listener) {
        PortInfo pi = listener.portInfo();
        return trtypeOf(pi).equals(trtype) && pi.serviceId().equals(Integer.toString(port)) && sameHost(pi.address());
    }

    private boolean sameHost(String address) {
        try {
            return InetAddress.getByName(address).equals(InetAddress.getByName(traddr));
        } catch (UnknownHostException e) {
            return false;
        }
    }

    static String trtypeOf(PortInfo pi) {
        return pi.transportType() == PortInfo.TRTYPE_RDMA ? "RDMA" : "TCP";
    }

    static ObjectNode describe(PortInfo pi) {
        ObjectNode o = Management.JSON.createObjectNode();
        o.put("trtype", trtypeOf(pi));
        o.put("adrfam", pi.addressFamily() == PortInfo.ADRFAM_IPV6 ? "IPv6" : "IPv4");
        o.put("traddr", pi.address());
        o.put("trsvcid", pi.serviceId());
        return o;
    }
}
