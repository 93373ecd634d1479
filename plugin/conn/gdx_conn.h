/* SPDX-License-Identifier: MIT */
/*
 * Connection setup as a whole (gdx_conn.c), over its parts: the connector
 * (gdx_connect.h) and the listener (gdx_listen.h), the two ends of the
 * out-of-band handshake (gdx_handshake.h), and the live comms
 * (gdx_registry.h).
 */
#ifndef GDX_CONN_H
#define GDX_CONN_H

struct gdx_ctx;

/* Closes every comm and pending connect ctx owns; returns how many. */
int gdx_conn_close_owned(struct gdx_ctx *ctx);
/* Frees connects that NCCL started and never finished, and the registry of
 * live comms (unload). */
void gdx_conn_fini(void);

#endif
