package io.nvmeof.transport.tcp;

/**
 * The command slots of one NVMe/TCP target connection: created lazily up to a limit, then only recycled through an
 * int stack, so the command path allocates nothing. CID-independent; a slot's index is its R2T TTAG
 * (nvmeof-protocol.md §5.10). Owned by the connection's event loop.
 */
final class TargetSlots {
    private final NvmeTcpTargetHandler connection;
    private TcpTargetRequest[] slots = new TcpTargetRequest[16];
    private int count;
    private int[] free = new int[16];
    private int freeTop;
    private int limit;

    TargetSlots(NvmeTcpTargetHandler connection, int limit) {
        this.connection = connection;
        this.limit = limit;
    }

    /** A free slot, or null when {@link #limit()} slots are all in use. */
    TcpTargetRequest take() {
        if (freeTop > 0) {
            return slots[free[--freeTop]];
        }
        if (count >= limit) {
            return null;
        }
        if (count == slots.length) {
            TcpTargetRequest[] bigger = new TcpTargetRequest[count * 2];
            System.arraycopy(slots, 0, bigger, 0, count);
            slots = bigger;
            int[] biggerFree = new int[count * 2];
            System.arraycopy(free, 0, biggerFree, 0, freeTop);
            free = biggerFree;
        }
        TcpTargetRequest r = new TcpTargetRequest(count, connection);
        slots[count++] = r;
        return r;
    }

    /** Puts a recycled slot back on the free stack. */
    void giveBack(TcpTargetRequest r) {
        free[freeTop++] = r.index;
    }

    /** The slot with TTAG {@code ttag} if it awaits H2CData, else null. */
    TcpTargetRequest awaitingData(int ttag) {
        if (ttag >= count || slots[ttag].state() != TcpTargetRequest.State.RECEIVING_DATA) {
            return null;
        }
        return slots[ttag];
    }

    /** The most slots this connection may have. */
    int limit() {
        return limit;
    }

    /** After Connect: nvmet keeps 2 x queue size slots (nvmeof-protocol.md §5.12); never below what exists already. */
    void limitForQueue(int sqsize) {
        limit = Math.max(count, 2 * (sqsize + 1));
    }

    /** Slots created so far. */
    int count() {
        return count;
    }

    /**
     * The queue closed: every slot still in use drops what it holds (each buffer released once) and stays out of
     * the free stack, so a late {@code complete()} only recycles again.
     */
    void dropAll(DataBufferPool dataPool) {
        for (int i = 0; i < count; i++) {
            TcpTargetRequest r = slots[i];
            if (r.state() != TcpTargetRequest.State.FREE) {
                r.recycle(dataPool);
                r.state(TcpTargetRequest.State.WITH_CORE);
            }
        }
    }
}
