/* SPDX-License-Identifier: MIT */
/*
 * The Data Direct functions a facts file names (gdx_gdr_facts.h's
 * "datadirect" lines), read before the topology so that gdx-doctor check
 * places those NICs where the plugin and NCCL place them. The plugin learns
 * them from mlx5dv (dev/gdx_data_direct.h) and never reads a facts file.
 */
#ifndef GDX_GDR_HOMES_H
#define GDX_GDR_HOMES_H

#include <stddef.h>

#include "gdr/gdx_gdr.h"

/* NICs at a PCI device of their own (Data Direct), for gdx_gdr_opts.homes. */
struct gdx_gdr_homes {
	int n;
	struct gdx_topo_home home[GDX_GDR_MAX_NICS];
	char nic[GDX_GDR_MAX_NICS][GDX_TOPO_NAME_LEN];
	char pci[GDX_GDR_MAX_NICS][GDX_TOPO_PCI_LEN];
};

/* The "datadirect" facts of a facts file (file inside the saved tree root
 * when root is not NULL), which the topology is placed by before the other
 * facts are read. 0, or the facts reader's errors with why set. */
int gdx_gdr_facts_homes(const char *root, const char *file, struct gdx_gdr_homes *h, char *why,
			size_t why_len);

#endif
