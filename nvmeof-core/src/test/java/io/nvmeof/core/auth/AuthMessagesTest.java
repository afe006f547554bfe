package io.nvmeof.core.auth;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The message layouts of include/linux/nvme.h (nvmf_auth_dhchap_*_data), byte for byte, and their checks. */
class AuthMessagesTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void negotiateAsTheLinuxHostSendsIt() throws Exception {
        byte[] m = NegotiateMessage.linuxOrder(0x0203).encode();
        assertEquals(72, m.length);
        // type 00, id 00, rsvd, T_ID 0203 LE, SC_C 0, NAPD 1, AUTHID 1, rsvd, HALEN 3, DHLEN 6, hashes 1 2 3 at 12,
        // groups 0..5 at 42
        assertEquals("0000000003020001" + "01000306010203", HEX.formatHex(m, 0, 15));
        assertEquals("000102030405", HEX.formatHex(m, 42, 48));
        NegotiateMessage n = NegotiateMessage.decode(m);
        assertEquals(0x0203, n.tid());
        assertEquals(List.of(DhchapHash.values()), n.hashes());
        assertEquals(List.of(DhGroup.values()), n.groups());
        m[7] = 2;
        AuthMessageException e = assertThrows(AuthMessageException.class, () -> NegotiateMessage.decode(m));
        assertEquals(AuthProtocol.HASH_UNUSABLE, e.explanation());
        assertEquals(
                AuthProtocol.INCORRECT_PAYLOAD,
                assertThrows(
                                AuthMessageException.class,
                                () -> NegotiateMessage.decode(java.util.Arrays.copyOf(
                                        NegotiateMessage.linuxOrder(1).encode(), 20)))
                        .explanation());
    }

    @Test
    void challengeRoundTripAndChecks() throws Exception {
        byte[] c1 = new byte[48];
        c1[0] = 9;
        byte[] dh = new byte[DhGroup.FFDHE3072.valueLength()];
        dh[5] = 1;
        byte[] m = new ChallengeMessage(7, DhchapHash.SHA_384, DhGroup.FFDHE3072, 0xCAFEBABE, c1, dh).encode();
        assertEquals(16 + 48 + 384, m.length);
        assertEquals("0101000007003000" + "0202" + "8001" + "bebafeca" + "09", HEX.formatHex(m, 0, 17));
        ChallengeMessage c = ChallengeMessage.decode(m);
        assertEquals(DhchapHash.SHA_384, c.hash());
        assertEquals(DhGroup.FFDHE3072, c.group());
        assertEquals(0xCAFEBABE, c.seqnum());
        assertArrayEquals(c1, c.challenge());
        assertArrayEquals(dh, c.dhValue());
        m[6] = 32; // HL not SHA-384's
        assertEquals(
                AuthProtocol.HASH_UNUSABLE,
                assertThrows(AuthMessageException.class, () -> ChallengeMessage.decode(m))
                        .explanation());
        byte[] n = new ChallengeMessage(7, DhchapHash.SHA_256, DhGroup.NULL, 1, new byte[32], new byte[0]).encode();
        n[10] = 4; // a DH value with the null group
        assertEquals(
                AuthProtocol.INCORRECT_PAYLOAD,
                assertThrows(AuthMessageException.class, () -> ChallengeMessage.decode(n))
                        .explanation());
    }

    @Test
    void replySuccessAndFailureLayouts() throws Exception {
        byte[] r = new byte[32];
        r[0] = 1;
        byte[] c2 = new byte[32];
        c2[0] = 2;
        byte[] m = new ReplyMessage(5, r, true, 0x11223344, c2, new byte[0]).encode();
        assertEquals(16 + 64, m.length);
        assertEquals("0102000005002000" + "0100" + "0000" + "44332211" + "01", HEX.formatHex(m, 0, 17));
        assertEquals(2, m[48]);
        ReplyMessage back = ReplyMessage.decode(m, 32);
        assertTrue(back.challengeValid());
        assertArrayEquals(c2, back.challenge());
        assertThrows(AuthMessageException.class, () -> ReplyMessage.decode(m, 48));

        byte[] s1 = new Success1Message(5, 32, r).encode();
        assertEquals("0103000005002000" + "01", HEX.formatHex(s1, 0, 9));
        assertEquals(48, s1.length);
        assertNull(Success1Message.decode(new Success1Message(5, 32, null).encode())
                .response());

        assertEquals("01040000050000000000000000000000", HEX.formatHex(new Success2Message(5).encode()));
        byte[] f1 = new FailureMessage(5, true, AuthProtocol.FAILED).encode();
        assertEquals("00f1000005000101", HEX.formatHex(f1));
        assertTrue(FailureMessage.is(f1));
        assertFalse(FailureMessage.is(s1));
        assertEquals(
                "00f0000005000105",
                HEX.formatHex(new FailureMessage(5, false, AuthProtocol.DHGROUP_UNUSABLE).encode()));
        assertEquals(AuthProtocol.FAILED, FailureMessage.decode(f1).explanation());
        assertEquals(
                AuthProtocol.INCORRECT_MESSAGE,
                assertThrows(AuthMessageException.class, () -> Success1Message.decode(f1))
                        .explanation());
    }
}
