/* SPDX-License-Identifier: MIT */
/*
 * One exported RMA table (ncclRmaPlugin_v14, _v15 or _v16) behind one set of
 * calls in v16's terms, for tests that drive one-sided RMA as a given NCCL
 * release would: optFlags are dropped for v14 (NCCL 2.31's adapter drops
 * them), and getRmaProperties answers for v14 and v15 what NCCL's adapters
 * answer (flushesAllPutsOnAnySignal false). The library is opened as NCCL
 * opens it (dlopen RTLD_NOW|RTLD_LOCAL, then the symbol).
 */
#ifndef GDX_RMA_DRV_H
#define GDX_RMA_DRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nccl/rma.h>

struct gdx_rdrv {
	int v;
	void *lib;
	const void *table;
	void *ctx; /* from init, when it succeeded */
};

/* Opens the library ($GDX_PLUGIN or build/libnccl-net-gdx.so) and finds the
 * table; fails the test when it is not there. */
void gdx_rdrv_open(struct gdx_rdrv *d, int v);
/* The table's init, with the test logger; d->ctx on success. */
ncclResult_t gdx_rdrv_init(struct gdx_rdrv *d, uint64_t comm_id);
ncclResult_t gdx_rdrv_finalize(struct gdx_rdrv *d);
ncclResult_t gdx_rdrv_devices(struct gdx_rdrv *d, int *n);
ncclResult_t gdx_rdrv_props(struct gdx_rdrv *d, int dev, ncclNetProperties_v12_t *p);
ncclResult_t gdx_rdrv_rma_props(struct gdx_rdrv *d, void *coll, ncclRmaProperties_v16_t *p);
ncclResult_t gdx_rdrv_listen(struct gdx_rdrv *d, int dev, void *handle, void **lc);
/* ctx: what connect is given (NCCL gives the net plugin's context). */
ncclResult_t gdx_rdrv_connect(struct gdx_rdrv *d, void *ctx, void **handles, int nranks, int rank,
			      void *lc, void **coll);
ncclResult_t gdx_rdrv_close_listen(struct gdx_rdrv *d, void *lc);
ncclResult_t gdx_rdrv_close_coll(struct gdx_rdrv *d, void *coll);
ncclResult_t gdx_rdrv_create_context(struct gdx_rdrv *d, void *coll, int n, int tc, int stride,
				     void **rctx);
ncclResult_t gdx_rdrv_destroy_context(struct gdx_rdrv *d, void *rctx);
ncclResult_t gdx_rdrv_reg(struct gdx_rdrv *d, void *coll, void *data, size_t size, uint64_t flags,
			  void **mh);
ncclResult_t gdx_rdrv_dereg(struct gdx_rdrv *d, void *coll, void *mh);
ncclResult_t gdx_rdrv_iput(struct gdx_rdrv *d, void *rctx, int context, uint64_t src_off, void *src,
			   size_t size, uint64_t dst_off, void *dst, uint32_t rank, uint32_t flags,
			   void **req);
ncclResult_t gdx_rdrv_iput_signal(struct gdx_rdrv *d, void *rctx, int context, uint64_t src_off,
				  void *src, size_t size, uint64_t dst_off, void *dst,
				  uint32_t rank, uint64_t sig_off, void *sig, uint64_t value,
				  uint32_t op, bool strong, uint32_t flags, void **req);
ncclResult_t gdx_rdrv_iget(struct gdx_rdrv *d, void *rctx, int context, uint64_t remote_off,
			   void *remote, size_t size, uint64_t local_off, void *local,
			   uint32_t rank, uint32_t flags, void **req);
ncclResult_t gdx_rdrv_iflush(struct gdx_rdrv *d, void *rctx, int context, void *mh, uint32_t rank,
			     void **req);
ncclResult_t gdx_rdrv_test(struct gdx_rdrv *d, void *coll, void *req, int *done);
ncclResult_t gdx_rdrv_progress(struct gdx_rdrv *d, void *rctx);
ncclResult_t gdx_rdrv_query_error(struct gdx_rdrv *d, void *rctx, bool *has);
/* Tests req until done or an error (rmaProgress between tests, as
 * aws-ofi-nccl's tests do), failing the test after timeout_s. */
ncclResult_t gdx_rdrv_wait(struct gdx_rdrv *d, void *coll, void *rctx, void *req, double timeout_s);

#endif
