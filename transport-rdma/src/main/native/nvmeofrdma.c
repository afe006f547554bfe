/*
 * libnvmeofrdma: the JNI library behind the DiSNI verbs provider (io.nvmeof.transport.rdma.disni).
 *
 * Two JNI classes are served from this one library:
 *
 *  1. com.ibm.disni.verbs.impl.NativeDispatcher: the native methods DiSNI 2.1's Java side declares (DiSNI publishes
 *     no native library). Written from the Java signatures and the libibverbs/librdmacm headers: every "objId" is
 *     the C pointer of the object (rdma_cm_id, ibv_pd, ibv_cq, ...); work requests and completions arrive/leave as
 *     the exact C structs (ibv_send_wr, ibv_recv_wr, ibv_sge, ibv_wc) that DiSNI's Java code serializes, with sizes
 *     and offsets reported back to it at start-up (_getIbvSendWRSize etc.).
 *
 *  2. io.nvmeof.transport.rdma.disni.impl.NativeCm: what DiSNI cannot do: connect/accept with all rdma_conn_param
 *     fields and private data, reject with private data, the private data / conn params / status of the last CM event
 *     on an id, device count and device limits; shared receive queues (ibv_create_srq, ibv_post_srq_recv) and QPs
 *     created on one (DiSNI 2.1 has no SRQ verbs and its createQP passes no SRQ).
 *
 * CM events: _getCmEvent copies what the provider needs from the event (private data, status, conn params) into a
 * per-id record hung from rdma_cm_id->context and acks the event at once (DiSNI's _ackCmEvent only gets the event type,
 * so it cannot name the event to ack). Acking early also keeps rdma_destroy_id from blocking on an unacked event.
 * Once acked, the event's id may be destroyed by another thread and a new id may get its address before Java dispatches
 * the event; so every record carries a serial, and _getCmEvent leaves the serial of the id the event is dispatched by
 * for NativeCm.eventSerial (the provider compares it with the one it registered the id under).
 */
#include <jni.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <netinet/in.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define DISNI_JVERBS_VERSION 32 /* NativeDispatcher.JVERBS_VERSION in DiSNI 2.1 */
#define PDATA_MAX 256

/* What the last CM event on an id carried, and which id this is (serials are never reused; addresses are). */
struct id_info {
    uint64_t serial;
    int event;
    int status;
    int pdata_len;
    uint8_t responder_resources;
    uint8_t initiator_depth;
    uint8_t pdata[PDATA_MAX];
};

#define P(x) ((void *) (intptr_t) (x))
#define J(x) ((jlong) (intptr_t) (x))

static uint64_t last_serial;
/* The serial of the id the calling thread's last _getCmEvent is dispatched by (0: none); only the CM event thread. */
static __thread uint64_t event_serial;

static void throw_io(JNIEnv *env, const char *what, int err) {
    char msg[256];
    jclass cls = (*env)->FindClass(env, "java/io/IOException");
    if (cls == NULL) return;
    snprintf(msg, sizeof msg, "%s failed: %s (errno %d)", what, strerror(err), err);
    (*env)->ThrowNew(env, cls, msg);
}

static int wait_fd(int fd, int timeout_ms) {
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    int r;
    do {
        r = poll(&pfd, 1, timeout_ms);
    } while (r < 0 && errno == EINTR);
    return r; /* >0 ready, 0 timeout, <0 error */
}

static struct id_info *info_of(struct rdma_cm_id *id, int fresh) {
    struct id_info *info = id->context;
    if (info == NULL || fresh) {
        /* a connect request's new id inherits the listen id's context: never share it */
        info = calloc(1, sizeof *info);
        if (info != NULL) info->serial = __atomic_add_fetch(&last_serial, 1, __ATOMIC_RELAXED);
        id->context = info;
    }
    return info;
}

static uint64_t serial_of(struct rdma_cm_id *id) {
    struct id_info *info = id == NULL ? NULL : id->context;
    return info == NULL ? 0 : info->serial;
}

/* ======================================================================================= DiSNI NativeDispatcher */

#define ND(name) Java_com_ibm_disni_verbs_impl_NativeDispatcher__1##name

JNIEXPORT jint JNICALL ND(getVersion)(JNIEnv *env, jobject self) { return DISNI_JVERBS_VERSION; }
JNIEXPORT jint JNICALL ND(getSockAddrInSize)(JNIEnv *env, jobject self) { return sizeof(struct sockaddr_in); }
JNIEXPORT jint JNICALL ND(getIbvRecvWRSize)(JNIEnv *env, jobject self) { return sizeof(struct ibv_recv_wr); }
JNIEXPORT jint JNICALL ND(getIbvSendWRSize)(JNIEnv *env, jobject self) { return sizeof(struct ibv_send_wr); }
JNIEXPORT jint JNICALL ND(getIbvSgeSize)(JNIEnv *env, jobject self) { return sizeof(struct ibv_sge); }
JNIEXPORT jint JNICALL ND(getIbvWCSize)(JNIEnv *env, jobject self) { return sizeof(struct ibv_wc); }
JNIEXPORT jint JNICALL ND(getRemoteAddressOffset)(JNIEnv *env, jobject self) {
    return offsetof(struct ibv_send_wr, wr.rdma.remote_addr);
}
JNIEXPORT jint JNICALL ND(getRKeyOffset)(JNIEnv *env, jobject self) { return offsetof(struct ibv_send_wr, wr.rdma.rkey); }

JNIEXPORT jlong JNICALL ND(createEventChannel)(JNIEnv *env, jobject self) {
    struct rdma_event_channel *ch = rdma_create_event_channel();
    if (ch == NULL) { throw_io(env, "rdma_create_event_channel", errno); return -1; }
    return J(ch);
}

JNIEXPORT jlong JNICALL ND(createId)(JNIEnv *env, jobject self, jlong channel, jshort ps) {
    struct rdma_cm_id *id = NULL;
    if (rdma_create_id(P(channel), &id, NULL, (enum rdma_port_space) ps)) {
        throw_io(env, "rdma_create_id", errno);
        return -1;
    }
    info_of(id, 1);
    return J(id);
}

JNIEXPORT jlong JNICALL ND(createQP)(JNIEnv *env, jobject self, jlong id, jlong pd, jlong sendCq, jlong recvCq,
                                     jint qpType, jint maxSendWr, jint maxRecvWr, jint maxInline) {
    struct rdma_cm_id *cmid = P(id);
    struct ibv_qp_init_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.send_cq = P(sendCq);
    attr.recv_cq = P(recvCq);
    attr.qp_type = (enum ibv_qp_type) qpType;
    attr.cap.max_send_wr = maxSendWr;
    attr.cap.max_recv_wr = maxRecvWr;
    /* DiSNI 2.1 passes no SGE counts; the provider's work requests carry one segment each */
    attr.cap.max_send_sge = 1;
    attr.cap.max_recv_sge = 1;
    attr.cap.max_inline_data = maxInline;
    if (rdma_create_qp(cmid, P(pd), &attr)) {
        throw_io(env, "rdma_create_qp", errno);
        return -1;
    }
    return J(cmid->qp);
}

JNIEXPORT void JNICALL ND(bindAddr)(JNIEnv *env, jobject self, jlong id, jlong addr) {
    if (rdma_bind_addr(P(id), P(addr))) throw_io(env, "rdma_bind_addr", errno);
}

JNIEXPORT void JNICALL ND(listen)(JNIEnv *env, jobject self, jlong id, jint backlog) {
    if (rdma_listen(P(id), backlog)) throw_io(env, "rdma_listen", errno);
}

JNIEXPORT void JNICALL ND(resolveAddr)(JNIEnv *env, jobject self, jlong id, jlong src, jlong dst, jint timeout) {
    if (rdma_resolve_addr(P(id), P(src), P(dst), timeout)) throw_io(env, "rdma_resolve_addr", errno);
}

JNIEXPORT void JNICALL ND(resolveRoute)(JNIEnv *env, jobject self, jlong id, jint timeout) {
    if (rdma_resolve_route(P(id), timeout)) throw_io(env, "rdma_resolve_route", errno);
}

/* Waits up to timeout ms (negative: forever); writes (listen id, id) as two longs; returns the event type or -1. */
JNIEXPORT jint JNICALL ND(getCmEvent)(JNIEnv *env, jobject self, jlong channel, jlong listenIdOut, jlong idOut,
                                      jint timeout) {
    struct rdma_event_channel *ch = P(channel);
    struct rdma_cm_event *ev = NULL;
    struct id_info *info;
    int type;
    event_serial = 0;
    if (wait_fd(ch->fd, timeout) <= 0) return -1;
    if (rdma_get_cm_event(ch, &ev)) return -1;
    type = ev->event;
    info = info_of(ev->id, type == RDMA_CM_EVENT_CONNECT_REQUEST);
    if (info != NULL) {
        info->event = type;
        info->status = ev->status;
        info->pdata_len = 0;
        info->responder_resources = ev->param.conn.responder_resources;
        info->initiator_depth = ev->param.conn.initiator_depth;
        if (ev->param.conn.private_data != NULL && ev->param.conn.private_data_len > 0) {
            int n = ev->param.conn.private_data_len;
            if (n > PDATA_MAX) n = PDATA_MAX;
            memcpy(info->pdata, ev->param.conn.private_data, n);
            info->pdata_len = n;
        }
    }
    /* a connect request goes to its listener; its new id is known to no one yet */
    event_serial = serial_of(type == RDMA_CM_EVENT_CONNECT_REQUEST ? ev->listen_id : ev->id);
    *(int64_t *) P(listenIdOut) = J(ev->listen_id);
    *(int64_t *) P(idOut) = J(ev->id);
    rdma_ack_cm_event(ev); /* from here on, ev->id and ev->listen_id may be destroyed by another thread */
    return type;
}

static void fill_conn_param(struct rdma_conn_param *p, int retry, int rnr, const void *pdata, int len, int rr, int id) {
    memset(p, 0, sizeof *p);
    p->private_data = pdata;
    p->private_data_len = (uint8_t) len;
    p->responder_resources = (uint8_t) rr;
    p->initiator_depth = (uint8_t) id;
    p->flow_control = 1;
    p->retry_count = (uint8_t) retry;
    p->rnr_retry_count = (uint8_t) rnr;
}

JNIEXPORT void JNICALL ND(connect)(JNIEnv *env, jobject self, jlong id, jint retry, jint rnr, jlong pdata, jbyte len) {
    struct rdma_conn_param p;
    fill_conn_param(&p, retry, rnr, P(pdata), (uint8_t) len, 1, 1);
    if (rdma_connect(P(id), &p)) throw_io(env, "rdma_connect", errno);
}

JNIEXPORT void JNICALL ND(accept)(JNIEnv *env, jobject self, jlong id, jint retry, jint rnr) {
    struct rdma_conn_param p;
    fill_conn_param(&p, retry, rnr, NULL, 0, 1, 1);
    if (rdma_accept(P(id), &p)) throw_io(env, "rdma_accept", errno);
}

JNIEXPORT jint JNICALL ND(ackCmEvent)(JNIEnv *env, jobject self, jint event) { return 0; /* acked in _getCmEvent */ }
JNIEXPORT jint JNICALL ND(disconnect)(JNIEnv *env, jobject self, jlong id) { return rdma_disconnect(P(id)) ? -errno : 0; }
JNIEXPORT jint JNICALL ND(destroyEventChannel)(JNIEnv *env, jobject self, jlong ch) {
    rdma_destroy_event_channel(P(ch));
    return 0;
}
JNIEXPORT jint JNICALL ND(destroyCmId)(JNIEnv *env, jobject self, jlong id) {
    struct rdma_cm_id *cmid = P(id);
    void *info = cmid->context;
    int r = rdma_destroy_id(cmid);
    if (r == 0) free(info);
    return r ? -errno : 0;
}
JNIEXPORT jint JNICALL ND(destroyQP)(JNIEnv *env, jobject self, jlong id) {
    rdma_destroy_qp(P(id));
    return 0;
}
JNIEXPORT jint JNICALL ND(getSrcAddr)(JNIEnv *env, jobject self, jlong id, jlong out) {
    memcpy(P(out), rdma_get_local_addr(P(id)), sizeof(struct sockaddr_in));
    return 0;
}
JNIEXPORT jint JNICALL ND(getDstAddr)(JNIEnv *env, jobject self, jlong id, jlong out) {
    memcpy(P(out), rdma_get_peer_addr(P(id)), sizeof(struct sockaddr_in));
    return 0;
}
JNIEXPORT jint JNICALL ND(destroyEp)(JNIEnv *env, jobject self, jlong id) {
    rdma_destroy_ep(P(id));
    return 0;
}

JNIEXPORT jlong JNICALL ND(allocPd)(JNIEnv *env, jobject self, jlong ctx) {
    struct ibv_pd *pd = ibv_alloc_pd(P(ctx));
    if (pd == NULL) { throw_io(env, "ibv_alloc_pd", errno); return -1; }
    return J(pd);
}

JNIEXPORT jlong JNICALL ND(createCompChannel)(JNIEnv *env, jobject self, jlong ctx) {
    struct ibv_comp_channel *ch = ibv_create_comp_channel(P(ctx));
    if (ch == NULL) { throw_io(env, "ibv_create_comp_channel", errno); return -1; }
    return J(ch);
}

JNIEXPORT jlong JNICALL ND(createCQ)(JNIEnv *env, jobject self, jlong ctx, jlong channel, jint ncqe, jint vector) {
    struct ibv_cq *cq = ibv_create_cq(P(ctx), ncqe, NULL, P(channel), vector);
    if (cq == NULL) { throw_io(env, "ibv_create_cq", errno); return -1; }
    return J(cq);
}

JNIEXPORT jint JNICALL ND(modifyQP)(JNIEnv *env, jobject self, jlong qp, jlong attr) {
    throw_io(env, "modifyQP (not supported by libnvmeofrdma; the CM moves QPs through their states)", ENOTSUP);
    return -1;
}

JNIEXPORT jlong JNICALL ND(regMr)(JNIEnv *env, jobject self, jlong pd, jlong addr, jint len, jint access,
                                  jlong lkeyOut, jlong rkeyOut, jlong handleOut) {
    struct ibv_mr *mr = ibv_reg_mr(P(pd), P(addr), (size_t) (uint32_t) len, access);
    if (mr == NULL) { throw_io(env, "ibv_reg_mr", errno); return -1; }
    *(uint32_t *) P(lkeyOut) = mr->lkey;
    *(uint32_t *) P(rkeyOut) = mr->rkey;
    *(uint32_t *) P(handleOut) = mr->handle;
    return J(mr);
}

JNIEXPORT jint JNICALL ND(queryOdpSupport)(JNIEnv *env, jobject self, jlong ctx) { return -1; }

JNIEXPORT jint JNICALL ND(expPrefetchMr)(JNIEnv *env, jobject self, jlong mr, jlong addr, jint len) {
    throw_io(env, "expPrefetchMr", ENOTSUP);
    return -1;
}

JNIEXPORT void JNICALL ND(deregMr)(JNIEnv *env, jobject self, jlong mr) {
    int r = ibv_dereg_mr(P(mr));
    if (r) throw_io(env, "ibv_dereg_mr", r);
}

JNIEXPORT void JNICALL ND(postSend)(JNIEnv *env, jobject self, jlong qp, jlong wr) {
    struct ibv_send_wr *bad = NULL;
    int r = ibv_post_send(P(qp), P(wr), &bad);
    if (r) throw_io(env, "ibv_post_send", r);
}

JNIEXPORT void JNICALL ND(postRecv)(JNIEnv *env, jobject self, jlong qp, jlong wr) {
    struct ibv_recv_wr *bad = NULL;
    int r = ibv_post_recv(P(qp), P(wr), &bad);
    if (r) throw_io(env, "ibv_post_recv", r);
}

/* Waits up to timeout ms for a completion event; acks nothing (the caller acks with _ackCqEvent). */
JNIEXPORT jint JNICALL ND(getCqEvent)(JNIEnv *env, jobject self, jlong channel, jint timeout) {
    struct ibv_comp_channel *ch = P(channel);
    struct ibv_cq *cq;
    void *ctx;
    int r = wait_fd(ch->fd, timeout);
    if (r < 0) { throw_io(env, "poll(comp channel)", errno); return -1; }
    if (r == 0) return -1;
    if (ibv_get_cq_event(ch, &cq, &ctx)) return -1;
    return 0;
}

JNIEXPORT jint JNICALL ND(pollCQ)(JNIEnv *env, jobject self, jlong cq, jint ne, jlong wcs) {
    int n = ibv_poll_cq(P(cq), ne, P(wcs));
    if (n < 0) throw_io(env, "ibv_poll_cq", -n);
    return n;
}

JNIEXPORT jint JNICALL ND(reqNotifyCQ)(JNIEnv *env, jobject self, jlong cq, jint solicitedOnly) {
    int r = ibv_req_notify_cq(P(cq), solicitedOnly);
    if (r) throw_io(env, "ibv_req_notify_cq", r);
    return r;
}

JNIEXPORT jint JNICALL ND(ackCqEvent)(JNIEnv *env, jobject self, jlong cq, jint n) {
    ibv_ack_cq_events(P(cq), n);
    return 0;
}

JNIEXPORT jint JNICALL ND(destroyCompChannel)(JNIEnv *env, jobject self, jlong ch) {
    return ibv_destroy_comp_channel(P(ch));
}
JNIEXPORT jint JNICALL ND(deallocPd)(JNIEnv *env, jobject self, jlong pd) { return ibv_dealloc_pd(P(pd)); }
JNIEXPORT jint JNICALL ND(destroyCQ)(JNIEnv *env, jobject self, jlong cq) { return ibv_destroy_cq(P(cq)); }

JNIEXPORT jlong JNICALL ND(getContext)(JNIEnv *env, jobject self, jlong id) {
    struct rdma_cm_id *cmid = P(id);
    return cmid->verbs == NULL ? -1 : J(cmid->verbs);
}
JNIEXPORT jint JNICALL ND(getQpNum)(JNIEnv *env, jobject self, jlong qp) { return ((struct ibv_qp *) P(qp))->qp_num; }
JNIEXPORT jint JNICALL ND(getContextFd)(JNIEnv *env, jobject self, jlong ctx) {
    return ((struct ibv_context *) P(ctx))->cmd_fd;
}
JNIEXPORT jint JNICALL ND(getContextNumCompVectors)(JNIEnv *env, jobject self, jlong ctx) {
    return ((struct ibv_context *) P(ctx))->num_comp_vectors;
}
JNIEXPORT jint JNICALL ND(getPdHandle)(JNIEnv *env, jobject self, jlong pd) { return ((struct ibv_pd *) P(pd))->handle; }

/* ================================================================================== io.nvmeof...impl.NativeCm */

#define NC(name) Java_io_nvmeof_transport_rdma_disni_impl_NativeCm_##name

JNIEXPORT jint JNICALL NC(deviceCount)(JNIEnv *env, jclass cls) {
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (list == NULL) return -errno;
    ibv_free_device_list(list);
    return n;
}

/* The RDMA devices' names, comma-separated ("" when none). */
JNIEXPORT jstring JNICALL NC(deviceNames)(JNIEnv *env, jclass cls) {
    char names[512] = "";
    int n = 0, i;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (list == NULL) return (*env)->NewStringUTF(env, "");
    for (i = 0; i < n; i++) {
        if (i > 0) strncat(names, ",", sizeof names - strlen(names) - 1);
        strncat(names, ibv_get_device_name(list[i]), sizeof names - strlen(names) - 1);
    }
    ibv_free_device_list(list);
    return (*env)->NewStringUTF(env, names);
}

/* {max_qp_rd_atom, max_qp_init_rd_atom, max_qp_wr, max_cqe, max_srq, max_srq_wr} of the id's device. */
JNIEXPORT jintArray JNICALL NC(deviceLimits)(JNIEnv *env, jclass cls, jlong ctx) {
    struct ibv_device_attr a;
    jint v[6];
    jintArray out;
    int r = ibv_query_device(P(ctx), &a);
    if (r) { throw_io(env, "ibv_query_device", r); return NULL; }
    v[0] = a.max_qp_rd_atom;
    v[1] = a.max_qp_init_rd_atom;
    v[2] = a.max_qp_wr;
    v[3] = a.max_cqe;
    v[4] = a.max_srq;
    v[5] = a.max_srq_wr;
    out = (*env)->NewIntArray(env, 6);
    if (out != NULL) (*env)->SetIntArrayRegion(env, out, 0, 6, v);
    return out;
}

JNIEXPORT jstring JNICALL NC(deviceName)(JNIEnv *env, jclass cls, jlong ctx) {
    return (*env)->NewStringUTF(env, ibv_get_device_name(((struct ibv_context *) P(ctx))->device));
}

static int copy_pdata(JNIEnv *env, jbyteArray data, uint8_t *buf) {
    int len = data == NULL ? 0 : (*env)->GetArrayLength(env, data);
    if (len > 255) len = 255;
    if (len > 0) (*env)->GetByteArrayRegion(env, data, 0, len, (jbyte *) buf);
    return len;
}

JNIEXPORT void JNICALL NC(connect)(JNIEnv *env, jclass cls, jlong id, jbyteArray data, jint rr, jint idepth, jint retry,
                                   jint rnr) {
    uint8_t buf[256];
    struct rdma_conn_param p;
    int len = copy_pdata(env, data, buf);
    fill_conn_param(&p, retry, rnr, len ? buf : NULL, len, rr, idepth);
    if (rdma_connect(P(id), &p)) throw_io(env, "rdma_connect", errno);
}

JNIEXPORT void JNICALL NC(accept)(JNIEnv *env, jclass cls, jlong id, jbyteArray data, jint rr, jint idepth, jint rnr) {
    uint8_t buf[256];
    struct rdma_conn_param p;
    int len = copy_pdata(env, data, buf);
    fill_conn_param(&p, 0, rnr, len ? buf : NULL, len, rr, idepth);
    if (rdma_accept(P(id), &p)) throw_io(env, "rdma_accept", errno);
}

JNIEXPORT void JNICALL NC(reject)(JNIEnv *env, jclass cls, jlong id, jbyteArray data) {
    uint8_t buf[256];
    int len = copy_pdata(env, data, buf);
    if (rdma_reject(P(id), len ? buf : NULL, (uint8_t) len)) throw_io(env, "rdma_reject", errno);
}

/* The last event's private data on this id (as the CM delivered it: IB CM pads it to the message's full size). */
JNIEXPORT jbyteArray JNICALL NC(eventPrivateData)(JNIEnv *env, jclass cls, jlong id) {
    struct id_info *info = ((struct rdma_cm_id *) P(id))->context;
    int len = info == NULL ? 0 : info->pdata_len;
    jbyteArray out = (*env)->NewByteArray(env, len);
    if (out != NULL && len > 0) (*env)->SetByteArrayRegion(env, out, 0, len, (jbyte *) info->pdata);
    return out;
}

/* The serial of a live id (its owner asks, e.g. when registering it for events). */
JNIEXPORT jlong JNICALL NC(idSerial)(JNIEnv *env, jclass cls, jlong id) { return (jlong) serial_of(P(id)); }

/* The serial of the id the calling thread's last _getCmEvent is to be dispatched by (see the top of this file). */
JNIEXPORT jlong JNICALL NC(eventSerial)(JNIEnv *env, jclass cls) { return (jlong) event_serial; }

/* {event, status, responder_resources, initiator_depth} of the last event on this id. */
JNIEXPORT jintArray JNICALL NC(eventInfo)(JNIEnv *env, jclass cls, jlong id) {
    struct id_info *info = ((struct rdma_cm_id *) P(id))->context;
    jint v[4] = { -1, 0, 0, 0 };
    jintArray out;
    if (info != NULL) {
        v[0] = info->event;
        v[1] = info->status;
        v[2] = info->responder_resources;
        v[3] = info->initiator_depth;
    }
    out = (*env)->NewIntArray(env, 4);
    if (out != NULL) (*env)->SetIntArrayRegion(env, out, 0, 4, v);
    return out;
}

/* ------------------------------------------------------------------------------------ shared receive queues */

/*
 * ibv_create_srq in pd: max_wr receive work requests of one scatter/gather entry each. Writes the max_wr the device
 * granted (it may round up) into granted[0]. Returns the ibv_srq pointer.
 */
JNIEXPORT jlong JNICALL NC(createSrq)(JNIEnv *env, jclass cls, jlong pd, jint maxWr, jintArray granted) {
    struct ibv_srq_init_attr init;
    struct ibv_srq *srq;
    jint g;
    memset(&init, 0, sizeof init);
    init.attr.max_wr = (uint32_t) maxWr;
    init.attr.max_sge = 1;
    srq = ibv_create_srq(P(pd), &init);
    if (srq == NULL) { throw_io(env, "ibv_create_srq", errno); return 0; }
    g = (jint) init.attr.max_wr;
    (*env)->SetIntArrayRegion(env, granted, 0, 1, &g);
    return J(srq);
}

/* ibv_destroy_srq: 0, or the errno (EBUSY while a QP still uses it). */
JNIEXPORT jint JNICALL NC(destroySrq)(JNIEnv *env, jclass cls, jlong srq) { return ibv_destroy_srq(P(srq)); }

/*
 * ibv_post_srq_recv of one buffer (one SGE) built on the stack: no Java object per post. Returns 0 or the errno
 * (ENOMEM: the SRQ is full).
 */
JNIEXPORT jint JNICALL NC(postSrqRecv)(JNIEnv *env, jclass cls, jlong srq, jlong wrId, jlong addr, jint length,
                                       jint lkey) {
    struct ibv_sge sge = { .addr = (uint64_t) addr, .length = (uint32_t) length, .lkey = (uint32_t) lkey };
    struct ibv_recv_wr wr = { .wr_id = (uint64_t) wrId, .next = NULL, .sg_list = &sge, .num_sge = 1 };
    struct ibv_recv_wr *bad = NULL;
    return ibv_post_srq_recv(P(srq), &wr, &bad);
}

/*
 * rdma_create_qp on a CM id with one CQ for sends and receives and its receives taken from srq (the QP has no receive
 * queue of its own). Send work requests carry one SGE, as DiSNI's (see _createQP). Returns the ibv_qp pointer.
 */
JNIEXPORT jlong JNICALL NC(createQpOnSrq)(JNIEnv *env, jclass cls, jlong id, jlong pd, jlong cq, jlong srq,
                                          jint maxSendWr) {
    struct rdma_cm_id *cmid = P(id);
    struct ibv_qp_init_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.send_cq = P(cq);
    attr.recv_cq = P(cq);
    attr.srq = P(srq);
    attr.qp_type = IBV_QPT_RC;
    attr.cap.max_send_wr = (uint32_t) maxSendWr;
    attr.cap.max_send_sge = 1;
    if (rdma_create_qp(cmid, P(pd), &attr)) {
        throw_io(env, "rdma_create_qp (on an SRQ)", errno);
        return 0;
    }
    return J(cmid->qp);
}

/* rdma_destroy_qp of a QP made by createQpOnSrq (DiSNI's destroyQP only knows the QPs it made). */
JNIEXPORT void JNICALL NC(destroyQp)(JNIEnv *env, jclass cls, jlong id) { rdma_destroy_qp(P(id)); }

/* The qp_num of a QP. */
JNIEXPORT jint JNICALL NC(qpNumber)(JNIEnv *env, jclass cls, jlong qp) { return (jint) ((struct ibv_qp *) P(qp))->qp_num; }
