/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's data calls (gdx_rma_post.c): iput (RDMA WRITE), iputSignal
 * (the puts, then an atomic fetch-and-add once they are placed:
 * gdx_rma_progress.h says how), iget (RDMA READ) and iflush (an RDMA READ of
 * the window through the connection to itself). Each checks what NCCL
 * passed first, and refuses with a WARN naming what was wrong and -EBADR:
 * a context or rank out of range or not connected, a handle that is not a
 * live window of the collective comm, ranges outside a window, a signal
 * offset not 8-byte aligned, an operation other than INC and ADD. None
 * blocks; each returns a request (a flush that has nothing to do returns
 * one that is done at the first test).
 */
#ifndef GDX_RMA_POST_H
#define GDX_RMA_POST_H

#include <stdbool.h>
#include <stdint.h>

#include "rma/gdx_rma_comm.h"

/* hold: NCCL's aggregate hint (v15+), more requests for the peer follow. */
int gdx_rma_iput(struct gdx_rma_ctx *x, int context, uint64_t src_off, void *src, uint64_t size,
		 uint64_t dst_off, void *dst, uint32_t rank, bool hold, struct gdx_rma_req **req_p);
/* size 0 with src and dst NULL: the signal alone. */
int gdx_rma_iput_signal(struct gdx_rma_ctx *x, int context, uint64_t src_off, void *src,
			uint64_t size, uint64_t dst_off, void *dst, uint32_t rank, uint64_t sig_off,
			void *sig, uint64_t value, uint32_t op, bool strong, bool hold,
			struct gdx_rma_req **req_p);
int gdx_rma_iget(struct gdx_rma_ctx *x, int context, uint64_t remote_off, void *remote,
		 uint64_t size, uint64_t local_off, void *local, uint32_t rank, bool hold,
		 struct gdx_rma_req **req_p);
int gdx_rma_iflush(struct gdx_rma_ctx *x, int context, void *mh, uint32_t rank,
		   struct gdx_rma_req **req_p);

#endif
