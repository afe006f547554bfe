package io.nvmeof.transport.rdma.disni.impl;

import com.ibm.disni.verbs.impl.NatIbvQP;
import java.io.IOException;

/**
 * A QP made on a shared receive queue by libnvmeofrdma ({@link NativeCm#createQpOnSrq}), in DiSNI's own QP type so
 * that DiSNI's prepared send calls ({@link DisniSendCall}) post on it as on the QPs DiSNI makes: they read only its
 * pointer and whether it is open. DiSNI's dispatcher in a {@link NatIbvQP} only serves {@code getQp_num}, which is
 * answered here from the qp_num read at creation, so none is given. Destroyed with {@link NativeCm#destroyQp}.
 */
final class DisniSrqQueuePair extends NatIbvQP {
    DisniSrqQueuePair(long qp) throws IOException {
        super(qp, null);
        this.qp_num = NativeCm.qpNumber(qp);
    }
}
