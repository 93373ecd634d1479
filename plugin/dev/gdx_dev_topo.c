/* SPDX-License-Identifier: MIT */
/* The device table's topology (gdx_dev_topo.h). */
#include <string.h>

#include "dev/gdx_dev_topo.h"
#include "topo/gdx_topo_nccl.h"
#include "sys/gdx_log.h"

/* The topology as NCCL sees it: hwloc's (file, NCCL_GDX_TOPO_FILE's, or
 * this machine's) with NCCL_TOPO_FILE's pairing over it when the plugin has
 * no file of its own, and the Data Direct NICs at their DMA functions; said
 * in one line either way. */
int gdx_dev_topo_load(const char *file, const struct gdx_topo_home *homes, int nhomes,
		      struct gdx_topo **t_p, char *why, size_t len)
{
	struct gdx_topo_opts o = {.xml = file, .fd = -1, .homes = homes, .nhomes = nhomes};
	const char *nccl = gdx_topo_nccl_file(file);
	int ret;

	o.nccl_file = nccl;
	ret = gdx_topo_load_opts(&o, t_p, why, len);
	if (ret || !nccl)
		return ret;
	if ((*t_p)->nccl_err)
		GDX_WARN("NCCL_TOPO_FILE=%s: %s; the GPU-NIC pairing is hwloc's, where NCCL's "
			 "differs",
			 GDX_LOG_QUOTED(nccl), why);
	else
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "the GPU-NIC pairing is NCCL's topology file's (NCCL_TOPO_FILE=%s): %d "
			 "pairs from it",
			 GDX_LOG_QUOTED(nccl), (*t_p)->nccl_pairs);
	return 0;
}
