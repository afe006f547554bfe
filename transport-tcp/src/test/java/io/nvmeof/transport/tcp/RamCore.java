package io.nvmeof.transport.tcp;

import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import io.nvmeof.core.spi.QueueChannel;
import io.nvmeof.core.spi.QueueHandler;
import io.nvmeof.core.spi.TargetRequest;
import java.nio.ByteBuffer;

/**
 * A tiny controller for loopback tests of the host side, one per connection, over one RAM "namespace" of 512-byte
 * blocks shared by all connections (callers use disjoint ranges). Connect: fetches its data, {@code connected(qid,
 * sqsize, CATTR bit 2)}, DW0 = 1. Write (0x01): data → RAM at SLBA × 512. Read (0x02): RAM at SLBA × 512, sent without a
 * copy. {@link #HOLD_OPCODE}: never completed. Anything else: completed at once.
 */
final class RamCore implements QueueHandler, DataReceiver {
    static final int HOLD_OPCODE = 0xC0;
    static final int BLOCK = 512;

    private final QueueChannel channel;
    private final ByteBuffer ram;

    RamCore(QueueChannel channel, ByteBuffer ram) {
        this.channel = channel;
        this.ram = ram;
    }

    @Override
    public void onCommand(TargetRequest r) {
        if (r.transportStatus() != 0) {
            r.response().status(r.transportStatus());
            r.complete();
            return;
        }
        int opc = r.command().opcode();
        if (opc == 0x7F || opc == 0x01) {
            r.receiveData(this);
        } else if (opc == 0x02) {
            r.addData(ram, (int) r.command().slba() * BLOCK, r.dataLength(), DataRelease.NONE);
            r.complete();
        } else if (opc != HOLD_OPCODE) {
            r.complete();
        }
    }

    @Override
    public void onData(TargetRequest r, int status) {
        if (status != 0) {
            r.response().status(status);
            r.complete();
            return;
        }
        if (r.command().opcode() == 0x7F) {
            channel.connected(
                    r.command().connectQid(),
                    r.command().connectSqsize(),
                    (r.command().connectCattr() & 0x04) != 0);
            r.response().dw0(1);
        } else {
            ram.put((int) r.command().slba() * BLOCK, r.data(), 0, r.dataLength());
        }
        r.complete();
    }

    @Override
    public void onClose(Throwable cause) {}
}
