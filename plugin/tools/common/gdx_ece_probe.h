/* SPDX-License-Identifier: MIT */
/*
 * ECE asked of a device with no connection (gdx_ece_probe.c), for
 * gdx-doctor fabric: the plugin reads its own QPs' (rail/gdx_ece.h).
 */
#ifndef GDX_ECE_PROBE_H
#define GDX_ECE_PROBE_H

#include <infiniband/verbs.h>

/* The ECE a new RC QP on ctx has: 0, or the errno (EOPNOTSUPP: the provider
 * has none). For gdx-doctor, which has no connection to ask. */
int gdx_ece_probe(struct ibv_context *ctx, struct ibv_ece *out);

#endif
