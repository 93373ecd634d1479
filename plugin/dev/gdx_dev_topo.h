/* SPDX-License-Identifier: MIT */
/*
 * The topology the device table ranks its NICs on, as NCCL sees it: hwloc's
 * (NCCL_GDX_TOPO_FILE's, or this machine's), with NCCL_TOPO_FILE's pairing
 * over it when the plugin has no file of its own, and each Data Direct NIC
 * placed at its DMA function.
 */
#ifndef GDX_DEV_TOPO_H
#define GDX_DEV_TOPO_H

#include <stddef.h>

#include "topo/gdx_topo.h"

/* Loads it (file: NCCL_GDX_TOPO_FILE, NULL this machine; homes: the NICs
 * at a DMA function of their own), saying in one line whose pairing it is;
 * gdx_topo_load_opts()'s return. */
int gdx_dev_topo_load(const char *file, const struct gdx_topo_home *homes, int nhomes,
		      struct gdx_topo **t_p, char *why, size_t len);

#endif
