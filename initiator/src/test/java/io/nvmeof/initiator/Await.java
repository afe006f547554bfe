package io.nvmeof.initiator;

import java.util.function.BooleanSupplier;

/**
 * Polls a condition until it holds or a deadline passes (then an {@link AssertionError} naming what was awaited), for
 * tests that wait on another thread's work (a reconnect, a target's timer) instead of sleeping a fixed time.
 */
final class Await {
    private Await() {}

    static void waitFor(String what, long millis, BooleanSupplier condition) throws InterruptedException {
        long end = System.currentTimeMillis() + millis;
        while (!condition.getAsBoolean()) {
            if (System.currentTimeMillis() > end) {
                throw new AssertionError("not within " + millis + " ms: " + what);
            }
            Thread.sleep(10);
        }
    }
}
