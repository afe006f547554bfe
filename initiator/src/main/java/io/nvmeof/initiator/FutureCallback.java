package io.nvmeof.initiator;

import java.util.concurrent.CompletableFuture;

/**
 * The callback behind the future forms ({@code readAsync} and the rest): completes the {@code CompletableFuture<Void>}
 * passed as the attachment, so those forms reuse the callback path. Stateless; one shared {@link #INSTANCE}.
 */
public final class FutureCallback implements IoCallback {
    /** The one instance. */
    public static final IoCallback INSTANCE = new FutureCallback();

    private FutureCallback() {}

    @Override
    @SuppressWarnings("unchecked")
    public void completed(Object attachment) {
        ((CompletableFuture<Void>) attachment).complete(null);
    }

    @Override
    @SuppressWarnings("unchecked")
    public void failed(NvmeException error, Object attachment) {
        ((CompletableFuture<Void>) attachment).completeExceptionally(error);
    }
}
