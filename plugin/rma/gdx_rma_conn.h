/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's connection setup (gdx_rma_conn.c): listen, the blocking
 * collective connect over every rank's handle (the state is the listen
 * comm's: NCCL may pass connect another plugin's context), closing, and
 * blocks of contexts with their RC QPs per (context, peer, rail), made and
 * connected together by every rank of the group. 0 or a negative errno,
 * after a WARN that names the cause.
 */
#ifndef GDX_RMA_CONN_H
#define GDX_RMA_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "rma/gdx_rma_comm.h"

int gdx_rma_listen(struct gdx_rma_init *owner, int dev, void *handle, struct gdx_rma_listen **lc_p);
int gdx_rma_close_listen(struct gdx_rma_listen *lc);
/* Every rank of the group at once; handles[i] is rank i's listen handle. */
int gdx_rma_connect(struct gdx_rma_listen *lc, void *const *handles, int nranks, int rank,
		    struct gdx_rma_coll **coll_p);
/* What is left open of it (contexts, windows) goes too, said in a WARN, and
 * then -EBUSY: NCCL destroys and deregisters those first. */
int gdx_rma_close_coll(struct gdx_rma_coll *coll);
/* Collective: n contexts, each with a connection to every rank at a distance
 * that is a multiple of stride (itself included); tc NCCL's traffic class or
 * -1. A rank that cannot make its part fails the call on every rank. */
int gdx_rma_ctx_create(struct gdx_rma_coll *coll, int n, int tc, int stride,
		       struct gdx_rma_ctx **ctx_p);
/* Local: the QPs, CQs and requests go; requests still in flight are said. */
int gdx_rma_ctx_destroy(struct gdx_rma_ctx *ctx);

/* For the tests only: no other file of the plugin uses what follows. */

/* 0 when every rank's status word (the first 4 bytes of each of its
 * nranks blocks of block bytes in all) is 0, else the first one's errno,
 * -EPROTO for a word no errno could be; said in a WARN naming what. */
int gdx_rma_all_ok(const struct gdx_rma_coll *coll, const uint8_t *all, size_t block,
		   const char *what);

#endif
