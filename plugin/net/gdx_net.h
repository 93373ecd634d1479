/* SPDX-License-Identifier: MIT */
/*
 * The plugin's NCCL entry points in the newest API's terms (size_t sizes, a
 * per-communicator context). gdx_net_tables.c adapts each exported
 * ncclNetPlugin_vN table onto these with thin wrappers.
 */
#ifndef GDX_NET_H
#define GDX_NET_H

#include <nccl/net.h>
#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"

/* The network's name in every table: what NCCL_NET selects it by. */
#define GDX_NET_NAME "GDX"

/* Every property any API version reports. */
struct gdx_net_props {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush;
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int ndevs; /* physical devices behind this one */
	int devs[NCCL_NET_MAX_DEVS_PER_NIC_V12];
	size_t max_p2p_bytes;
	size_t max_coll_bytes;
	int max_multi_request_size;
	int16_t rail_id;
	int16_t plane_id;
};

/* The only place an internal error (0 or a negative errno) becomes an NCCL
 * result, for the net and the RMA tables alike; every entry point, and every
 * table's own check, returns through it.
 * Success is decided inline: a proxy's spin on test returns it most. */
ncclResult_t gdx_net_error(int err);
static inline ncclResult_t gdx_net_result(int err)
{
	return err ? gdx_net_error(err) : ncclSuccess;
}

/* ctx_p NULL: the pre-v11 form, once per load. tc: NCCL's traffic class or
 * -1. prof: NCCL's profiler callback (v10+) or NULL (gdx_prof.h). view: how
 * the loading table's NCCL numbers devices (gdx_dev.h). */
ncclResult_t gdx_net_init(void **ctx_p, uint64_t comm_id, int tc, ncclDebugLogger_t logger,
			  ncclProfilerCallback_t prof, enum gdx_view view);
ncclResult_t gdx_net_finalize(void *ctx);
/* A user of the devices besides the net contexts (one-sided RMA's init
 * contexts): while one holds them, the last net finalize keeps them open;
 * its unhold releases them if nothing else uses them. */
void gdx_net_hold(void);
void gdx_net_unhold(void);
ncclResult_t gdx_net_set_attr(void *ctx, const ncclNetAttr_v11_t *attr);
ncclResult_t gdx_net_devices(int *ndev);
ncclResult_t gdx_net_props(int dev, struct gdx_net_props *p);
ncclResult_t gdx_net_listen(void *ctx, int dev, void *handle, void **listen_comm);
ncclResult_t gdx_net_connect(void *ctx, int dev, int tc, void *handle, void **send_comm);
ncclResult_t gdx_net_accept(void *listen_comm, void **recv_comm);
ncclResult_t gdx_net_reg_mr(void *comm, void *data, size_t size, int type, void **mhandle);
/* The fd is not kept: NCCL closes it as soon as the call returns. */
ncclResult_t gdx_net_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
				   int fd, void **mhandle);
ncclResult_t gdx_net_dereg_mr(void *comm, void *mhandle);
/* phandle(s): NCCL's profiler handles (v10+), NULL before. */
ncclResult_t gdx_net_isend(void *send_comm, void *data, size_t size, int tag, void *mhandle,
			   void *phandle, void **request);
ncclResult_t gdx_net_irecv(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			   void **mhandles, void **phandles, void **request);
ncclResult_t gdx_net_iflush(void *recv_comm, int n, void **data, int *sizes, void **mhandles,
			    void **request);
ncclResult_t gdx_net_test(void *request, int *done, int *sizes);
ncclResult_t gdx_net_close_send(void *send_comm);
ncclResult_t gdx_net_close_recv(void *recv_comm);
ncclResult_t gdx_net_close_listen(void *listen_comm);
/* max_members: 4 through v11, 8 from v12. */
ncclResult_t gdx_net_make_vdevice(int *d, int ndevs, const int *devs, int max_members);

#endif
