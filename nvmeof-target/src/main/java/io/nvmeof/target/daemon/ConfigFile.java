package io.nvmeof.target.daemon;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.exc.StreamReadException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.exc.UnrecognizedPropertyException;
import io.nvmeof.core.command.AnaState;
import io.nvmeof.core.spi.IoMode;
import io.nvmeof.core.spi.ListenerOptions;
import io.nvmeof.core.tls.ConfiguredPsk;
import io.nvmeof.core.tls.PskDerivation;
import io.nvmeof.core.tls.SecureChannel;
import io.nvmeof.target.config.AnaStateConfig;
import io.nvmeof.target.config.ListenerConfig;
import io.nvmeof.target.config.NamespaceConfig;
import io.nvmeof.target.config.Sizes;
import io.nvmeof.target.config.SubsystemConfig;
import io.nvmeof.target.config.TargetConfig;
import io.nvmeof.target.config.TlsKeyConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * The JSON configuration file of the target daemon, read with Jackson. Unknown keys are errors (a typo must not be
 * silently ignored). Sizes are strings with suffixes ("1G", "512M") or plain byte counts.
 *
 * <pre>{@code
 * {
 *   "memoryBudget": "8G",
 *   "listeners": [ { "listen": "tcp://0.0.0.0:4420", "maxQueueSize": 128, "inCapsuleDataSize": 16384,
 *                    "ioEngine": "auto", "busyPoll": false, "tls": "none" } ],
 *   "tlsKeys": [ { "host": "nqn.2014-08.org.nvmexpress:uuid:...", "psk": "NVMeTLSkey-1:01:...:",
 *                  "subsystem": null, "derivation": "rfc8446" } ],
 *   "subsystems": [ {
 *       "nqn": "nqn.2024-01.io.nvmeof:disk1",
 *       "allowAnyHost": false,
 *       "hosts": [ "nqn.2014-08.org.nvmexpress:uuid:..." ],
 *       "namespaces": [ { "nsid": 1, "size": "1T", "blockSize": 4096, "anaGroup": 1 } ],
 *       "listeners": [ 1, 2 ],
 *       "dhchap": [ { "host": "nqn.2014-08.org.nvmexpress:uuid:...", "keyFile": "/etc/nvmeof/host1.key",
 *                     "ctrlKeyFile": "/etc/nvmeof/ctrl.key", "hashes": ["sha256"], "dhGroups": ["ffdhe2048"] } ],
 *       "ana": [ { "listener": 2, "group": 1, "state": "non-optimized" } ] } ]
 * }
 * }</pre>
 */
public final class ConfigFile {
    private ConfigFile() {}

    record Root(
            @JsonProperty("memoryBudget") String memoryBudget,
            @JsonProperty("discoveryKatoMillis") Integer discoveryKatoMillis,
            @JsonProperty("listeners") List<Listener> listeners,
            @JsonProperty("subsystems") List<Subsystem> subsystems,
            @JsonProperty("tlsKeys") List<TlsKey> tlsKeys) {}

    /** A host's TLS PSK: {@code psk} or {@code pskFile}; {@code subsystem} null for every subsystem. */
    record TlsKey(
            @JsonProperty("host") String host,
            @JsonProperty("subsystem") String subsystem,
            @JsonProperty("psk") String psk,
            @JsonProperty("pskFile") String pskFile,
            @JsonProperty("derivation") String derivation) {}

    record Listener(
            @JsonProperty("listen") String listen,
            @JsonProperty("maxQueueSize") Integer maxQueueSize,
            @JsonProperty("inCapsuleDataSize") String inCapsuleDataSize,
            @JsonProperty("ioEngine") String ioEngine,
            @JsonProperty("busyPoll") Boolean busyPoll,
            @JsonProperty("tls") String tls) {}

    record Subsystem(
            @JsonProperty("nqn") String nqn,
            @JsonProperty("allowAnyHost") Boolean allowAnyHost,
            @JsonProperty("hosts") List<String> hosts,
            @JsonProperty("serial") String serial,
            @JsonProperty("model") String model,
            @JsonProperty("namespaces") List<Namespace> namespaces,
            @JsonProperty("listeners") List<Integer> listeners,
            @JsonProperty("ana") List<Ana> ana,
            @JsonProperty("dhchap") List<Dhchap> dhchap) {}

    /**
     * One host's DH-HMAC-CHAP settings (docs/security.md): a secret inline ({@code key}) or in a file
     * ({@code keyFile}), the same for the controller's, and the allowed hashes and DH groups.
     */
    record Dhchap(
            @JsonProperty("host") String host,
            @JsonProperty("key") String key,
            @JsonProperty("keyFile") String keyFile,
            @JsonProperty("ctrlKey") String ctrlKey,
            @JsonProperty("ctrlKeyFile") String ctrlKeyFile,
            @JsonProperty("hashes") List<String> hashes,
            @JsonProperty("dhGroups") List<String> dhGroups) {}

    /** One ANA group state on one listener (listeners are numbered from 1 in file order). */
    record Ana(
            @JsonProperty("listener") Integer listener,
            @JsonProperty("group") Integer group,
            @JsonProperty("state") String state) {}

    record Namespace(
            @JsonProperty("nsid") Integer nsid,
            @JsonProperty("size") String size,
            @JsonProperty("blockSize") Integer blockSize,
            @JsonProperty("uuid") String uuid,
            @JsonProperty("readOnly") Boolean readOnly,
            @JsonProperty("anaGroup") Integer anaGroup,
            @JsonProperty("file") String file,
            @JsonProperty("preallocate") Boolean preallocate) {}

    /**
     * Reads and checks a configuration file.
     *
     * @throws IllegalArgumentException with a message naming the file and what is wrong in it
     */
    public static TargetConfig load(Path file) {
        String text;
        try {
            text = Files.readString(file);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("config file not found: " + file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read config file " + file + ": " + e.getMessage());
        }
        try {
            return parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    /** Parses configuration JSON; see {@link #load}. */
    public static TargetConfig parse(String json) {
        ObjectMapper mapper = new ObjectMapper()
                .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);
        Root root;
        try {
            root = mapper.readValue(json, Root.class);
        } catch (UnrecognizedPropertyException e) {
            throw new IllegalArgumentException("unknown key '" + e.getPropertyName() + "' at " + path(e)
                    + " (known keys: " + e.getKnownPropertyIds() + ")");
        } catch (JsonMappingException e) {
            if (!(e.getCause() instanceof StreamReadException)
                    && !e.getOriginalMessage().startsWith("Unexpected end-of-input")) {
                throw new IllegalArgumentException("bad value at " + path(e) + ": " + e.getOriginalMessage());
            }
            throw new IllegalArgumentException("not valid JSON: " + e.getOriginalMessage()
                    + (e.getLocation() == null
                            ? ""
                            : " (line " + e.getLocation().getLineNr() + ", column "
                                    + e.getLocation().getColumnNr() + ")"));
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("not valid JSON: " + e.getOriginalMessage()
                    + (e.getLocation() == null
                            ? ""
                            : " (line " + e.getLocation().getLineNr() + ", column "
                                    + e.getLocation().getColumnNr() + ")"));
        }
        if (root == null) {
            throw new IllegalArgumentException("the config is empty");
        }
        return toConfig(root);
    }

    private static String path(JsonMappingException e) {
        StringBuilder sb = new StringBuilder("$");
        for (JsonMappingException.Reference r : e.getPath()) {
            if (r.getFieldName() != null) {
                sb.append('.').append(r.getFieldName());
            } else if (r.getIndex() >= 0) {
                sb.append('[').append(r.getIndex()).append(']');
            }
        }
        return sb.toString();
    }

    private static TargetConfig toConfig(Root root) {
        List<ListenerConfig> listeners = new ArrayList<>();
        List<Listener> ls = root.listeners() == null ? List.of() : root.listeners();
        for (int i = 0; i < ls.size(); i++) {
            Listener l = ls.get(i);
            String where = "listeners[" + i + "]";
            if (l == null || l.listen() == null) {
                throw new IllegalArgumentException(where + ": \"listen\" is required, e.g. \"tcp://0.0.0.0:4420\"");
            }
            int queue = l.maxQueueSize() == null ? ListenerOptions.DEFAULT_MAX_QUEUE_SIZE : l.maxQueueSize();
            int inCapsule = l.inCapsuleDataSize() == null
                    ? ListenerOptions.DEFAULT_IN_CAPSULE_DATA_SIZE
                    : (int) checkedSize(l.inCapsuleDataSize(), where + ".inCapsuleDataSize");
            try {
                String engine = TargetDaemon.checkEngine(l.ioEngine(), "ioEngine");
                ListenerConfig lc = ListenerConfig.parse(l.listen(), queue, inCapsule)
                        .withIoMode(new IoMode(engine, l.busyPoll() != null && l.busyPoll()));
                if (l.tls() != null) {
                    lc = lc.withSecureChannel(SecureChannel.ofConfigName(l.tls()));
                }
                listeners.add(lc);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
        }
        if (listeners.isEmpty()) {
            throw new IllegalArgumentException(
                    "no listeners: add e.g. \"listeners\": [{\"listen\": \"tcp://0.0.0.0:4420\"}]");
        }
        List<SubsystemConfig> subsystems = new ArrayList<>();
        List<Subsystem> ss = root.subsystems() == null ? List.of() : root.subsystems();
        for (int i = 0; i < ss.size(); i++) {
            Subsystem s = ss.get(i);
            String where = "subsystems[" + i + "]";
            if (s == null) {
                throw new IllegalArgumentException(where + " is null");
            }
            List<NamespaceConfig> namespaces = new ArrayList<>();
            List<Namespace> ns = s.namespaces() == null ? List.of() : s.namespaces();
            for (int j = 0; j < ns.size(); j++) {
                namespaces.add(namespace(ns.get(j), where + ".namespaces[" + j + "]", j + 1));
            }
            List<Dhchap> dh = s.dhchap() == null ? List.of() : s.dhchap();
            boolean any = s.allowAnyHost() == null
                    ? (s.hosts() == null || s.hosts().isEmpty()) && dh.isEmpty()
                    : s.allowAnyHost();
            List<io.nvmeof.target.config.HostAuth> auth = new ArrayList<>();
            for (int j = 0; j < dh.size(); j++) {
                auth.add(dhchap(dh.get(j), where + ".dhchap[" + j + "]"));
            }
            List<AnaStateConfig> ana = new ArrayList<>();
            List<Ana> as = s.ana() == null ? List.of() : s.ana();
            for (int j = 0; j < as.size(); j++) {
                ana.add(anaState(as.get(j), where + ".ana[" + j + "]"));
            }
            if (s.listeners() != null) {
                for (Integer l : s.listeners()) {
                    if (l == null || l < 1 || l > listeners.size()) {
                        throw new IllegalArgumentException(where + ".listeners: " + l
                                + " is not a listener number (the listeners are numbered 1.." + listeners.size()
                                + " in file order)");
                    }
                }
            }
            try {
                subsystems.add(new SubsystemConfig(
                        s.nqn(), any, s.hosts(), namespaces, s.serial(), s.model(), ana, s.listeners(), auth));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
        }
        long budget = root.memoryBudget() == null ? 0 : checkedSize(root.memoryBudget(), "memoryBudget");
        int kato = root.discoveryKatoMillis() == null ? 0 : root.discoveryKatoMillis();
        return new TargetConfig(listeners, subsystems, budget, kato, tlsKeys(root.tlsKeys()));
    }

    private static List<TlsKeyConfig> tlsKeys(List<TlsKey> keys) {
        List<TlsKeyConfig> out = new ArrayList<>();
        List<TlsKey> ks = keys == null ? List.of() : keys;
        for (int i = 0; i < ks.size(); i++) {
            TlsKey k = ks.get(i);
            String where = "tlsKeys[" + i + "]";
            if (k == null || k.host() == null || (k.psk() == null) == (k.pskFile() == null)) {
                throw new IllegalArgumentException(
                        where + ": \"host\" and one of \"psk\" and \"pskFile\" are required");
            }
            try {
                ConfiguredPsk psk = k.psk() != null
                        ? ConfiguredPsk.parse(k.psk())
                        : TlsKeyConfig.readKeyFile(java.nio.file.Path.of(k.pskFile()));
                PskDerivation d = k.derivation() == null ? null : PskDerivation.ofConfigName(k.derivation());
                out.add(new TlsKeyConfig(k.host(), k.subsystem(), psk, d));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(where + ": " + e.getMessage());
            }
        }
        return out;
    }

    private static io.nvmeof.target.config.HostAuth dhchap(Dhchap d, String where) {
        if (d == null || d.host() == null || (d.key() == null) == (d.keyFile() == null)) {
            throw new IllegalArgumentException(where + ": \"host\" and one of \"key\" or \"keyFile\" are required");
        }
        if (d.ctrlKey() != null && d.ctrlKeyFile() != null) {
            throw new IllegalArgumentException(where + ": give \"ctrlKey\" or \"ctrlKeyFile\", not both");
        }
        try {
            return new io.nvmeof.target.config.HostAuth(
                    d.host(),
                    DhchapSecrets.read(d.key(), d.keyFile(), "key"),
                    d.ctrlKey() == null && d.ctrlKeyFile() == null
                            ? null
                            : DhchapSecrets.read(d.ctrlKey(), d.ctrlKeyFile(), "ctrlKey"),
                    io.nvmeof.target.config.HostAuth.hashes(d.hashes()),
                    io.nvmeof.target.config.HostAuth.groups(d.dhGroups()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
    }

    private static AnaStateConfig anaState(Ana a, String where) {
        if (a == null || a.listener() == null || a.group() == null || a.state() == null) {
            throw new IllegalArgumentException(where + ": \"listener\", \"group\" and \"state\" are required, e.g. "
                    + "{\"listener\": 2, \"group\": 1, \"state\": \"non-optimized\"}");
        }
        try {
            return new AnaStateConfig(a.listener(), a.group(), AnaState.parse(a.state()));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
    }

    private static NamespaceConfig namespace(Namespace n, String where, int defaultNsid) {
        if (n == null || n.size() == null) {
            throw new IllegalArgumentException(where + ": \"size\" is required, e.g. \"1G\"");
        }
        try {
            UUID uuid = n.uuid() == null ? null : UUID.fromString(n.uuid());
            return new NamespaceConfig(
                    n.nsid() == null ? defaultNsid : n.nsid(),
                    checkedSize(n.size(), where + ".size"),
                    n.blockSize() == null ? 4096 : n.blockSize(),
                    uuid,
                    n.readOnly() != null && n.readOnly(),
                    n.anaGroup() == null ? 0 : checkedAnaGroup(n.anaGroup()),
                    n.file() == null ? null : Path.of(n.file()),
                    n.preallocate() != null && n.preallocate());
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
    }

    private static int checkedAnaGroup(int group) {
        if (group < 1) {
            throw new IllegalArgumentException("anaGroup is 1.." + NamespaceConfig.MAX_ANA_GROUP + ": " + group);
        }
        return group;
    }

    private static long checkedSize(String text, String where) {
        try {
            return Sizes.parse(text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(where + ": " + e.getMessage());
        }
    }
}
