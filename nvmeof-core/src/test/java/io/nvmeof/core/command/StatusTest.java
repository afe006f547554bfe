package io.nvmeof.core.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Status wire values, nvmeof-protocol.md §1.2 and the table of nvmeof-protocol.md §1.4. */
class StatusTest {
    @ParameterizedTest(name = "{0} = 0x{1}")
    @CsvSource({
        "SUCCESS, 0000",
        "INVALID_OPCODE, 0002",
        "INVALID_FIELD, 0004",
        "COMMAND_ID_CONFLICT, 0006",
        "DATA_TRANSFER_ERROR, 0008",
        "INTERNAL_ERROR, 000C",
        "ABORT_REQUESTED, 000E",
        "ABORTED_SQ_DELETION, 0010",
        "INVALID_NAMESPACE, 0016",
        "COMMAND_SEQUENCE_ERROR, 0018",
        "INVALID_SGL_LAST_SEGMENT, 001A",
        "INVALID_NUMBER_OF_SGL_DESCRIPTORS, 001C",
        "DATA_SGL_LENGTH_INVALID, 001E",
        "METADATA_SGL_LENGTH_INVALID, 0020",
        "SGL_DESCRIPTOR_TYPE_INVALID, 0022",
        "SGL_OFFSET_INVALID, 002C",
        "KEEP_ALIVE_EXPIRED, 0032",
        "KEEP_ALIVE_INVALID, 0034",
        "NAMESPACE_WRITE_PROTECTED, 0040",
        "COMMAND_INTERRUPTED, 0042",
        "TRANSIENT_TRANSPORT_ERROR, 0044",
        "LBA_OUT_OF_RANGE, 0100",
        "CAPACITY_EXCEEDED, 0102",
        "NAMESPACE_NOT_READY, 0104",
        "INVALID_QUEUE_IDENTIFIER, 0202",
        "INVALID_QUEUE_SIZE, 0204",
        "ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED, 020A",
        "INVALID_LOG_PAGE, 0212",
        "FEATURE_NOT_SAVEABLE, 021A",
        "CONNECT_INCOMPATIBLE_FORMAT, 0300",
        "CONNECT_CONTROLLER_BUSY, 0302",
        "CONNECT_INVALID_PARAMETERS, 0304",
        "CONNECT_RESTART_DISCOVERY, 0306",
        "CONNECT_INVALID_HOST, 0308",
        "INVALID_QUEUE_TYPE, 030A",
        "DISCOVER_RESTART, 0320",
        "AUTHENTICATION_REQUIRED, 0322",
        "WRITE_FAULT, 0500",
        "UNRECOVERED_READ_ERROR, 0502",
        "COMPARE_FAILURE, 050A",
        "ACCESS_DENIED, 050C",
        "INTERNAL_PATH_ERROR, 0600",
    })
    void wireValueMatchesReferenceTable(String constant, String hex) throws ReflectiveOperationException {
        int value = Status.class.getField(constant).getInt(null);
        assertEquals(Integer.parseInt(hex, 16), value, constant);
        assertFalse(Status.isDnr(value), constant + " constants carry no DNR");
    }

    @Test
    void dnrValuesFromTheTable() {
        assertEquals(0x8304, Status.dnr(Status.CONNECT_INVALID_PARAMETERS));
        assertEquals(0x8308, Status.dnr(Status.CONNECT_INVALID_HOST));
        assertEquals(0x850A, Status.dnr(Status.COMPARE_FAILURE));
        assertEquals(0x8100, Status.dnr(Status.LBA_OUT_OF_RANGE));
        assertEquals(0x8002, Status.dnr(Status.INVALID_OPCODE));
        assertEquals(0x8004, Status.dnr(Status.INVALID_FIELD));
        assertEquals(0x801E, Status.dnr(Status.DATA_SGL_LENGTH_INVALID));
        assertEquals(0x8018, Status.dnr(Status.COMMAND_SEQUENCE_ERROR));
        assertEquals(0x820A, Status.dnr(Status.ASYNC_EVENT_REQUEST_LIMIT_EXCEEDED));
    }

    @Test
    void linuxConstantConversion() {
        // nvmeof-protocol.md §1.2: the wire value is the Linux NVME_SC_* value shifted left by one; 0x4182 → 0x8304.
        assertEquals(0x4182 << 1, Status.dnr(Status.CONNECT_INVALID_PARAMETERS));
    }

    @Test
    void fieldHelpers() {
        int s = 0x8304;
        assertEquals(Status.SCT_COMMAND_SPECIFIC, Status.sct(s));
        assertEquals(0x82, Status.sc(s));
        assertTrue(Status.isDnr(s));
        assertFalse(Status.isMore(s));
        assertFalse(Status.isSuccess(s));

        assertEquals(Status.SCT_MEDIA, Status.sct(0x850A));
        assertEquals(0x85, Status.sc(0x850A));
        assertEquals(Status.SCT_GENERIC, Status.sct(0x8100));
        assertEquals(0x80, Status.sc(0x8100));
        assertEquals(Status.SCT_PATH, Status.sct(Status.INTERNAL_PATH_ERROR));

        assertEquals(0x0304, Status.of(1, 0x82));
        assertEquals(0x0E00 | 0x1FE, Status.of(7, 0xFF), "SCT 3 bits, SC 8 bits");
        assertEquals(0x0002, Status.of(8, 0x101), "out-of-range inputs are masked, not spilled into other bits");
    }

    @Test
    void moreAndPhaseBitsDoNotChangeTheCode() {
        int withMoreAndPhase = Status.CONNECT_INVALID_HOST | Status.MORE_BIT | 1;
        assertEquals(0x4000, Status.MORE_BIT);
        assertEquals(0x8000, Status.DNR_BIT);
        assertTrue(Status.isMore(withMoreAndPhase));
        assertTrue(Status.is(withMoreAndPhase, Status.CONNECT_INVALID_HOST));
        assertTrue(Status.is(Status.dnr(Status.CONNECT_INVALID_HOST), Status.CONNECT_INVALID_HOST));
        assertFalse(Status.is(Status.CONNECT_INVALID_PARAMETERS, Status.CONNECT_INVALID_HOST));
        assertTrue(Status.isSuccess(0x0001), "phase bit only");
        assertTrue(Status.isSuccess(Status.DNR_BIT | Status.MORE_BIT));
        assertFalse(Status.isSuccess(0x0002));
        assertFalse(Status.isSuccess(0x0200), "SCT 1, SC 0 is not success");
    }

    @Test
    void names() {
        assertEquals("Successful Completion", Status.name(Status.SUCCESS));
        assertEquals("Connect Invalid Parameters", Status.name(0x8304));
        assertEquals("Connect Invalid Host", Status.name(0x8308));
        assertEquals("Compare Failure", Status.name(0x850A));
        assertEquals("LBA Out of Range", Status.name(0x8100));
        assertEquals("Invalid Command Opcode", Status.name(0x8002));
        assertEquals("Internal Path Error", Status.name(0x0600));
        assertEquals("Unknown status", Status.name(Status.of(0, 0x7F)));
        assertEquals("Unknown status", Status.name(Status.of(7, 0x01)));
    }

    @Test
    void toStringShowsCodesAndFlags() {
        assertEquals("Connect Invalid Parameters (sct=0x1 sc=0x82 dnr)", Status.toString(0x8304));
        assertEquals("LBA Out of Range (sct=0x0 sc=0x80 dnr more)", Status.toString(0xC100));
        assertEquals("Successful Completion (sct=0x0 sc=0x00)", Status.toString(0));
    }
}
