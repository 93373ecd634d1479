/* SPDX-License-Identifier: MIT */
/* The loaded NCCL's version (gdx_nccl_version.h). */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "sys/gdx_nccl_version.h"

typedef int (*gdx_nccl_get_version_fn)(int *version);

struct gdx_nccl_find {
	char path[PATH_MAX];
};

/* The first loaded object named libnccl.so*: NCCL itself, whichever name
 * (libnccl.so.2, a wheel's copy) it was loaded by. */
static int gdx_nccl_find_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct gdx_nccl_find *f = arg;
	const char *name = info->dlpi_name, *base;

	(void)size;
	if (!name || !name[0])
		return 0;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	if (strncmp(base, "libnccl.so", strlen("libnccl.so")))
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", name);
	return 1;
}

int gdx_nccl_version(void)
{
	gdx_nccl_get_version_fn get;
	struct gdx_nccl_find f = {{0}};
	void *h;
	int v = 0;

	/* An executable linked with NCCL has it in the global scope. */
	*(void **)&get = dlsym(RTLD_DEFAULT, "ncclGetVersion");
	if (get && get(&v) == 0 && v > 0)
		return v;
	/* NCCL loaded with RTLD_LOCAL (a framework's extension module): by
	 * name, without loading anything new. */
	if (!dl_iterate_phdr(gdx_nccl_find_one, &f))
		return 0;
	h = dlopen(f.path, RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	*(void **)&get = dlsym(h, "ncclGetVersion");
	if (!get || get(&v) != 0 || v < 0)
		v = 0;
	dlclose(h);
	return v;
}
