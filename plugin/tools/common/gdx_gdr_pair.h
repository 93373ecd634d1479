/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA verdicts the plugin never needs (gdx_gdr_pair.c), for
 * gdx-doctor check: every GPU-NIC pair's, and each GPU's BAR1. The plugin
 * judges a NIC by its nearest GPU (gdr/gdx_gdr_verdict.h).
 */
#ifndef GDX_GDR_PAIR_H
#define GDX_GDR_PAIR_H

#include <stddef.h>

#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_verdict.h"

/* The same for one GPU-NIC pair (indices into p->gpus and p->nics): direct
 * only when NCCL would use the direct path for it too (path class within
 * NCCL_NET_GDR_LEVEL). Returns 0 or -EINVAL. */
int gdx_gdr_pair_verdict(const struct gdx_gdr_probe *p, int gpu, int nic,
			 enum gdx_gdr_policy policy, struct gdx_gdr_verdict *v);

/* A BAR1 under GDX_GDR_BAR1_TINY: DEGRADED, with text; OK when fine or unknown. */
enum gdx_gdr_level gdx_gdr_bar1_check(const struct gdx_gdr_probe *p, int gpu, char *text,
				      size_t len);

#endif
