package io.nvmeof.transport.rdma;

import java.util.Arrays;

/**
 * The queues of a poll group by QP number, the key its shared CQ's work completions carry: an immutable open-addressing
 * table, replaced (copy on write) when a queue joins or leaves (cold path, under the group's lock), read by the group's
 * thread once per completion with no lock and no allocation.
 */
final class QueueTable {
    static final QueueTable EMPTY = new QueueTable(new int[16], new RdmaTargetQueue[16], 0);

    private final int[] keys;
    private final RdmaTargetQueue[] values;
    private final int size;

    private QueueTable(int[] keys, RdmaTargetQueue[] values, int size) {
        this.keys = keys;
        this.values = values;
        this.size = size;
    }

    /** The queue of QP {@code qpNumber}, or null (it closed, or it is not ours). */
    RdmaTargetQueue get(int qpNumber) {
        int mask = keys.length - 1;
        for (int i = mix(qpNumber) & mask; ; i = (i + 1) & mask) {
            RdmaTargetQueue v = values[i];
            if (v == null) {
                return null;
            }
            if (keys[i] == qpNumber) {
                return v;
            }
        }
    }

    int size() {
        return size;
    }

    /** A table with {@code queue} under {@code qpNumber} (replacing any entry with that number). */
    QueueTable with(int qpNumber, RdmaTargetQueue queue) {
        int cap = keys.length;
        while ((size + 1) * 2 > cap) {
            cap *= 2;
        }
        QueueTable t = new QueueTable(new int[cap], new RdmaTargetQueue[cap], 0);
        t = t.copyFrom(this, Integer.MIN_VALUE);
        return t.put(qpNumber, queue);
    }

    /** A table without {@code qpNumber}. */
    QueueTable without(int qpNumber) {
        if (get(qpNumber) == null) {
            return this;
        }
        QueueTable t = new QueueTable(new int[keys.length], new RdmaTargetQueue[keys.length], 0);
        return t.copyFrom(this, qpNumber);
    }

    private QueueTable copyFrom(QueueTable other, int skip) {
        QueueTable t = this;
        for (int i = 0; i < other.keys.length; i++) {
            if (other.values[i] != null && !(skip != Integer.MIN_VALUE && other.keys[i] == skip)) {
                t = t.put(other.keys[i], other.values[i]);
            }
        }
        return t;
    }

    /** Inserts into this (fresh, private) table's arrays; returns a table of the new size sharing them. */
    private QueueTable put(int qpNumber, RdmaTargetQueue queue) {
        int mask = keys.length - 1;
        for (int i = mix(qpNumber) & mask; ; i = (i + 1) & mask) {
            if (values[i] == null) {
                keys[i] = qpNumber;
                values[i] = queue;
                return new QueueTable(keys, values, size + 1);
            }
            if (keys[i] == qpNumber) {
                values[i] = queue;
                return this;
            }
        }
    }

    /** Every queue in the table (cold path). */
    RdmaTargetQueue[] queues() {
        return Arrays.stream(values).filter(v -> v != null).toArray(RdmaTargetQueue[]::new);
    }

    private static int mix(int k) {
        int h = k * 0x9E3779B9;
        return h ^ (h >>> 16);
    }
}
