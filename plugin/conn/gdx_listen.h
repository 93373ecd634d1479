/* SPDX-License-Identifier: MIT */
/*
 * The listening end of connection setup (gdx_listen.c): listen, and accept
 * as resumable state machines, one per connection taken, over the
 * out-of-band socket (gdx_handshake.h); closing a listener and a receive
 * comm. All return 0, or a negative errno; accept leaves *comm_p NULL while
 * no handshake is complete.
 */
#ifndef GDX_LISTEN_H
#define GDX_LISTEN_H

#include <stddef.h>

#include "comm/gdx_comm.h"

/* The out-of-band interface init() would use, logged (NET) and said in desc
 * ("eth0 10.0.0.5") for the INIT line; -ENODEV after a WARN when there is
 * none. */
int gdx_oob_check(char *desc, size_t len);
/* The out-of-band address to listen on (NCCL_GDX_SOCKET_IFNAME), and its
 * interface's name; -ENODEV after a WARN when there is none. */
int gdx_oob_addr(struct gdx_sockaddr *addr, char *ifname);

int gdx_listen(struct gdx_ctx *ctx, int dev, void *handle, struct gdx_listen_comm **comm_p);
int gdx_accept(struct gdx_listen_comm *lc, struct gdx_recv_comm **comm_p);
int gdx_close_listen(struct gdx_listen_comm *lc);
int gdx_close_recv(struct gdx_recv_comm *rc);

/* For the tests only: no other file of the plugin uses what follows. */

/* Incoming connections lc holds, whether their hello has come or not. */
int gdx_listen_held(const struct gdx_listen_comm *lc);

#endif
