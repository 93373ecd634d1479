/* SPDX-License-Identifier: MIT */
/*
 * The NCCL boundary: argument checks, the one mapping from internal errors to
 * ncclResult_t, and the exported ncclNetPlugin_v7 table.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <nccl/net.h>
#include <gdx/gdx_comm.h>
#include <gdx/gdx_dev.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>

#define GDX_EXPORT __attribute__((visibility("default")))

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

static pthread_mutex_t gdx_init_lock = PTHREAD_MUTEX_INITIALIZER;
static bool gdx_initialized;

/* The only place an internal error becomes an NCCL result. */
static ncclResult_t gdx_nccl_result(int err)
{
	switch (err) {
	case 0: return ncclSuccess;
	case -EINVAL: /* NCCL passed something wrong */
	case -EBADF:
	case -ENOSPC: /* more requests than the API allows */ return ncclInternalError;
	case -EMSGSIZE: /* the ranks disagree on a size */
	case -EPROTONOSUPPORT: /* peer runs another protocol version */ return ncclInvalidUsage;
	case -ECONNRESET: /* peer gone */
	case -EREMOTEIO:  /* completion error */
	case -EPROTO: /* peer sent something malformed */ return ncclRemoteError;
	default: return ncclSystemError;
	}
}

static ncclResult_t gdx_net_init(ncclDebugLogger_t logger)
{
	int ret = 0;

	pthread_mutex_lock(&gdx_init_lock);
	gdx_log_set(logger);
	if (!gdx_initialized) {
		ret = gdx_params_load();
		if (!ret)
			ret = gdx_oob_check();
		if (!ret)
			ret = gdx_devs_init();
		if (ret >= 0)
			ret = gdx_vdevs_from_spec(gdx_params.rails);
		if (ret >= 0) {
			gdx_initialized = true;
			GDX_INFO(NCCL_INIT | NCCL_NET,
				 "libnccl-net-gdx %s, %d device(s), net API v7", GDX_VERSION,
				 gdx_vdevs_count());
			ret = 0;
		} else {
			/* The cause was the one WARN; this says what follows from it. */
			GDX_INFO(NCCL_INIT | NCCL_NET,
				 "plugin disabled (%s); NCCL falls back to its next network",
				 strerror(-ret));
		}
	}
	pthread_mutex_unlock(&gdx_init_lock);
	return gdx_nccl_result(ret);
}

static ncclResult_t gdx_net_devices(int *ndev)
{
	if (!ndev)
		return ncclInternalError;
	*ndev = gdx_vdevs_count();
	return ncclSuccess;
}

static struct gdx_vdev *gdx_net_dev(int dev, const char *call)
{
	struct gdx_vdev *v = gdx_vdev_get(dev);

	if (!v)
		GDX_WARN("%s: device %d does not exist (%d devices)", call, dev, gdx_vdevs_count());
	return v;
}

static ncclResult_t gdx_net_get_properties_v7(int dev, ncclNetProperties_v7_t *props)
{
	struct gdx_vdev *v = gdx_net_dev(dev, "getProperties");
	struct gdx_dev *lead;

	if (!v || !props)
		return ncclInternalError;
	/* A fused device is placed where its leading NIC is, and shares its
	 * (guid, port) so NCCL accounts their bandwidth together. */
	lead = v->members[0];
	memset(props, 0, sizeof(*props));
	props->name = v->name;
	props->pciPath = lead->pci_path;
	props->guid = lead->guid;
	props->ptrSupport = NCCL_PTR_HOST;
	props->speed = v->speed_mbps;
	props->port = lead->port;
	props->latency = 0;
	props->maxComms = lead->max_qp;
	props->maxRecvs = 1;
	props->netDeviceType = NCCL_NET_DEVICE_HOST;
	props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
	return ncclSuccess;
}

static ncclResult_t gdx_net_listen(int dev, void *handle, void **listen_comm)
{
	struct gdx_listen_comm *lc;
	int ret;

	if (!handle || !listen_comm || !gdx_net_dev(dev, "listen"))
		return ncclInternalError;
	ret = gdx_listen(dev, handle, &lc);
	if (!ret)
		*listen_comm = lc;
	return gdx_nccl_result(ret);
}

/* The device-handle argument may be NULL or point to NULL: never touched. */
static ncclResult_t gdx_net_connect_v7(int dev, void *handle, void **send_comm,
				       ncclNetDeviceHandle_v7_t **dev_comm)
{
	struct gdx_send_comm *sc = NULL;
	int ret;

	(void)dev_comm;
	if (!handle || !send_comm || !gdx_net_dev(dev, "connect"))
		return ncclInternalError;
	ret = gdx_connect(dev, handle, &sc);
	*send_comm = sc;
	return gdx_nccl_result(ret);
}

static struct gdx_listen_comm *gdx_net_listen_comm(void *comm, const char *call)
{
	struct gdx_listen_comm *lc = comm;

	if (!lc || lc->kind != GDX_KIND_LISTEN) {
		GDX_WARN("%s: %p is not a listen comm", call, comm);
		return NULL;
	}
	return lc;
}

static struct gdx_send_comm *gdx_net_send_comm(void *comm, const char *call)
{
	struct gdx_send_comm *sc = comm;

	if (!sc || sc->base.kind != GDX_KIND_SEND) {
		GDX_WARN("%s: %p is not a send comm", call, comm);
		return NULL;
	}
	return sc;
}

static struct gdx_recv_comm *gdx_net_recv_comm(void *comm, const char *call)
{
	struct gdx_recv_comm *rc = comm;

	if (!rc || rc->base.kind != GDX_KIND_RECV) {
		GDX_WARN("%s: %p is not a receive comm", call, comm);
		return NULL;
	}
	return rc;
}

static ncclResult_t gdx_net_accept_v7(void *listen_comm, void **recv_comm,
				      ncclNetDeviceHandle_v7_t **dev_comm)
{
	struct gdx_listen_comm *lc = gdx_net_listen_comm(listen_comm, "accept");
	struct gdx_recv_comm *rc = NULL;
	int ret;

	(void)dev_comm;
	if (!lc || !recv_comm)
		return ncclInternalError;
	ret = gdx_accept(lc, &rc);
	*recv_comm = rc;
	return gdx_nccl_result(ret);
}

static ncclResult_t gdx_net_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle)
{
	struct gdx_comm *c = comm;
	struct gdx_mr *mr;
	int ret;

	if (!c || (c->kind != GDX_KIND_SEND && c->kind != GDX_KIND_RECV) || !mhandle) {
		GDX_WARN("regMr: %p is not a send or receive comm", comm);
		return ncclInternalError;
	}
	ret = gdx_reg_mr(c, data, size, type, &mr);
	if (!ret)
		*mhandle = mr;
	return gdx_nccl_result(ret);
}

static ncclResult_t gdx_net_reg_mr_v7(void *comm, void *data, int size, int type, void **mhandle)
{
	if (size < 0) {
		GDX_WARN("regMr: negative size %d", size);
		return ncclInternalError;
	}
	return gdx_net_reg_mr(comm, data, (size_t)size, type, mhandle);
}

static ncclResult_t gdx_net_dereg_mr(void *comm, void *mhandle)
{
	(void)comm;
	return gdx_nccl_result(gdx_dereg_mr(mhandle));
}

static ncclResult_t gdx_net_isend_v7(void *send_comm, void *data, int size, int tag, void *mhandle,
				     void **request)
{
	struct gdx_send_comm *sc = gdx_net_send_comm(send_comm, "isend");
	struct gdx_request *req;
	int ret;

	if (!sc || !request || size < 0) {
		if (size < 0)
			GDX_WARN("isend: negative size %d", size);
		return ncclInternalError;
	}
	ret = gdx_isend(sc, data, (uint64_t)size, tag, mhandle, &req);
	*request = req;
	return gdx_nccl_result(ret);
}

static ncclResult_t gdx_net_irecv_v7(void *recv_comm, int n, void **data, int *sizes, int *tags,
				     void **mhandles, void **request)
{
	struct gdx_recv_comm *rc = gdx_net_recv_comm(recv_comm, "irecv");
	uint64_t sizes64[NCCL_NET_MAX_REQUESTS];
	struct gdx_request *req;
	int ret;

	if (!rc || !request || !data || !sizes || !tags || !mhandles || n < 1 ||
	    n > NCCL_NET_MAX_REQUESTS)
		return ncclInternalError;
	for (int i = 0; i < n; i++) {
		if (sizes[i] < 0) {
			GDX_WARN("irecv: negative size %d", sizes[i]);
			return ncclInternalError;
		}
		sizes64[i] = (uint64_t)sizes[i];
	}
	ret = gdx_irecv(rc, n, data, sizes64, tags, (struct gdx_mr **)mhandles, &req);
	*request = req;
	return gdx_nccl_result(ret);
}

static ncclResult_t gdx_net_iflush_v7(void *recv_comm, int n, void **data, int *sizes,
				      void **mhandles, void **request)
{
	struct gdx_recv_comm *rc = gdx_net_recv_comm(recv_comm, "iflush");
	struct gdx_request *req;
	int ret;

	if (!rc || !request)
		return ncclInternalError;
	ret = gdx_iflush(rc, n, data, sizes, (struct gdx_mr **)mhandles, &req);
	*request = req;
	return gdx_nccl_result(ret);
}

static ncclResult_t gdx_net_test_v7(void *request, int *done, int *sizes)
{
	uint64_t size = 0;
	int ret;

	if (!request || !done) {
		GDX_WARN("test: NULL %s", request ? "done pointer" : "request");
		return ncclInternalError;
	}
	ret = gdx_test(request, done, &size);
	if (!ret && *done && sizes)
		sizes[0] = (int)size;
	return gdx_nccl_result(ret);
}

static ncclResult_t gdx_net_close_send(void *send_comm)
{
	struct gdx_send_comm *sc = send_comm;

	if (!sc || !gdx_comm_registered(sc) || sc->base.kind != GDX_KIND_SEND) {
		GDX_WARN("closeSend: %p is not an open send comm (closed twice?)", send_comm);
		return ncclInternalError;
	}
	return gdx_nccl_result(gdx_close_send(sc));
}

static ncclResult_t gdx_net_close_recv(void *recv_comm)
{
	struct gdx_recv_comm *rc = recv_comm;

	if (!rc || !gdx_comm_registered(rc) || rc->base.kind != GDX_KIND_RECV) {
		GDX_WARN("closeRecv: %p is not an open receive comm (closed twice?)", recv_comm);
		return ncclInternalError;
	}
	return gdx_nccl_result(gdx_close_recv(rc));
}

static ncclResult_t gdx_net_close_listen(void *listen_comm)
{
	struct gdx_listen_comm *lc = listen_comm;

	if (!lc || !gdx_comm_registered(lc) || lc->kind != GDX_KIND_LISTEN) {
		GDX_WARN("closeListen: %p is not an open listen comm (closed twice?)", listen_comm);
		return ncclInternalError;
	}
	return gdx_nccl_result(gdx_close_listen(lc));
}

/* NCCL 2.28+ unloads the plugin when its last communicator goes, and a v7
 * plugin gets no finalize call: release the devices here. With comms still
 * open (the process is exiting under running threads) leave them alone. */
__attribute__((destructor)) static void gdx_net_unload(void)
{
	pthread_mutex_lock(&gdx_init_lock);
	if (gdx_initialized && gdx_comms_open() == 0) {
		gdx_conn_fini();
		gdx_devs_fini();
		gdx_initialized = false;
	}
	pthread_mutex_unlock(&gdx_init_lock);
}

GDX_EXPORT const ncclNet_v7_t ncclNetPlugin_v7 = {
	.name = "GDX",
	.init = gdx_net_init,
	.devices = gdx_net_devices,
	.getProperties = gdx_net_get_properties_v7,
	.listen = gdx_net_listen,
	.connect = gdx_net_connect_v7,
	.accept = gdx_net_accept_v7,
	.regMr = gdx_net_reg_mr_v7,
	.regMrDmaBuf = NULL, /* NCCL_PTR_DMABUF is not advertised */
	.deregMr = gdx_net_dereg_mr,
	.isend = gdx_net_isend_v7,
	.irecv = gdx_net_irecv_v7,
	.iflush = gdx_net_iflush_v7,
	.test = gdx_net_test_v7,
	.closeSend = gdx_net_close_send,
	.closeRecv = gdx_net_close_recv,
	.closeListen = gdx_net_close_listen,
	.getDeviceMr = NULL, /* host plugin: no device handles */
	.irecvConsumed = NULL,
};
