/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define T(type) ((const type *)d->table)

/* deregMr, iflush, test and the closes sit at the same offsets with the same
 * types in every version from v6 on (the static asserts in include/nccl pin
 * them); so do accept, regMr (size_t) and listen from v8 to v10. */
static const ncclNet_v8_t *gdx_drv_common(const struct gdx_drv *d)
{
	return d->table;
}

static void gdx_drv_open(struct gdx_drv *d, int v, int tc, ncclProfilerCallback_t prof)
{
	const char *path = getenv("GDX_PLUGIN") ? getenv("GDX_PLUGIN") : "build/libnccl-net-gdx.so";
	char sym[32];

	memset(d, 0, sizeof(*d));
	d->v = v;
	d->tc = tc;
	d->prof = prof;
	d->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT(d->lib != NULL);
	snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
	d->table = dlsym(d->lib, sym);
	ASSERT(d->table != NULL);
	gdx_drv_init(d);
}

void gdx_drv_init(struct gdx_drv *d)
{
	ncclNetCommConfig_v11_t cfg = {.trafficClass = d->tc};
	ncclNetCommConfig_v12_t cfg12 = {.trafficClass = d->tc};
	ncclProfilerCallback_t prof = d->prof;

	switch (d->v) {
	case 6: ASSERT_EQ(T(ncclNet_v6_t)->init(gdx_test_logger), ncclSuccess); break;
	case 7: ASSERT_EQ(T(ncclNet_v7_t)->init(gdx_test_logger), ncclSuccess); break;
	case 8: ASSERT_EQ(T(ncclNet_v8_t)->init(gdx_test_logger), ncclSuccess); break;
	case 9: ASSERT_EQ(T(ncclNet_v9_t)->init(gdx_test_logger), ncclSuccess); break;
	case 10: ASSERT_EQ(T(ncclNet_v10_t)->init(gdx_test_logger, prof), ncclSuccess); break;
	case 11:
		ASSERT_EQ(T(ncclNet_v11_t)->init(&d->ctx, 0x1111, &cfg, gdx_test_logger, prof),
			  ncclSuccess);
		break;
	default:
		ASSERT_EQ(T(ncclNet_v12_t)->init(&d->ctx, 0x1212, &cfg12, gdx_test_logger, prof),
			  ncclSuccess);
	}
}

void gdx_drv_load_tc(struct gdx_drv *d, int v, int tc)
{
	gdx_drv_open(d, v, tc, NULL);
}

void gdx_drv_load_prof(struct gdx_drv *d, int v, ncclProfilerCallback_t prof)
{
	ASSERT(v >= 10);
	gdx_drv_open(d, v, NCCL_NET_TRAFFIC_CLASS_UNDEF, prof);
}

void gdx_drv_load(struct gdx_drv *d, int v)
{
	gdx_drv_load_tc(d, v, NCCL_NET_TRAFFIC_CLASS_UNDEF);
}

ncclResult_t gdx_drv_finalize(struct gdx_drv *d)
{
	ASSERT(d->v >= 11);
	return d->v == 11 ? T(ncclNet_v11_t)->finalize(d->ctx) : T(ncclNet_v12_t)->finalize(d->ctx);
}

int gdx_drv_devices(struct gdx_drv *d)
{
	int n = -1;

	ASSERT_EQ(gdx_drv_common(d)->devices(&n), ncclSuccess);
	return n;
}

/* The fields every version has, from its own struct. */
#define GDX_DRV_PROPS_BASE(p, q)                   \
	do {                                       \
		(p)->name = (q).name;              \
		(p)->pci_path = (q).pciPath;       \
		(p)->guid = (q).guid;              \
		(p)->ptr_support = (q).ptrSupport; \
		(p)->speed = (q).speed;            \
		(p)->port = (q).port;              \
		(p)->max_comms = (q).maxComms;     \
		(p)->max_recvs = (q).maxRecvs;     \
	} while (0)
#define GDX_DRV_PROPS_V9(p, q)                                               \
	do {                                                                 \
		GDX_DRV_PROPS_BASE(p, q);                                    \
		(p)->reg_is_global = (q).regIsGlobal;                        \
		(p)->force_flush = (q).forceFlush;                           \
		(p)->ndevs = (q).vProps.ndevs;                               \
		memcpy((p)->devs, (q).vProps.devs, sizeof((q).vProps.devs)); \
		(p)->max_p2p_bytes = (q).maxP2pBytes;                        \
		(p)->max_coll_bytes = (q).maxCollBytes;                      \
	} while (0)

ncclResult_t gdx_drv_props(struct gdx_drv *d, int dev, struct gdx_drv_props *p)
{
	ncclResult_t r;

	/* what NCCL's adapters fill for versions without the field */
	memset(p, 0, sizeof(*p));
	p->ndevs = 1;
	p->devs[0] = dev;
	p->max_p2p_bytes = 1ULL << 30;
	p->max_coll_bytes = 512ULL << 20;
	p->max_multi_request_size = 1;
	p->rail_id = p->plane_id = NCCL_NET_ID_UNDEF;
	switch (d->v) {
	case 6: {
		ncclNetProperties_v6_t q;

		r = T(ncclNet_v6_t)->getProperties(dev, &q);
		if (!r)
			GDX_DRV_PROPS_BASE(p, q);
		return r;
	}
	case 7: {
		ncclNetProperties_v7_t q;

		r = T(ncclNet_v7_t)->getProperties(dev, &q);
		if (!r)
			GDX_DRV_PROPS_BASE(p, q);
		return r;
	}
	case 8: {
		ncclNetProperties_v8_t q;

		r = T(ncclNet_v8_t)->getProperties(dev, &q);
		if (!r) {
			GDX_DRV_PROPS_BASE(p, q);
			p->reg_is_global = q.regIsGlobal;
		}
		return r;
	}
	case 9:
	case 10: {
		ncclNetProperties_v9_t q;

		r = T(ncclNet_v9_t)->getProperties(dev, &q);
		if (!r)
			GDX_DRV_PROPS_V9(p, q);
		return r;
	}
	case 11: {
		ncclNetProperties_v11_t q;

		r = T(ncclNet_v11_t)->getProperties(dev, &q);
		if (!r) {
			GDX_DRV_PROPS_V9(p, q);
			p->max_multi_request_size = q.maxMultiRequestSize;
		}
		return r;
	}
	default: {
		ncclNetProperties_v12_t q;

		r = T(ncclNet_v12_t)->getProperties(dev, &q);
		if (!r) {
			GDX_DRV_PROPS_V9(p, q);
			p->max_multi_request_size = q.maxMultiRequestSize;
			p->rail_id = q.railId;
			p->plane_id = q.planeId;
		}
		return r;
	}
	}
}

ncclResult_t gdx_drv_make_vdevice(struct gdx_drv *d, int *vdev, int n, const int *devs)
{
	if (d->v < 12) {
		ncclNetVDeviceProps_v9_t vp = {.ndevs = n};

		ASSERT(d->v >= 9);
		memcpy(vp.devs, devs, sizeof(int) * (size_t)(n < 4 ? n : 4));
		return T(ncclNet_v9_t)->makeVDevice(vdev, &vp);
	}
	ncclNetVDeviceProps_v12_t vp = {.ndevs = n};

	memcpy(vp.devs, devs, sizeof(int) * (size_t)(n < 8 ? n : 8));
	return T(ncclNet_v12_t)->makeVDevice(vdev, &vp);
}

ncclResult_t gdx_drv_listen(struct gdx_drv *d, int dev, void *handle, void **l)
{
	if (d->v == 11)
		return T(ncclNet_v11_t)->listen(d->ctx, dev, handle, l);
	if (d->v == 12)
		return T(ncclNet_v12_t)->listen(d->ctx, dev, handle, l);
	return gdx_drv_common(d)->listen(dev, handle, l);
}

ncclResult_t gdx_drv_connect(struct gdx_drv *d, int dev, void *handle, void **s)
{
	ncclNetCommConfig_v10_t cfg = {.trafficClass = d->tc};

	switch (d->v) {
	case 6: return T(ncclNet_v6_t)->connect(dev, handle, s);
	case 7: return T(ncclNet_v7_t)->connect(dev, handle, s, NULL);
	case 8: return T(ncclNet_v8_t)->connect(dev, handle, s, NULL);
	case 9: return T(ncclNet_v9_t)->connect(dev, handle, s, NULL);
	case 10: return T(ncclNet_v10_t)->connect(dev, &cfg, handle, s, NULL);
	case 11: return T(ncclNet_v11_t)->connect(d->ctx, dev, handle, s, NULL);
	default: return T(ncclNet_v12_t)->connect(d->ctx, dev, handle, s, NULL);
	}
}

ncclResult_t gdx_drv_accept(struct gdx_drv *d, void *l, void **r)
{
	if (d->v == 6)
		return T(ncclNet_v6_t)->accept(l, r);
	return gdx_drv_common(d)->accept(l, r, NULL);
}

void gdx_drv_pair(struct gdx_drv *d, int listen_dev, int connect_dev, struct gdx_dpair *p)
{
	char h[NCCL_NET_HANDLE_MAXSIZE];

	memset(p, 0, sizeof(*p));
	ASSERT_EQ(gdx_drv_listen(d, listen_dev, h, &p->l), ncclSuccess);
	for (double t0 = gdx_now_s(); !p->s || !p->r;) {
		if (!p->s)
			ASSERT_EQ(gdx_drv_connect(d, connect_dev, h, &p->s), ncclSuccess);
		if (!p->r)
			ASSERT_EQ(gdx_drv_accept(d, p->l, &p->r), ncclSuccess);
		ASSERT(gdx_now_s() - t0 < 20);
	}
}

void gdx_drv_unpair(struct gdx_drv *d, struct gdx_dpair *p)
{
	ASSERT_EQ(gdx_drv_close_send(d, p->s), ncclSuccess);
	ASSERT_EQ(gdx_drv_close_recv(d, p->r), ncclSuccess);
	ASSERT_EQ(gdx_drv_close_listen(d, p->l), ncclSuccess);
}

void gdx_drv_reg(struct gdx_drv *d, void *comm, void *data, size_t size, void **mh)
{
	if (d->v <= 7)
		ASSERT_EQ(T(ncclNet_v7_t)->regMr(comm, data, (int)size, NCCL_PTR_HOST, mh),
			  ncclSuccess);
	else
		ASSERT_EQ(gdx_drv_common(d)->regMr(comm, data, size, NCCL_PTR_HOST, mh),
			  ncclSuccess);
}

ncclResult_t gdx_drv_dereg(struct gdx_drv *d, void *comm, void *mh)
{
	return gdx_drv_common(d)->deregMr(comm, mh);
}

ncclResult_t gdx_drv_isend(struct gdx_drv *d, void *s, void *data, size_t size, int tag, void *mh,
			   void **req)
{
	switch (d->v) {
	case 6:
	case 7:
	case 8: return T(ncclNet_v8_t)->isend(s, data, (int)size, tag, mh, req);
	case 9: return T(ncclNet_v9_t)->isend(s, data, size, tag, mh, req);
	default: return T(ncclNet_v10_t)->isend(s, data, size, tag, mh, d->phandle, req);
	}
}

ncclResult_t gdx_drv_irecv(struct gdx_drv *d, void *r, int n, void **data, const size_t *sizes,
			   const int *tags, void **mhs, void **req)
{
	int isizes[NCCL_NET_MAX_REQUESTS], itags[NCCL_NET_MAX_REQUESTS];
	size_t zsizes[NCCL_NET_MAX_REQUESTS];
	void *phandles[NCCL_NET_MAX_REQUESTS] = {0};

	ASSERT(n >= 1 && n <= NCCL_NET_MAX_REQUESTS);
	for (int i = 0; i < n; i++) {
		phandles[i] = d->phandle;
		isizes[i] = (int)sizes[i];
		zsizes[i] = sizes[i];
		itags[i] = tags[i];
	}
	switch (d->v) {
	case 6:
	case 7:
	case 8: return T(ncclNet_v8_t)->irecv(r, n, data, isizes, itags, mhs, req);
	case 9: return T(ncclNet_v9_t)->irecv(r, n, data, zsizes, itags, mhs, req);
	default: return T(ncclNet_v10_t)->irecv(r, n, data, zsizes, itags, mhs, phandles, req);
	}
}

ncclResult_t gdx_drv_iflush(struct gdx_drv *d, void *r, int n, void **data, int *sizes, void **mhs,
			    void **req)
{
	return gdx_drv_common(d)->iflush(r, n, data, sizes, mhs, req);
}

ncclResult_t gdx_drv_test(struct gdx_drv *d, void *req, int *done, int *sizes)
{
	return gdx_drv_common(d)->test(req, done, sizes);
}

ncclResult_t gdx_drv_wait(struct gdx_drv *d, void *req, int *sizes)
{
	int done = 0;

	for (double t0 = gdx_now_s(); !done;) {
		ncclResult_t r = gdx_drv_test(d, req, &done, sizes);

		if (r != ncclSuccess)
			return r;
		/* a hang, not a slow emulator: 520 MiB through rxe under TCG
		 * took 58 s on a quiet host */
		if (gdx_now_s() - t0 > 300)
			gdx_test_fail(__FILE__, __LINE__, "request not done after 300 s");
	}
	return ncclSuccess;
}

ncclResult_t gdx_drv_close_send(struct gdx_drv *d, void *s)
{
	return gdx_drv_common(d)->closeSend(s);
}

ncclResult_t gdx_drv_close_recv(struct gdx_drv *d, void *r)
{
	return gdx_drv_common(d)->closeRecv(r);
}

ncclResult_t gdx_drv_close_listen(struct gdx_drv *d, void *l)
{
	return gdx_drv_common(d)->closeListen(l);
}

void gdx_drv_transfer(struct gdx_drv *d, struct gdx_dpair *p, size_t n, uint32_t seed, int hint)
{
	char *sb = malloc(n + 1), *rb = malloc(n + 1);
	void *smh, *rmh, *sreq = NULL,
			 *rreq = hint ? (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION : NULL;
	int got = -1, tag = 0;

	ASSERT(sb && rb);
	memset(rb, 0, n + 1);
	gdx_fill(sb, n, seed);
	gdx_drv_reg(d, p->s, sb, n + 1, &smh);
	gdx_drv_reg(d, p->r, rb, n + 1, &rmh);
	ASSERT_EQ(gdx_drv_irecv(d, p->r, 1, (void **)&rb, &n, &tag, &rmh, &rreq), ncclSuccess);
	ASSERT(rreq != NULL && rreq != (void *)NCCL_NET_OPTIONAL_RECV_COMPLETION);
	for (double t0 = gdx_now_s(); !sreq;) {
		ASSERT_EQ(gdx_drv_isend(d, p->s, sb, n, tag, smh, &sreq), ncclSuccess);
		ASSERT(gdx_now_s() - t0 < 20);
	}
	ASSERT_EQ(gdx_drv_wait(d, sreq, &got), ncclSuccess);
	ASSERT_EQ(gdx_drv_wait(d, rreq, &got), ncclSuccess);
	ASSERT_EQ(got, (int)n);
	ASSERT_EQ(gdx_check(rb, n, seed), -1);
	ASSERT_EQ(gdx_drv_dereg(d, p->s, smh), ncclSuccess);
	ASSERT_EQ(gdx_drv_dereg(d, p->r, rmh), ncclSuccess);
	free(sb);
	free(rb);
}
