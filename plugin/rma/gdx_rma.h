/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's NCCL boundary (gdx_rma.c), in the newest API's terms: the
 * opt-in, the checks of every handle NCCL passes back, and the one mapping
 * of an internal error to an ncclResult_t for the RMA tables. The exported
 * tables (gdx_rma_tables.c, ncclRmaPlugin_v14 to _v16) are thin adapters
 * onto these.
 *
 * Off unless NCCL_GDX_RMA=1: NCCL takes the first RMA table whose init
 * succeeds, and looks in the net plugin's library too, so an init that
 * succeeded by default would take every job's one-sided traffic off NCCL's
 * own proxy. Until it is set, init declines with one INFO line saying how
 * to turn it on.
 */
#ifndef GDX_RMA_H
#define GDX_RMA_H

#include <stdbool.h>

#include <nccl/rma.h>

/* The properties' maxRecvs: NCCL keeps 32 x this many requests in flight per
 * peer and context. */
#define GDX_RMA_MAX_RECVS 1

/* Every entry point returns through gdx_rma.c's one mapping of an internal
 * error (0 or a negative errno) to an NCCL result for the RMA tables:
 * -EBADR is ncclInvalidArgument there (NCCL passed something wrong), as
 * NCCL's own RMA proxies answer it. */

/* version: the table's (14, 15, 16), for the log lines. */
ncclResult_t gdx_rma_api_init(void **ctx, uint64_t comm_id, ncclDebugLogger_t logger, int version);
ncclResult_t gdx_rma_api_finalize(void *ctx);
ncclResult_t gdx_rma_api_devices(int *ndev);
ncclResult_t gdx_rma_api_props(int dev, ncclNetProperties_v12_t *props);
ncclResult_t gdx_rma_api_rma_props(void *coll, ncclRmaProperties_v16_t *props);
ncclResult_t gdx_rma_api_listen(void *ctx, int dev, void *handle, void **listen_comm);
/* ctx may be another plugin's (NCCL passes the net context): not used. */
ncclResult_t gdx_rma_api_connect(void *ctx, void *handles[], int nranks, int rank,
				 void *listen_comm, void **coll);
ncclResult_t gdx_rma_api_create_context(void *coll, const ncclRmaConfig_v14_t *config,
					void **rma_ctx);
ncclResult_t gdx_rma_api_reg_mr_sym(void *coll, void *data, size_t size, int type,
				    uint64_t mr_flags, void **mhandle);
ncclResult_t gdx_rma_api_reg_mr_sym_dmabuf(void *coll, void *data, size_t size, int type,
					   uint64_t offset, int fd, uint64_t mr_flags,
					   void **mhandle);
ncclResult_t gdx_rma_api_dereg_mr_sym(void *coll, void *mhandle);
ncclResult_t gdx_rma_api_destroy_context(void *rma_ctx);
ncclResult_t gdx_rma_api_close_coll(void *coll);
ncclResult_t gdx_rma_api_close_listen(void *listen_comm);
/* flags: v15's optFlags (0 for v14). */
ncclResult_t gdx_rma_api_iput(void *rma_ctx, int context, uint64_t src_off, void *src, size_t size,
			      uint64_t dst_off, void *dst, uint32_t rank, uint32_t flags,
			      void **request);
ncclResult_t gdx_rma_api_iput_signal(void *rma_ctx, int context, uint64_t src_off, void *src,
				     size_t size, uint64_t dst_off, void *dst, uint32_t rank,
				     uint64_t sig_off, void *sig, uint64_t value, uint32_t op,
				     bool strong, uint32_t flags, void **request);
ncclResult_t gdx_rma_api_iget(void *rma_ctx, int context, uint64_t remote_off, void *remote,
			      size_t size, uint64_t local_off, void *local, uint32_t rank,
			      uint32_t flags, void **request);
ncclResult_t gdx_rma_api_iflush(void *rma_ctx, int context, void *mhandle, uint32_t rank,
				void **request);
ncclResult_t gdx_rma_api_test(void *coll, void *request, int *done);
ncclResult_t gdx_rma_api_progress(void *rma_ctx);
ncclResult_t gdx_rma_api_query_last_error(void *rma_ctx, bool *has_error);

#endif
