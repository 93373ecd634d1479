/* SPDX-License-Identifier: MIT */
/*
 * The GPU flush path of a receive comm (gdx_flush.c): iflush, and the
 * loopback QPs it reads through, when receives may land in GPU memory (or
 * NCCL_GDX_GDR_FLUSH=2); none otherwise.
 */
#ifndef GDX_FLUSH_H
#define GDX_FLUSH_H

#include "comm/gdx_comm.h"

/* 0 when made, already there, or not wanted; a negative errno after a WARN. */
int gdx_flush_create(struct gdx_recv_comm *rc);
void gdx_flush_destroy(struct gdx_recv_comm *rc);
/* 0 with *req_p NULL when nothing needs flushing (NCCL counts it done). */
int gdx_iflush(struct gdx_recv_comm *rc, int n, void **data, const int *sizes, struct gdx_mr **mrs,
	       struct gdx_request **req_p);

#endif
