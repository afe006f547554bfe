package io.nvmeof.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.nvmeof.core.command.Status;
import java.util.List;
import org.junit.jupiter.api.Test;

class ComparatorTest {
    private final Pick pick = new Pick(1);
    private final AdminGen admin = new AdminGen(pick);
    private final FabricsGen fabrics = new FabricsGen(pick, Geometry.DEFAULT);

    private static Cmd identify(int cns) {
        return Sqe.admin(0x06, "identify")
                .cdw(10, cns)
                .sgl(0x5A, 0, 4096)
                .readLength(4096)
                .build();
    }

    @Test
    void identityFieldsOfIdentifyControllerAreMaskedAndOthersNamed() {
        byte[] a = new byte[4096];
        byte[] b = new byte[4096];
        b[4] = 'X'; // SN
        b[78] = 7; // CNTLID
        b[800] = 'q'; // SUBNQN
        b[3500] = 1; // vendor specific
        List<Difference> none = Comparator.compare(0, 0, identify(1), ok(a), ok(b), false);
        assertEquals(List.of(), none);
        b[256] = 0x04; // OACS
        b[2100] = 1; // PSD0 is compared
        List<Difference> d = Comparator.compare(0, 0, identify(1), ok(a), ok(b), false);
        assertEquals(
                List.of("data:OACS", "data:@0x0830"),
                d.stream().map(Difference::what).toList());
        assertEquals("0000", d.get(0).ours());
        assertEquals("0400", d.get(0).theirs());
    }

    @Test
    void namespaceDescriptorValuesAreMaskedButTheirTypesAndLengthsAreNot() {
        byte[] a = new byte[4096];
        byte[] b = new byte[4096];
        a[0] = b[0] = 0x03; // UUID
        a[1] = b[1] = 16;
        a[4] = 1;
        b[4] = 2;
        assertEquals(List.of(), Comparator.compare(0, 0, identify(3), ok(a), ok(b), false));
        b[1] = 8;
        assertEquals(
                1, Comparator.compare(0, 0, identify(3), ok(a), ok(b), false).size());
    }

    @Test
    void statusComparesSctScMoreDnrButNotCrd() {
        Cmd c = admin.keepAlive();
        int invalid = Status.dnr(Status.INVALID_FIELD);
        assertEquals(List.of(), Comparator.compare(0, 0, c, st(invalid), st(invalid | 0x1000), false)); // CRD
        List<Difference> d = Comparator.compare(0, 0, c, st(Status.INVALID_FIELD), st(invalid), false);
        assertEquals("status", d.get(0).what());
        assertEquals("0/02", d.get(0).ours());
        assertEquals("0/02+DNR", d.get(0).theirs());
        List<Difference> m = Comparator.compare(0, 0, c, st(invalid), st(invalid | Status.MORE_BIT), false);
        assertEquals(List.of("more"), m.stream().map(Difference::what).toList());
        assertEquals("-", m.get(0).ours());
        assertEquals("M", m.get(0).theirs());
    }

    @Test
    void connectCntlidIsMaskedOnSuccessOnly() {
        Cmd c = fabrics.adminConnect();
        assertEquals(List.of(), Comparator.compare(0, 0, c, dw0(0, 1), dw0(0, 2), false));
        int bad = Status.CONNECT_INVALID_PARAMETERS;
        assertEquals(
                1,
                Comparator.compare(0, 0, c, dw0(bad, 0x00010000), dw0(bad, 0x00010100), false)
                        .size());
    }

    @Test
    void fateDifferencesComeAloneAndStartACascade() {
        Cmd c = admin.keepAlive();
        Outcome closed = Outcome.failed(Outcome.Fate.CLOSED, 0);
        List<Difference> d = Comparator.compare(0, 0, c, st(0), closed, false);
        assertEquals(1, d.size());
        assertEquals("fate", d.get(0).what());
        assertEquals("CLOSED", d.get(0).theirs());
        assertEquals(
                "TERMINATED(fes=01)", Outcome.failed(Outcome.Fate.TERMINATED, 1).fateText());
        Sequence s = new Sequence(0, "TEST", List.of(Sequence.Step.of(c), Sequence.Step.of(c)), false);
        List<Difference> both = Comparator.compare(s, List.of(st(0), st(0)), List.of(st(2), st(2)));
        assertEquals(
                List.of(false, true), both.stream().map(Difference::cascade).toList());
    }

    @Test
    void aDifferencePrintsAsARuleThatMatchesIt() {
        Cmd c = admin.keepAlive();
        Difference d = Comparator.compare(3, 4, c, st(0), st(Status.dnr(Status.INVALID_FIELD)), false)
                .get(0);
        String rule = d.toRule();
        assertTrue(rule.startsWith("queue=admin opc=18 what=status ours=0/00 theirs=0/02+DNR | to fix: ?"), rule);
        assertTrue(AllowList.Rule.parse(rule).matches(d.keys()));
    }

    private static Outcome ok(byte[] data) {
        return Outcome.completed(0, 0, 0, data);
    }

    private static Outcome st(int status) {
        return Outcome.completed(status, 0, 0, new byte[0]);
    }

    private static Outcome dw0(int status, int dw0) {
        return Outcome.completed(status, dw0, 0, new byte[0]);
    }
}
