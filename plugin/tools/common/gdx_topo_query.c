/* SPDX-License-Identifier: MIT */
/* gdx-doctor's queries of a loaded topology (gdx_topo_query.h): read from
 * what gdx_topo_load() kept, computed nothing new. */
#include <errno.h>

#include "tools/common/gdx_topo_query.h"

const char *gdx_topo_hostname(const struct gdx_topo *t)
{
	return t && t->hostname[0] ? t->hostname : NULL;
}

int gdx_topo_nnics(const struct gdx_topo *t)
{
	return t->nnics;
}

int gdx_topo_nbridges(const struct gdx_topo *t)
{
	return t->nbridges;
}

const struct gdx_topo_bridge *gdx_topo_bridge(const struct gdx_topo *t, int i)
{
	return i >= 0 && i < t->nbridges ? &t->bridges[i] : NULL;
}

static int gdx_topo_copy_order(const struct gdx_topo *t, int gpu, int n, int *nics, int max)
{
	if (gpu < 0 || gpu >= t->ngpus)
		return -EINVAL;
	for (int i = 0; i < n && i < max; i++)
		nics[i] = t->order[(size_t)gpu * (size_t)t->nnics + (size_t)i];
	return n;
}

int gdx_topo_gpu_nics(const struct gdx_topo *t, int gpu, int *nics, int max)
{
	return gdx_topo_copy_order(t, gpu, t->nnics, nics, max);
}

int gdx_topo_gpu_group(const struct gdx_topo *t, int gpu, int *nics, int max)
{
	if (gpu < 0 || gpu >= t->ngpus)
		return -EINVAL;
	return gdx_topo_copy_order(t, gpu, t->group_len[gpu], nics, max);
}
