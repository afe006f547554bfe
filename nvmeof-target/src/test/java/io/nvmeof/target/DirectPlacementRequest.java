package io.nvmeof.target;

import io.nvmeof.core.spi.DataReceiver;
import io.nvmeof.core.spi.DataRelease;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@link FakeRequest} of a transport that places write data directly ({@code directDataPlacement()}): the core names
 * the destinations with {@code addDestination} and the "transfer" copies the host's bytes straight there, then releases
 * each destination once, as the RDMA transport does after its RDMA Reads.
 */
public class DirectPlacementRequest extends FakeRequest {
    /** One destination named by the core. */
    public record Destination(ByteBuffer memory, int offset, int length, DataRelease release) {}

    private final byte[] hostBytes;
    public final List<Destination> destinations = new ArrayList<>();
    private boolean released;

    public DirectPlacementRequest(byte[] hostBytes) {
        this.hostBytes = hostBytes;
        dataLength(hostBytes.length);
        sqe().sgl().setKeyed(0x40, 0x1000, hostBytes.length, 0x1234);
    }

    @Override
    public boolean directDataPlacement() {
        return true;
    }

    @Override
    public void addDestination(ByteBuffer destination, int offset, int length, DataRelease release) {
        destinations.add(new Destination(destination, offset, length, release));
    }

    @Override
    protected void transferData(DataReceiver receiver) {
        int at = 0;
        for (Destination d : destinations) {
            d.memory().put(d.offset(), hostBytes, at, d.length());
            at += d.length();
        }
        if (at != hostBytes.length) {
            throw new AssertionError("destinations cover " + at + " of " + hostBytes.length + " bytes");
        }
        releaseDestinations();
        receiver.onData(this, 0);
    }

    @Override
    public ByteBuffer data() {
        throw new AssertionError("data() used although the data was placed directly");
    }

    @Override
    protected void sendResponse() {
        releaseDestinations();
        super.sendResponse();
    }

    private void releaseDestinations() {
        if (!released) {
            released = true;
            for (Destination d : destinations) {
                d.release().release();
            }
        }
    }
}
