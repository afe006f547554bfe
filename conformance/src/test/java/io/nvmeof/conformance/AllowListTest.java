package io.nvmeof.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class AllowListTest {
    private static Difference diff(String opc, String what, String ours, String theirs, String label) {
        Map<String, String> keys = Map.of("queue", "admin", "opc", opc, "fid", "0e", "label", label);
        return new Difference(1, 2, keys, what, ours, theirs, false);
    }

    @Test
    void rulesMatchByKeysWithGlobsAndQuotedValues() {
        AllowList list = AllowList.parse(List.of(
                "# comment",
                "",
                "opc=0a fid=0e what=status ours=0/02+DNR theirs=* | we do not keep a timestamp",
                "label=\"get-features fid=0e *\" what=dw0 | reason two"));
        assertEquals(2, list.rules().size());
        AllowList.Rule r = list.match(diff("0a", "status", "0/02+dnr", "0/00", "x"));
        assertNotNull(r);
        assertEquals("we do not keep a timestamp", r.reason());
        assertEquals(3, r.line());
        assertNull(list.match(diff("0a", "status", "0/01", "0/00", "x")));
        assertNull(list.match(diff("09", "status", "0/02+DNR", "0/00", "x")), "opc must match");
        assertNotNull(list.match(diff("09", "dw0", "1", "2", "get-features fid=0e sel=0")));
        assertEquals(1, list.uses(list.rules().get(0)));
    }

    @Test
    void bracketsMatchOneOfTheirCharacters() {
        AllowList list = AllowList.parse(List.of("opc=0[ab] | either"));
        assertNotNull(list.match(diff("0a", "status", "a", "b", "x")));
        assertNotNull(list.match(diff("0b", "status", "a", "b", "x")));
        assertNull(list.match(diff("0c", "status", "a", "b", "x")));
    }

    @Test
    void aRuleNamingAKeyTheDifferenceLacksDoesNotMatch() {
        AllowList list = AllowList.parse(List.of("cns=01 | identify only"));
        assertNull(list.match(diff("0a", "status", "a", "b", "x")));
    }

    @Test
    void malformedLinesAreRefusedWithTheirLineNumber() {
        assertThrows(IllegalArgumentException.class, () -> AllowList.parse(List.of("opc=06")));
        assertThrows(IllegalArgumentException.class, () -> AllowList.parse(List.of("opc=06 |")));
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> AllowList.parse(List.of("#", "opc=06 garbage | x")));
        assertTrue(e.getMessage().contains("line 2"), e.getMessage());
    }

    @Test
    void theRepositoryAllowListParses() throws Exception {
        Path file = Path.of(System.getProperty("conformance.allowList", "allow-list.txt"));
        AllowList list = AllowList.read(file);
        for (AllowList.Rule r : list.rules()) {
            assertTrue(!r.reason().isBlank(), "rule without reason at line " + r.line());
        }
    }
}
