package io.nvmeof.conformance;

import java.util.List;
import java.util.SplittableRandom;

/** The generator's seeded choices: one {@link SplittableRandom}, so a seed gives the same corpus on every machine. */
final class Pick {
    private final SplittableRandom random;

    Pick(long seed) {
        this.random = new SplittableRandom(seed);
    }

    boolean chance(int percent) {
        return random.nextInt(100) < percent;
    }

    int below(int n) {
        return random.nextInt(n);
    }

    int anyInt() {
        return random.nextInt();
    }

    long anyLong() {
        return random.nextLong();
    }

    int one(int... values) {
        return values[random.nextInt(values.length)];
    }

    long oneLong(long... values) {
        return values[random.nextInt(values.length)];
    }

    <T> T one(List<T> values) {
        return values.get(random.nextInt(values.size()));
    }

    /** NSID: mostly 1, else 0, an inactive one, the broadcast value FFFFFFFFh, FFFFFFFEh or anything. */
    int nsid() {
        return chance(60) ? 1 : one(0, 2, 0xFFFFFFFF, 0xFFFFFFFE, 0x400, anyInt());
    }

    /** Mostly 0; else one reserved bit or all ones in {@code mask}. */
    int reservedBits(int mask) {
        if (mask == 0 || chance(80)) {
            return 0;
        }
        if (chance(50)) {
            return mask;
        }
        int bit;
        do {
            bit = 1 << random.nextInt(32);
        } while ((bit & mask) == 0);
        return bit;
    }

    /** An SGL variant: mostly what a host sends. */
    SglVariant sgl() {
        if (chance(75)) {
            return SglVariant.NORMAL;
        }
        SglVariant[] all = SglVariant.values();
        return all[random.nextInt(all.length)];
    }

    byte[] bytes(int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) random.nextInt(256);
        }
        return b;
    }
}
