/* SPDX-License-Identifier: MIT */
/*
 * The connecting end of connection setup (gdx_connect.c): connect as a
 * resumable state machine over the out-of-band socket (gdx_handshake.h), the
 * connects under way, and closing a send comm. All return 0, or a negative
 * errno; connect leaves *comm_p NULL while the handshake is still under way.
 */
#ifndef GDX_CONNECT_H
#define GDX_CONNECT_H

#include <stdint.h>

#include "comm/gdx_comm.h"

/* tc: the connection's traffic class, -1 for the context's or NCCL_GDX_TC. */
int gdx_connect(struct gdx_ctx *ctx, int dev, int tc, void *handle, struct gdx_send_comm **comm_p);
int gdx_close_send(struct gdx_send_comm *sc);
/* Frees the connects under way that ctx owns, but one a thread is driving;
 * returns how many. */
int gdx_connects_close_owned(struct gdx_ctx *ctx);
/* Frees connects that NCCL started and never finished (unload). */
void gdx_connects_fini(void);

/* For the tests only: no other file of the plugin uses what follows. */

/*
 * The acceptor's answer as the connector reads it: its hello, then its
 * metadata, each in whatever pieces the socket gives. The connector's
 * recv-hello and recv-meta states are these calls; they stand apart so that
 * hostile answers can be fed to them without an RDMA device
 * (tests/fuzz/connect.c, tests/unit/handshake.c).
 */
struct gdx_conn_reply {
	struct gdx_xfer xfer;
	struct gdx_wire_hello hello;
	struct gdx_wire_meta meta;
};

/* Sets r to read a hello. */
void gdx_conn_reply_start(struct gdx_conn_reply *r);
/* Reads the hello from fd: 0 once it is whole and is the listener's (its
 * magic and version, the handle's nonce, the rail count its handle said),
 * r then set to read the metadata; -EAGAIN; -ECONNABORTED, not logged, when
 * the listener closed the connection unread (a new one may get through);
 * any other error (-ECONNREFUSED for a refusal) after one WARN naming peer. */
int gdx_conn_reply_hello(struct gdx_conn_reply *r, int fd, uint64_t nonce, uint32_t rails,
			 const char *peer);
/* Reads the metadata: 0 once it is whole and valid (unpacked in r->meta, its
 * strings printable), -EAGAIN, or an error after one WARN naming peer. */
int gdx_conn_reply_meta(struct gdx_conn_reply *r, int fd, const char *peer);

/* Connects under way: started by connect() and neither handed back, failed
 * nor freed as abandoned yet. */
int gdx_connects_pending(void);

#endif
