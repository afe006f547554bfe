package io.nvmeof.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.target.NvmeTarget;
import java.net.Socket;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The extension with its defaults through {@code @ExtendWith}, and its parameter injection. */
@ExtendWith(NvmeofTargetExtension.class)
class NvmeofTargetExtensionTest {
    /** Any type with a static parse(String) can be injected with @TargetUri. */
    record Parsed(String text) {
        public static Parsed parse(String s) {
            return new Parsed(s);
        }
    }

    @Test
    void injectsTheUriAndTheTarget(
            @TargetUri String uri,
            URI asUri,
            @TargetUri(options = "queues=2") Parsed parsed,
            @TargetUri(discovery = true) String discovery,
            NvmeTarget target)
            throws Exception {
        assertTrue(uri.matches("nvme\\+tcp://127\\.0\\.0\\.1:\\d+/nqn\\.2024-01\\.io\\.nvmeof:test"), uri);
        assertEquals(uri, asUri.toString());
        assertEquals(uri + "?queues=2", parsed.text());
        assertEquals(uri.substring(0, uri.lastIndexOf('/')), discovery);
        assertNotNull(target.subsystem(NvmeofTargetExtension.DEFAULT_NQN));
        assertEquals(
                1L << 30,
                target.subsystem(NvmeofTargetExtension.DEFAULT_NQN)
                                .namespaces()
                                .get(0)
                                .blocks()
                        * 4096);
        int port = asUri.getPort();
        try (Socket s = new Socket("127.0.0.1", port)) {
            assertTrue(s.isConnected(), "the target listens on a real loopback port");
        }
    }

    @Test
    void startAndStopOutsideJUnit() throws Exception {
        NvmeofTargetExtension ext = NvmeofTargetExtension.builder()
                .transport("loop")
                .namespace("4M", 512)
                .build();
        ext.start();
        try {
            assertTrue(ext.uri().startsWith("nvme+loop://127.0.0.1:"));
            assertEquals(
                    512, ext.target().subsystem(ext.nqn()).namespaces().get(0).blockSize());
            assertEquals(0, LoopTransport.connectionCount(ext.port()));
        } finally {
            ext.stop();
        }
        assertFalse(ext.toString().isEmpty());
    }
}
