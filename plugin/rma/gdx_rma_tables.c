/* SPDX-License-Identifier: MIT */
/*
 * The exported RMA tables, ncclRmaPlugin_v14 to ncclRmaPlugin_v16: thin
 * adapters onto gdx_rma.c. v14 has no optFlags (0 is passed on); v15 adds
 * them; v16 adds getRmaProperties. NCCL 2.30.7 loads v14, 2.31 v15 and
 * 2.32.3 v16, each trying the newest it knows first.
 */
#include "rma/gdx_rma.h"

#define GDX_EXPORT   __attribute__((visibility("default")))
#define GDX_RMA_NAME "GDX"

static ncclResult_t gdx_rma_init_v14(void **ctx, uint64_t comm_id, ncclDebugLogger_t logger)
{
	return gdx_rma_api_init(ctx, comm_id, logger, 14);
}

static ncclResult_t gdx_rma_init_v15(void **ctx, uint64_t comm_id, ncclDebugLogger_t logger)
{
	return gdx_rma_api_init(ctx, comm_id, logger, 15);
}

static ncclResult_t gdx_rma_init_v16(void **ctx, uint64_t comm_id, ncclDebugLogger_t logger)
{
	return gdx_rma_api_init(ctx, comm_id, logger, 16);
}

static ncclResult_t gdx_rma_create_context_v14(void *coll, ncclRmaConfig_v14_t *config,
					       void **rma_ctx)
{
	return gdx_rma_api_create_context(coll, config, rma_ctx);
}

static ncclResult_t gdx_rma_iput_v14(void *rma_ctx, int context, uint64_t src_off, void *src,
				     size_t size, uint64_t dst_off, void *dst, uint32_t rank,
				     void **request)
{
	return gdx_rma_api_iput(rma_ctx, context, src_off, src, size, dst_off, dst, rank,
				ncclRmaOptFlagsDefault, request);
}

static ncclResult_t gdx_rma_iput_signal_v14(void *rma_ctx, int context, uint64_t src_off, void *src,
					    size_t size, uint64_t dst_off, void *dst, uint32_t rank,
					    uint64_t sig_off, void *sig, uint64_t value,
					    uint32_t op, bool strong, void **request)
{
	return gdx_rma_api_iput_signal(rma_ctx, context, src_off, src, size, dst_off, dst, rank,
				       sig_off, sig, value, op, strong, ncclRmaOptFlagsDefault,
				       request);
}

static ncclResult_t gdx_rma_iget_v14(void *rma_ctx, int context, uint64_t remote_off, void *remote,
				     size_t size, uint64_t local_off, void *local, uint32_t rank,
				     void **request)
{
	return gdx_rma_api_iget(rma_ctx, context, remote_off, remote, size, local_off, local, rank,
				ncclRmaOptFlagsDefault, request);
}

#define GDX_RMA_TABLE_COMMON                                                                      \
	.name = GDX_RMA_NAME, .devices = gdx_rma_api_devices, .getProperties = gdx_rma_api_props, \
	.listen = gdx_rma_api_listen, .connect = gdx_rma_api_connect,                             \
	.regMrSym = gdx_rma_api_reg_mr_sym, .regMrSymDmaBuf = gdx_rma_api_reg_mr_sym_dmabuf,      \
	.deregMrSym = gdx_rma_api_dereg_mr_sym, .destroyContext = gdx_rma_api_destroy_context,    \
	.closeColl = gdx_rma_api_close_coll, .closeListen = gdx_rma_api_close_listen,             \
	.iflush = gdx_rma_api_iflush, .test = gdx_rma_api_test,                                   \
	.rmaProgress = gdx_rma_api_progress, .queryLastError = gdx_rma_api_query_last_error,      \
	.finalize = gdx_rma_api_finalize

/* NCCL 2.30.7 (after v13 and GIN v13 fall-backs this plugin does not make). */
GDX_EXPORT const ncclRma_v14_t ncclRmaPlugin_v14 = {
	GDX_RMA_TABLE_COMMON,
	.init = gdx_rma_init_v14,
	.createContext = gdx_rma_create_context_v14,
	.iput = gdx_rma_iput_v14,
	.iputSignal = gdx_rma_iput_signal_v14,
	.iget = gdx_rma_iget_v14,
};

/* NCCL 2.31: optFlags, the aggregate hint held as a doorbell not yet rung. */
GDX_EXPORT const ncclRma_v15_t ncclRmaPlugin_v15 = {
	GDX_RMA_TABLE_COMMON,
	.init = gdx_rma_init_v15,
	.createContext = gdx_rma_create_context_v14,
	.iput = gdx_rma_api_iput,
	.iputSignal = gdx_rma_api_iput_signal,
	.iget = gdx_rma_api_iget,
};

/* NCCL 2.32.3: getRmaProperties. */
GDX_EXPORT const ncclRma_v16_t ncclRmaPlugin_v16 = {
	GDX_RMA_TABLE_COMMON,
	.init = gdx_rma_init_v16,
	.getRmaProperties = gdx_rma_api_rma_props,
	.createContext = gdx_rma_create_context_v14,
	.iput = gdx_rma_api_iput,
	.iputSignal = gdx_rma_api_iput_signal,
	.iget = gdx_rma_api_iget,
};
