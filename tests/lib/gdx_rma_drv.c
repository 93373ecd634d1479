/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_rma_drv.h"
#include "gdx_test.h"

#define T14 ((const ncclRma_v14_t *)d->table)
#define T15 ((const ncclRma_v15_t *)d->table)
#define T16 ((const ncclRma_v16_t *)d->table)
/* The members every version has with the same type, from its own table. */
#define CALL(member, ...)                        \
	(d->v == 14   ? T14->member(__VA_ARGS__) \
	 : d->v == 15 ? T15->member(__VA_ARGS__) \
		      : T16->member(__VA_ARGS__))

void gdx_rdrv_open(struct gdx_rdrv *d, int v)
{
	const char *path = getenv("GDX_PLUGIN") ? getenv("GDX_PLUGIN") : "build/libnccl-net-gdx.so";
	char sym[32];

	ASSERT(v >= 14 && v <= 16);
	memset(d, 0, sizeof(*d));
	d->v = v;
	d->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	ASSERT(d->lib != NULL);
	snprintf(sym, sizeof(sym), "ncclRmaPlugin_v%d", v);
	d->table = dlsym(d->lib, sym);
	ASSERT(d->table != NULL);
}

ncclResult_t gdx_rdrv_init(struct gdx_rdrv *d, uint64_t comm_id)
{
	return CALL(init, &d->ctx, comm_id, gdx_test_logger);
}

ncclResult_t gdx_rdrv_finalize(struct gdx_rdrv *d)
{
	return CALL(finalize, d->ctx);
}

ncclResult_t gdx_rdrv_devices(struct gdx_rdrv *d, int *n)
{
	return CALL(devices, n);
}

ncclResult_t gdx_rdrv_props(struct gdx_rdrv *d, int dev, ncclNetProperties_v12_t *p)
{
	return CALL(getProperties, dev, p);
}

ncclResult_t gdx_rdrv_rma_props(struct gdx_rdrv *d, void *coll, ncclRmaProperties_v16_t *p)
{
	if (d->v < 16) {
		p->flushesAllPutsOnAnySignal = false; /* NCCL's adapters for v13-v15 */
		return ncclSuccess;
	}
	return T16->getRmaProperties(coll, p);
}

ncclResult_t gdx_rdrv_listen(struct gdx_rdrv *d, int dev, void *handle, void **lc)
{
	return CALL(listen, d->ctx, dev, handle, lc);
}

ncclResult_t gdx_rdrv_connect(struct gdx_rdrv *d, void *ctx, void **handles, int nranks, int rank,
			      void *lc, void **coll)
{
	return CALL(connect, ctx, handles, nranks, rank, lc, coll);
}

ncclResult_t gdx_rdrv_close_listen(struct gdx_rdrv *d, void *lc)
{
	return CALL(closeListen, lc);
}

ncclResult_t gdx_rdrv_close_coll(struct gdx_rdrv *d, void *coll)
{
	return CALL(closeColl, coll);
}

ncclResult_t gdx_rdrv_create_context(struct gdx_rdrv *d, void *coll, int n, int tc, int stride,
				     void **rctx)
{
	ncclRmaConfig_v14_t cfg = {.nContexts = n, .trafficClass = tc, .rankStride = stride};

	return CALL(createContext, coll, &cfg, rctx);
}

ncclResult_t gdx_rdrv_destroy_context(struct gdx_rdrv *d, void *rctx)
{
	return CALL(destroyContext, rctx);
}

ncclResult_t gdx_rdrv_reg(struct gdx_rdrv *d, void *coll, void *data, size_t size, uint64_t flags,
			  void **mh)
{
	return CALL(regMrSym, coll, data, size, NCCL_PTR_HOST, flags, mh);
}

ncclResult_t gdx_rdrv_dereg(struct gdx_rdrv *d, void *coll, void *mh)
{
	return CALL(deregMrSym, coll, mh);
}

ncclResult_t gdx_rdrv_iput(struct gdx_rdrv *d, void *rctx, int context, uint64_t src_off, void *src,
			   size_t size, uint64_t dst_off, void *dst, uint32_t rank, uint32_t flags,
			   void **req)
{
	if (d->v == 14)
		return T14->iput(rctx, context, src_off, src, size, dst_off, dst, rank, req);
	if (d->v == 15)
		return T15->iput(rctx, context, src_off, src, size, dst_off, dst, rank, flags, req);
	return T16->iput(rctx, context, src_off, src, size, dst_off, dst, rank, flags, req);
}

ncclResult_t gdx_rdrv_iput_signal(struct gdx_rdrv *d, void *rctx, int context, uint64_t src_off,
				  void *src, size_t size, uint64_t dst_off, void *dst,
				  uint32_t rank, uint64_t sig_off, void *sig, uint64_t value,
				  uint32_t op, bool strong, uint32_t flags, void **req)
{
	if (d->v == 14)
		return T14->iputSignal(rctx, context, src_off, src, size, dst_off, dst, rank,
				       sig_off, sig, value, op, strong, req);
	if (d->v == 15)
		return T15->iputSignal(rctx, context, src_off, src, size, dst_off, dst, rank,
				       sig_off, sig, value, op, strong, flags, req);
	return T16->iputSignal(rctx, context, src_off, src, size, dst_off, dst, rank, sig_off, sig,
			       value, op, strong, flags, req);
}

ncclResult_t gdx_rdrv_iget(struct gdx_rdrv *d, void *rctx, int context, uint64_t remote_off,
			   void *remote, size_t size, uint64_t local_off, void *local,
			   uint32_t rank, uint32_t flags, void **req)
{
	if (d->v == 14)
		return T14->iget(rctx, context, remote_off, remote, size, local_off, local, rank,
				 req);
	if (d->v == 15)
		return T15->iget(rctx, context, remote_off, remote, size, local_off, local, rank,
				 flags, req);
	return T16->iget(rctx, context, remote_off, remote, size, local_off, local, rank, flags,
			 req);
}

ncclResult_t gdx_rdrv_iflush(struct gdx_rdrv *d, void *rctx, int context, void *mh, uint32_t rank,
			     void **req)
{
	return CALL(iflush, rctx, context, mh, rank, req);
}

ncclResult_t gdx_rdrv_test(struct gdx_rdrv *d, void *coll, void *req, int *done)
{
	return CALL(test, coll, req, done);
}

ncclResult_t gdx_rdrv_progress(struct gdx_rdrv *d, void *rctx)
{
	return CALL(rmaProgress, rctx);
}

ncclResult_t gdx_rdrv_query_error(struct gdx_rdrv *d, void *rctx, bool *has)
{
	return CALL(queryLastError, rctx, has);
}

ncclResult_t gdx_rdrv_wait(struct gdx_rdrv *d, void *coll, void *rctx, void *req, double timeout_s)
{
	double t0 = gdx_now_s();
	int done = 0;

	for (;;) {
		ncclResult_t r = gdx_rdrv_test(d, coll, req, &done);

		if (r != ncclSuccess || done)
			return r;
		if (gdx_now_s() - t0 > timeout_s)
			gdx_test_fail(__FILE__, __LINE__, "RMA request %p not done after %.0f s",
				      req, timeout_s);
		ASSERT_EQ(gdx_rdrv_progress(d, rctx), ncclSuccess);
	}
}
