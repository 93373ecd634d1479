/* SPDX-License-Identifier: MIT */
/*
 * The data path (gdx_p2p.c): isend, irecv and test on live comms (iflush is
 * gdx_flush.h's).
 * No allocation, lock or system call beyond what the verbs provider does.
 */
#ifndef GDX_P2P_H
#define GDX_P2P_H

#include <stdint.h>

#include "comm/gdx_comm.h"

/* phandle(s): NCCL's profiler handles (v10+; NULL: no events, gdx_prof.h). */
int gdx_isend(struct gdx_send_comm *sc, void *data, uint64_t size, int tag, struct gdx_mr *mr,
	      void *phandle, struct gdx_request **req_p);
int gdx_irecv(struct gdx_recv_comm *rc, int n, void **data, const uint64_t *sizes, const int *tags,
	      struct gdx_mr **mrs, void **phandles, struct gdx_request **req_p);
/* *done_p = 1 and the sizes when complete (one per buffer of a grouped
 * receive; sizes may be NULL); the request is then free again. */
int gdx_test(struct gdx_request *req, int *done_p, int *sizes);
/* Posts the receives a receive comm keeps ahead on every rail. */
int gdx_recv_comm_start(struct gdx_recv_comm *rc);
/* Before a send comm's QPs go: waits (bounded) until the inline sends it
 * already reported done have reached the peer. */
void gdx_send_drain(struct gdx_send_comm *sc);

#endif
