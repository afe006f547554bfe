package io.nvmeof.initiator;

/**
 * The life of a {@link Controller}, with the Linux host's state names (nvme_ctrl_state). Reported to
 * {@link ControllerStateListener}s in {@link ControllerStateEvent}s.
 *
 * <pre>
 *   CONNECTING ──bring-up done──► LIVE ──connection lost / keep-alive / command timeout──► RECONNECTING
 *       │                          ▲                                                        │   │
 *       │                          └──────────────── reconnected, namespaces the same ───────┘   │
 *       └─bring-up failed─► FAILED ◄── ctrl_loss_tmo passed (or reconnect off: ctrl_loss_tmo=0) ─┘
 *   any state ──close()──► DELETED
 * </pre>
 */
public enum ControllerState {
    /** The first bring-up is running ({@link Nvme#connect}); no command of the caller's yet. */
    CONNECTING,
    /** Every queue is connected; commands go out. */
    LIVE,
    /**
     * The connection was lost; the queues are torn down and the controller is connected again every
     * {@code reconnect_delay}. Commands wait (and are retried once it is live again) until {@code fast_io_fail_tmo},
     * then fail with {@link NvmeFastIoFailException}.
     */
    RECONNECTING,
    /**
     * Lost for good: the first bring-up failed, {@code ctrl_loss_tmo} passed while reconnecting, reconnecting is off
     * ({@code ctrl_loss_tmo=0}), Every command fails with
     * {@link NvmeControllerLostException} (or the failure, when reconnecting is off); {@link Controller#failure()} says
     * why. Final but for {@link #DELETED}.
     */
    FAILED,
    /** {@link Controller#close()} was called. Final. */
    DELETED
}
