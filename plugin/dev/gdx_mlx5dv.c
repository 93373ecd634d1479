/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "dev/gdx_mlx5dv.h"
#include "sys/gdx_log.h"

/* Weak so a test program's own takes its place (gdx_mlx5dv.h); the .so
 * exports nothing of it (exports.map), so nothing replaces it there. */
__attribute__((weak)) void *gdx_mlx5dv_sym(const char *name)
{
	static void *lib;
	static bool tried;

	if (!tried) {
		tried = true;
		lib = dlopen("libmlx5.so.1", RTLD_NOW | RTLD_LOCAL);
	}
	return lib ? dlsym(lib, name) : NULL;
}

static struct gdx_mlx5dv gdx_mlx5dv_calls;
static bool gdx_mlx5dv_found;
static pthread_once_t gdx_mlx5dv_once = PTHREAD_ONCE_INIT;

static void gdx_mlx5dv_load(void)
{
	struct gdx_mlx5dv *dv = &gdx_mlx5dv_calls;

	*(void **)&dv->is_supported = gdx_mlx5dv_sym("mlx5dv_is_supported");
	*(void **)&dv->get_data_direct_sysfs_path =
		gdx_mlx5dv_sym("mlx5dv_get_data_direct_sysfs_path");
	*(void **)&dv->reg_dmabuf_mr = gdx_mlx5dv_sym("mlx5dv_reg_dmabuf_mr");
	gdx_mlx5dv_found = dv->is_supported && dv->get_data_direct_sysfs_path && dv->reg_dmabuf_mr;
	if (!gdx_mlx5dv_found)
		GDX_INFO(NCCL_NET,
			 "libmlx5.so.1 %s: no Data Direct DMA (it needs rdma-core 52's "
			 "mlx5dv_get_data_direct_sysfs_path and mlx5dv_reg_dmabuf_mr)",
			 dv->is_supported ? "lacks the Data Direct calls" : "is not there");
}

const struct gdx_mlx5dv *gdx_mlx5dv(void)
{
	pthread_once(&gdx_mlx5dv_once, gdx_mlx5dv_load);
	return gdx_mlx5dv_found ? &gdx_mlx5dv_calls : NULL;
}
