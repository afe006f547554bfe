package io.nvmeof.initiator.rdma;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.nvmeof.core.auth.AuthProtocol;
import io.nvmeof.core.auth.DhGroup;
import io.nvmeof.core.auth.DhchapHash;
import io.nvmeof.core.auth.DhchapSecret;
import io.nvmeof.initiator.Controller;
import io.nvmeof.initiator.Namespace;
import io.nvmeof.initiator.Nvme;
import io.nvmeof.initiator.NvmeAuthenticationException;
import io.nvmeof.target.config.HostAuth;
import io.nvmeof.testsupport.NvmeofTargetExtension;
import java.net.URLEncoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * DH-HMAC-CHAP over NVMe/RDMA (the software RNIC, both sides in this JVM): the exchange lives in the core, so it works
 * on every transport; bidirectional with ffdhe2048, I/O verified, and a wrong key refused.
 */
class RdmaDhchapTest {
    static final String HOST = "nqn.2014-08.org.nvmexpress:uuid:0a0b0c0d-1111-2222-3333-44445555aaaa";

    @RegisterExtension
    static NvmeofTargetExtension target =
            NvmeofTargetExtension.builder().transport("rdma").namespace("16M").build();

    private static DhchapSecret secret() {
        byte[] raw = new byte[32];
        new SecureRandom().nextBytes(raw);
        return DhchapSecret.of(raw, DhchapHash.SHA_256);
    }

    private static String uri(DhchapSecret host, DhchapSecret ctrl) {
        return target.uri("queues=1&hostnqn=" + HOST + "&dhchap_secret="
                + URLEncoder.encode(host.encode(), StandardCharsets.UTF_8) + "&dhchap_ctrl_secret="
                + URLEncoder.encode(ctrl.encode(), StandardCharsets.UTF_8));
    }

    @Test
    void authenticatesOverRdma() throws Exception {
        DhchapSecret host = secret();
        DhchapSecret ctrl = secret();
        target.target()
                .setHostAuth(
                        target.nqn(),
                        HOST,
                        new HostAuth(HOST, host, ctrl, List.of(DhchapHash.SHA_384), List.of(DhGroup.FFDHE2048)));
        try (Controller c = Nvme.connect(uri(host, ctrl))) {
            Namespace ns = c.namespace();
            ByteBuffer w = c.allocateBuffer(8192);
            for (int i = 0; i < 8192; i++) {
                w.put(i, (byte) (i * 7));
            }
            ns.write(0, 8192 / ns.blockSize(), w);
            ByteBuffer r = c.allocateBuffer(8192);
            ns.read(0, 8192 / ns.blockSize(), r);
            byte[] a = new byte[8192];
            byte[] b = new byte[8192];
            w.get(0, a);
            r.get(0, b);
            assertArrayEquals(a, b);
        }
        NvmeAuthenticationException e = assertThrows(
                NvmeAuthenticationException.class,
                () -> Nvme.connect(uri(secret(), ctrl)).close());
        assertEquals(AuthProtocol.FAILED, e.explanation());
    }
}
