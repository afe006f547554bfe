package io.nvmeof.core.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** One idle policy for every transport: the window from the property (and its deprecated TCP alias), busy never sleeps. */
class IdlePolicyTest {
    private static Properties props(String... keyValues) {
        Properties p = new Properties();
        for (int i = 0; i < keyValues.length; i += 2) {
            p.setProperty(keyValues[i], keyValues[i + 1]);
        }
        return p;
    }

    @Test
    void theWindowIsReadFromTheProperty() {
        assertEquals(TimeUnit.MICROSECONDS.toNanos(200), IdlePolicy.spinNanos(props()), "default 200 µs");
        assertEquals(
                TimeUnit.MICROSECONDS.toNanos(75), IdlePolicy.spinNanos(props(IdlePolicy.SPIN_MICROS_PROPERTY, "75")));
        assertEquals(0, IdlePolicy.spinNanos(props(IdlePolicy.SPIN_MICROS_PROPERTY, "0")), "0: sleep at once");
        assertEquals(0, IdlePolicy.spinNanos(props(IdlePolicy.SPIN_MICROS_PROPERTY, "-5")));
        assertEquals(
                TimeUnit.MICROSECONDS.toNanos(200),
                IdlePolicy.spinNanos(props(IdlePolicy.SPIN_MICROS_PROPERTY, "fast")),
                "not a number: the default, as Long.getLong");
    }

    @Test
    @SuppressWarnings("deprecation")
    void theTcpNameIsAnAlias() {
        assertEquals(
                TimeUnit.MICROSECONDS.toNanos(30),
                IdlePolicy.spinNanos(props(IdlePolicy.TCP_SPIN_MICROS_PROPERTY, "30")),
                "io.nvmeof.tcp.spinMicros still works");
        assertEquals(
                TimeUnit.MICROSECONDS.toNanos(40),
                IdlePolicy.spinNanos(
                        props(IdlePolicy.TCP_SPIN_MICROS_PROPERTY, "30", IdlePolicy.SPIN_MICROS_PROPERTY, "40")),
                "the new name wins");
        assertEquals("io.nvmeof.tcp.spinMicros", IdlePolicy.TCP_SPIN_MICROS_PROPERTY);
        assertEquals("io.nvmeof.spinMicros", IdlePolicy.SPIN_MICROS_PROPERTY);
    }

    @Test
    void busyPollNeverSleeps() {
        IdlePolicy busy = IdlePolicy.of(new IoMode("auto", true));
        assertTrue(busy.busyPoll());
        assertFalse(busy.shouldSleep(0));
        assertFalse(busy.shouldSleep(TimeUnit.HOURS.toNanos(1)));
        assertFalse(busy.shouldSleep(Long.MAX_VALUE));
    }

    @Test
    void theDefaultModeSpinsForTheWindowThenSleeps() {
        IdlePolicy p = IdlePolicy.of(IoMode.DEFAULT);
        assertSame(p, IdlePolicy.of(false));
        assertFalse(p.busyPoll());
        assertEquals(IdlePolicy.spinNanos(System.getProperties()), p.spinNanos(), "this JVM's window");
        if (p.spinNanos() > 0) {
            assertFalse(p.shouldSleep(p.spinNanos() - 1), "still inside the window: spin");
        }
        assertTrue(p.shouldSleep(p.spinNanos()), "the window has passed: sleep");
    }
}
