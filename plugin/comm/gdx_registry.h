/* SPDX-License-Identifier: MIT */
/*
 * The live comms (gdx_registry.c): listen, send and receive comms from when
 * they are made until they are closed, in a pointer set (O(1) however many),
 * so that a close or a call on something never opened, or already closed, is
 * refused with an error instead of touching freed memory, and finalize closes
 * what a context leaves behind. One of the three registries of what NCCL can
 * hand back to us: the connects under way are gdx_connect.c's, the contexts
 * gdx_net.c's. Any thread may call these.
 */
#ifndef GDX_REGISTRY_H
#define GDX_REGISTRY_H

#include <stdbool.h>

struct gdx_ctx;

/* 0, -EEXIST when comm is live already, -ENOMEM. */
int gdx_registry_add(const void *comm);
/* Returns 0 when comm was live (and is now forgotten), -EBADF otherwise. */
int gdx_registry_remove(const void *comm);

/* Live comms, so a close of something never opened or already closed is an
 * error and not a crash. */
bool gdx_registry_has(const void *comm);
int gdx_registry_count(void);

/* A live comm that ctx owns (its first field says its kind), NULL when there
 * is none. */
const void *gdx_registry_find_owned(struct gdx_ctx *ctx);

/* Forgets every comm (unload). */
void gdx_registry_fini(void);

#endif
