/* SPDX-License-Identifier: MIT */
/*
 * The exported tables, ncclNetPlugin_v6 to ncclNetPlugin_v12. Each version is
 * a thin adapter onto the core entry points (gdx_net.c): older ones widen int
 * sizes to size_t, drop what they do not have (profiler handles, contexts,
 * device handles) and copy the properties into their own layout. Their init
 * tells the core how that NCCL numbers devices (gdx_dev.h, enum gdx_view).
 */
#include <errno.h>
#include <string.h>

#include "sys/gdx_log.h"
#include "net/gdx_net.h"

#define GDX_EXPORT __attribute__((visibility("default")))

/* ---- init ---- */

/* v6-v8: no makeVDevice, the plugin fuses at init. */
static ncclResult_t gdx_init_v7(ncclDebugLogger_t logger)
{
	return gdx_net_init(NULL, 0, NCCL_NET_TRAFFIC_CLASS_UNDEF, logger, NULL, GDX_VIEW_FUSED);
}

static ncclResult_t gdx_init_v9(ncclDebugLogger_t logger)
{
	return gdx_net_init(NULL, 0, NCCL_NET_TRAFFIC_CLASS_UNDEF, logger, NULL, GDX_VIEW_PHYSICAL);
}

static ncclResult_t gdx_init_v10(ncclDebugLogger_t logger, ncclProfilerCallback_t prof)
{
	return gdx_net_init(NULL, 0, NCCL_NET_TRAFFIC_CLASS_UNDEF, logger, prof, GDX_VIEW_PHYSICAL);
}

static ncclResult_t gdx_init_v11(void **ctx, uint64_t comm_id, ncclNetCommConfig_v11_t *config,
				 ncclDebugLogger_t logger, ncclProfilerCallback_t prof)
{
	if (!ctx)
		return gdx_net_result(-EINVAL);
	return gdx_net_init(ctx, comm_id,
			    config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF, logger,
			    prof, GDX_VIEW_PHYSICAL);
}

static ncclResult_t gdx_init_v12(void **ctx, uint64_t comm_id, ncclNetCommConfig_v12_t *config,
				 ncclDebugLogger_t logger, ncclProfilerCallback_t prof)
{
	return gdx_init_v11(ctx, comm_id, (ncclNetCommConfig_v11_t *)config, logger, prof);
}

/* ---- properties: one core fill, copied into each layout ---- */

#define GDX_PROPS_COMMON(out, p)                                           \
	do {                                                               \
		(out)->name = (p).name;                                    \
		(out)->pciPath = (p).pci_path;                             \
		(out)->guid = (p).guid;                                    \
		(out)->ptrSupport = (p).ptr_support;                       \
		(out)->speed = (p).speed;                                  \
		(out)->port = (p).port;                                    \
		(out)->latency = (p).latency;                              \
		(out)->maxComms = (p).max_comms;                           \
		(out)->maxRecvs = (p).max_recvs;                           \
		(out)->netDeviceType = NCCL_NET_DEVICE_HOST;               \
		(out)->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION; \
	} while (0)

/* vProps of v9-v11 hold 4 devices; a wider fused device reports its first 4. */
#define GDX_PROPS_V9(out, p, max)                                                                \
	do {                                                                                     \
		GDX_PROPS_COMMON(out, p);                                                        \
		(out)->regIsGlobal = (p).reg_is_global;                                          \
		(out)->forceFlush = (p).force_flush;                                             \
		(out)->vProps.ndevs = (p).ndevs < (max) ? (p).ndevs : (max);                     \
		memcpy((out)->vProps.devs, (p).devs, sizeof(int) * (size_t)(out)->vProps.ndevs); \
		(out)->maxP2pBytes = (p).max_p2p_bytes;                                          \
		(out)->maxCollBytes = (p).max_coll_bytes;                                        \
	} while (0)

/* The core's properties of dev; an error when NCCL passed no struct. */
static ncclResult_t gdx_props_get(int dev, const void *out, struct gdx_net_props *p)
{
	ncclResult_t r = gdx_net_props(dev, p);

	return r == ncclSuccess && !out ? gdx_net_result(-EINVAL) : r;
}

static ncclResult_t gdx_props_v6(int dev, ncclNetProperties_v6_t *out)
{
	struct gdx_net_props p;
	ncclResult_t r = gdx_props_get(dev, out, &p);

	if (r == ncclSuccess) {
		memset(out, 0, sizeof(*out));
		out->name = p.name;
		out->pciPath = p.pci_path;
		out->guid = p.guid;
		out->ptrSupport = p.ptr_support;
		out->speed = p.speed;
		out->port = p.port;
		out->latency = p.latency;
		out->maxComms = p.max_comms;
		out->maxRecvs = p.max_recvs;
	}
	return r;
}

static ncclResult_t gdx_props_v7(int dev, ncclNetProperties_v7_t *out)
{
	struct gdx_net_props p;
	ncclResult_t r = gdx_props_get(dev, out, &p);

	if (r == ncclSuccess) {
		memset(out, 0, sizeof(*out));
		GDX_PROPS_COMMON(out, p);
	}
	return r;
}

static ncclResult_t gdx_props_v8(int dev, ncclNetProperties_v8_t *out)
{
	struct gdx_net_props p;
	ncclResult_t r = gdx_props_get(dev, out, &p);

	if (r == ncclSuccess) {
		memset(out, 0, sizeof(*out));
		GDX_PROPS_COMMON(out, p);
		out->regIsGlobal = p.reg_is_global;
	}
	return r;
}

static ncclResult_t gdx_props_v9(int dev, ncclNetProperties_v9_t *out)
{
	struct gdx_net_props p;
	ncclResult_t r = gdx_props_get(dev, out, &p);

	if (r == ncclSuccess) {
		memset(out, 0, sizeof(*out));
		GDX_PROPS_V9(out, p, NCCL_NET_MAX_DEVS_PER_NIC_V9);
	}
	return r;
}

static ncclResult_t gdx_props_v11(int dev, ncclNetProperties_v11_t *out)
{
	struct gdx_net_props p;
	ncclResult_t r = gdx_props_get(dev, out, &p);

	if (r == ncclSuccess) {
		memset(out, 0, sizeof(*out));
		GDX_PROPS_V9(out, p, NCCL_NET_MAX_DEVS_PER_NIC_V9);
		out->maxMultiRequestSize = p.max_multi_request_size;
	}
	return r;
}

static ncclResult_t gdx_props_v12(int dev, ncclNetProperties_v12_t *out)
{
	struct gdx_net_props p;
	ncclResult_t r = gdx_props_get(dev, out, &p);

	if (r == ncclSuccess) {
		memset(out, 0, sizeof(*out));
		GDX_PROPS_V9(out, p, NCCL_NET_MAX_DEVS_PER_NIC_V12);
		out->maxMultiRequestSize = p.max_multi_request_size;
		out->railId = p.rail_id;
		out->planeId = p.plane_id;
	}
	return r;
}

/* ---- connection setup; device-handle arguments are never touched ---- */

static ncclResult_t gdx_listen_v7(int dev, void *handle, void **listen_comm)
{
	return gdx_net_listen(NULL, dev, handle, listen_comm);
}

static ncclResult_t gdx_connect_v6(int dev, void *handle, void **send_comm)
{
	return gdx_net_connect(NULL, dev, NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, send_comm);
}

static ncclResult_t gdx_connect_v7(int dev, void *handle, void **send_comm,
				   ncclNetDeviceHandle_v7_t **dev_comm)
{
	(void)dev_comm;
	return gdx_net_connect(NULL, dev, NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, send_comm);
}

static ncclResult_t gdx_connect_v10(int dev, ncclNetCommConfig_v10_t *config, void *handle,
				    void **send_comm, ncclNetDeviceHandle_v10_t **dev_comm)
{
	(void)dev_comm;
	return gdx_net_connect(NULL, dev,
			       config ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF, handle,
			       send_comm);
}

static ncclResult_t gdx_connect_v11(void *ctx, int dev, void *handle, void **send_comm,
				    ncclNetDeviceHandle_v11_t **dev_comm)
{
	(void)dev_comm;
	return gdx_net_connect(ctx, dev, NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, send_comm);
}

static ncclResult_t gdx_accept_v6(void *listen_comm, void **recv_comm)
{
	return gdx_net_accept(listen_comm, recv_comm);
}

static ncclResult_t gdx_accept_v7(void *listen_comm, void **recv_comm,
				  ncclNetDeviceHandle_v7_t **dev_comm)
{
	(void)dev_comm;
	return gdx_net_accept(listen_comm, recv_comm);
}

/* ---- registration ---- */

static ncclResult_t gdx_reg_mr_v7(void *comm, void *data, int size, int type, void **mhandle)
{
	if (size < 0) {
		GDX_WARN("regMr: negative size %d", size);
		return gdx_net_result(-EINVAL);
	}
	return gdx_net_reg_mr(comm, data, (size_t)size, type, mhandle);
}

/* ---- data path ---- */

static ncclResult_t gdx_isend_v7(void *send_comm, void *data, int size, int tag, void *mhandle,
				 void **request)
{
	if (size < 0) {
		GDX_WARN("isend: negative size %d", size);
		return gdx_net_result(-EINVAL);
	}
	return gdx_net_isend(send_comm, data, (size_t)size, tag, mhandle, NULL, request);
}

/* v9: no profiler handles; v10+ take the core's own calls. */
static ncclResult_t gdx_isend_v9(void *send_comm, void *data, size_t size, int tag, void *mhandle,
				 void **request)
{
	return gdx_net_isend(send_comm, data, size, tag, mhandle, NULL, request);
}

static ncclResult_t gdx_irecv_v7(void *recv_comm, int n, void **data, int *sizes, int *tags,
				 void **mhandles, void **request)
{
	size_t sizes64[NCCL_NET_MAX_REQUESTS];

	if (!sizes || n < 1 || n > NCCL_NET_MAX_REQUESTS)
		return gdx_net_irecv(recv_comm, n, data, NULL, tags, mhandles, NULL, request);
	for (int i = 0; i < n; i++) {
		if (sizes[i] < 0) {
			GDX_WARN("irecv: negative size %d", sizes[i]);
			return gdx_net_result(-EINVAL);
		}
		sizes64[i] = (size_t)sizes[i];
	}
	return gdx_net_irecv(recv_comm, n, data, sizes64, tags, mhandles, NULL, request);
}

static ncclResult_t gdx_irecv_v9(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
				 void **mhandles, void **request)
{
	return gdx_net_irecv(recv_comm, n, data, sizes, tags, mhandles, NULL, request);
}

/* ---- virtual devices ---- */

static ncclResult_t gdx_make_vdevice_v9(int *d, ncclNetVDeviceProps_v9_t *props)
{
	if (!props)
		return gdx_net_result(-EINVAL);
	return gdx_net_make_vdevice(d, props->ndevs, props->devs, NCCL_NET_MAX_DEVS_PER_NIC_V9);
}

static ncclResult_t gdx_make_vdevice_v12(int *d, ncclNetVDeviceProps_v12_t *props)
{
	if (!props)
		return gdx_net_result(-EINVAL);
	return gdx_net_make_vdevice(d, props->ndevs, props->devs, NCCL_NET_MAX_DEVS_PER_NIC_V12);
}

static ncclResult_t gdx_set_attr_v11(void *ctx, ncclNetAttr_v11_t *attr)
{
	return gdx_net_set_attr(ctx, attr);
}

/* ---- the tables ---- */

#define GDX_TABLE_V6_COMMON                                                                  \
	.name = GDX_NET_NAME, .devices = gdx_net_devices,                                    \
	.regMrDmaBuf = gdx_net_reg_mr_dmabuf, /* refused where DMA-BUF is not advertised */  \
		.deregMr = gdx_net_dereg_mr, .iflush = gdx_net_iflush, .test = gdx_net_test, \
	.closeSend = gdx_net_close_send, .closeRecv = gdx_net_close_recv,                    \
	.closeListen = gdx_net_close_listen

#define GDX_TABLE_COMMON                                                               \
	GDX_TABLE_V6_COMMON, .accept = gdx_accept_v7,                                  \
			     .getDeviceMr = NULL, /* host plugin: no device handles */ \
		.irecvConsumed = NULL

/* NCCL 2.13-2.18, and every later release after the newer symbols (2.12 tries
 * only v5 and v4). */
GDX_EXPORT const ncclNet_v6_t ncclNetPlugin_v6 = {
	GDX_TABLE_V6_COMMON,	 .init = gdx_init_v7,	    .getProperties = gdx_props_v6,
	.listen = gdx_listen_v7, .connect = gdx_connect_v6, .accept = gdx_accept_v6,
	.regMr = gdx_reg_mr_v7,	 .isend = gdx_isend_v7,	    .irecv = gdx_irecv_v7,
};

GDX_EXPORT const ncclNet_v7_t ncclNetPlugin_v7 = {
	GDX_TABLE_COMMON,	 .init = gdx_init_v7,	    .getProperties = gdx_props_v7,
	.listen = gdx_listen_v7, .connect = gdx_connect_v7, .regMr = gdx_reg_mr_v7,
	.isend = gdx_isend_v7,	 .irecv = gdx_irecv_v7,
};

GDX_EXPORT const ncclNet_v8_t ncclNetPlugin_v8 = {
	GDX_TABLE_COMMON,	 .init = gdx_init_v7,	    .getProperties = gdx_props_v8,
	.listen = gdx_listen_v7, .connect = gdx_connect_v7, .regMr = gdx_net_reg_mr,
	.isend = gdx_isend_v7,	 .irecv = gdx_irecv_v7,
};

GDX_EXPORT const ncclNet_v9_t ncclNetPlugin_v9 = {
	GDX_TABLE_COMMON,	 .init = gdx_init_v9,	    .getProperties = gdx_props_v9,
	.listen = gdx_listen_v7, .connect = gdx_connect_v7, .regMr = gdx_net_reg_mr,
	.isend = gdx_isend_v9,	 .irecv = gdx_irecv_v9,	    .makeVDevice = gdx_make_vdevice_v9,
};

GDX_EXPORT const ncclNet_v10_t ncclNetPlugin_v10 = {
	GDX_TABLE_COMMON,	 .init = gdx_init_v10,	     .getProperties = gdx_props_v9,
	.listen = gdx_listen_v7, .connect = gdx_connect_v10, .regMr = gdx_net_reg_mr,
	.isend = gdx_net_isend,	 .irecv = gdx_net_irecv,     .makeVDevice = gdx_make_vdevice_v9,
};

GDX_EXPORT const ncclNet_v11_t ncclNetPlugin_v11 = {
	GDX_TABLE_COMMON,
	.init = gdx_init_v11,
	.getProperties = gdx_props_v11,
	.listen = gdx_net_listen,
	.connect = gdx_connect_v11,
	.regMr = gdx_net_reg_mr,
	.isend = gdx_net_isend,
	.irecv = gdx_net_irecv,
	.makeVDevice = gdx_make_vdevice_v9,
	.finalize = gdx_net_finalize,
	.setNetAttr = gdx_set_attr_v11,
};

GDX_EXPORT const ncclNet_v12_t ncclNetPlugin_v12 = {
	GDX_TABLE_COMMON,
	.init = gdx_init_v12,
	.getProperties = gdx_props_v12,
	.listen = gdx_net_listen,
	.connect = gdx_connect_v11,
	.regMr = gdx_net_reg_mr,
	.isend = gdx_net_isend,
	.irecv = gdx_net_irecv,
	.makeVDevice = gdx_make_vdevice_v12,
	.finalize = gdx_net_finalize,
	.setNetAttr = gdx_set_attr_v11,
};
