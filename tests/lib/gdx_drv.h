/* SPDX-License-Identifier: MIT */
/*
 * One exported table of any version (v6 to v12) behind one set of calls in
 * the newest API's terms (size_t sizes, tags, grouped receives), for tests
 * that drive the plugin as a given NCCL release would. The library is opened
 * the way NCCL opens it (dlopen RTLD_NOW|RTLD_LOCAL, then the symbol).
 */
#ifndef GDX_DRV_H
#define GDX_DRV_H

#include <stddef.h>
#include <stdint.h>

#include <nccl/net.h>

struct gdx_drv {
	int v;
	void *lib;
	const void *table;
	void *ctx; /* v11+ */
	int tc;	   /* v10: the traffic class passed to connect; v11+: to init */
	/* v10+: the profiler callback given to init, and the profiler handle
	 * isend and irecv (for every buffer) pass */
	ncclProfilerCallback_t prof;
	void *phandle;
};

/* Every property any version reports; fields a version lacks read as NCCL's
 * adapters fill them. */
struct gdx_drv_props {
	const char *name, *pci_path;
	uint64_t guid;
	int ptr_support, reg_is_global, force_flush, speed, port, max_comms, max_recvs;
	int ndevs, devs[NCCL_NET_MAX_DEVS_PER_NIC_V12];
	size_t max_p2p_bytes, max_coll_bytes;
	int max_multi_request_size, rail_id, plane_id;
};

/* A listen comm with the send and receive comms connected through it. */
struct gdx_dpair {
	void *l, *s, *r;
};

/* Opens the library ($GDX_PLUGIN or build/libnccl-net-gdx.so) and calls the
 * table's init (with d->tc as the v11+ config's traffic class, so set it
 * first when wanted: tc is -1 otherwise). */
void gdx_drv_load(struct gdx_drv *d, int v);
void gdx_drv_load_tc(struct gdx_drv *d, int v, int tc);
/* v10+, with prof as NCCL's profiler callback. */
void gdx_drv_load_prof(struct gdx_drv *d, int v, ncclProfilerCallback_t prof);
int gdx_drv_devices(struct gdx_drv *d);
ncclResult_t gdx_drv_props(struct gdx_drv *d, int dev, struct gdx_drv_props *p);
/* v11+: finalize of the context init made. */
ncclResult_t gdx_drv_finalize(struct gdx_drv *d);
/* The table's init again, on the library already open (v11+: a new
 * context in d->ctx, after a finalize of the last). */
void gdx_drv_init(struct gdx_drv *d);
/* v9+ only; the member count is checked against the version's maximum by the plugin. */
ncclResult_t gdx_drv_make_vdevice(struct gdx_drv *d, int *vdev, int n, const int *devs);

ncclResult_t gdx_drv_listen(struct gdx_drv *d, int dev, void *handle, void **l);
ncclResult_t gdx_drv_connect(struct gdx_drv *d, int dev, void *handle, void **s);
ncclResult_t gdx_drv_accept(struct gdx_drv *d, void *l, void **r);
/* Connects within 20 s, both ends from this thread, or fails the test. */
void gdx_drv_pair(struct gdx_drv *d, int listen_dev, int connect_dev, struct gdx_dpair *p);
void gdx_drv_unpair(struct gdx_drv *d, struct gdx_dpair *p);

/* Host memory; fails the test on error. */
void gdx_drv_reg(struct gdx_drv *d, void *comm, void *data, size_t size, void **mh);
ncclResult_t gdx_drv_dereg(struct gdx_drv *d, void *comm, void *mh);

ncclResult_t gdx_drv_isend(struct gdx_drv *d, void *s, void *data, size_t size, int tag, void *mh,
			   void **req);
ncclResult_t gdx_drv_irecv(struct gdx_drv *d, void *r, int n, void **data, const size_t *sizes,
			   const int *tags, void **mhs, void **req);
ncclResult_t gdx_drv_iflush(struct gdx_drv *d, void *r, int n, void **data, int *sizes, void **mhs,
			    void **req);
ncclResult_t gdx_drv_test(struct gdx_drv *d, void *req, int *done, int *sizes);
/* Tests req until done (or an error), failing the test after 300 s. */
ncclResult_t gdx_drv_wait(struct gdx_drv *d, void *req, int *sizes);
ncclResult_t gdx_drv_close_send(struct gdx_drv *d, void *s);
ncclResult_t gdx_drv_close_recv(struct gdx_drv *d, void *r);
ncclResult_t gdx_drv_close_listen(struct gdx_drv *d, void *l);

/* One verified message of n bytes with tag 0 through p; the receive request
 * starts as the v9+ optional-completion hint when hint is set. */
void gdx_drv_transfer(struct gdx_drv *d, struct gdx_dpair *p, size_t n, uint32_t seed, int hint);

#endif
