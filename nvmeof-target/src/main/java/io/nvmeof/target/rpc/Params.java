package io.nvmeof.target.rpc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import java.util.Iterator;
import java.util.Set;
import java.util.UUID;

/**
 * The {@code params} object of one request, read with checks. Like SPDK's JSON decoders, a key the method does not
 * know is an error (-32602), and so is a value of the wrong type; the message names the key.
 */
final class Params {
    private final String method;
    private final JsonNode node;

    private Params(String method, JsonNode node) {
        this.method = method;
        this.node = node;
    }

    /** Checks that {@code params} is absent or an object whose keys are all in {@code allowed}. */
    static Params of(String method, JsonNode params, Set<String> allowed) throws RpcException {
        JsonNode n = params == null || params.isNull() ? NullNode.getInstance() : params;
        if (!n.isNull() && !n.isObject()) {
            throw RpcException.invalidParams(method + ": params must be an object");
        }
        for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!allowed.contains(key)) {
                throw RpcException.invalidParams(method + ": unknown parameter '" + key + "'");
            }
        }
        return new Params(method, n);
    }

    boolean has(String key) {
        return node.hasNonNull(key);
    }

    JsonNode node(String key) {
        return node.get(key);
    }

    String requireString(String key) throws RpcException {
        if (!has(key)) {
            throw RpcException.invalidParams(method + ": missing parameter '" + key + "'");
        }
        return string(key, null);
    }

    String string(String key, String otherwise) throws RpcException {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return otherwise;
        }
        if (!v.isTextual()) {
            throw RpcException.invalidParams(method + ": '" + key + "' must be a string");
        }
        return v.asText();
    }

    long requireLong(String key) throws RpcException {
        if (!has(key)) {
            throw RpcException.invalidParams(method + ": missing parameter '" + key + "'");
        }
        return longValue(key, 0);
    }

    long longValue(String key, long otherwise) throws RpcException {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return otherwise;
        }
        if (!v.isIntegralNumber() || !v.canConvertToLong()) {
            throw RpcException.invalidParams(method + ": '" + key + "' must be an integer");
        }
        return v.asLong();
    }

    int intValue(String key, int otherwise) throws RpcException {
        long v = longValue(key, otherwise);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw RpcException.invalidParams(method + ": '" + key + "' is out of range: " + v);
        }
        return (int) v;
    }

    boolean bool(String key, boolean otherwise) throws RpcException {
        JsonNode v = node.get(key);
        if (v == null || v.isNull()) {
            return otherwise;
        }
        if (!v.isBoolean()) {
            throw RpcException.invalidParams(method + ": '" + key + "' must be true or false");
        }
        return v.asBoolean();
    }

    UUID uuid(String key) throws RpcException {
        String s = string(key, null);
        if (s == null) {
            return null;
        }
        try {
            return UUID.fromString(s);
        } catch (IllegalArgumentException e) {
            throw RpcException.invalidParams(method + ": '" + key + "' is not a UUID: " + s);
        }
    }

    /** A nested object, checked like the params themselves. */
    Params object(String key, Set<String> allowed) throws RpcException {
        JsonNode v = node.get(key);
        if (v == null || !v.isObject()) {
            throw RpcException.invalidParams(method + ": '" + key + "' must be an object");
        }
        return of(method + " " + key, v, allowed);
    }

    String method() {
        return method;
    }
}
