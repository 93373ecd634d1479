/* SPDX-License-Identifier: MIT */
/*
 * The few mlx5 direct-verbs calls the plugin makes, found at run time in
 * libmlx5.so.1 (never linked: without it, or on an older one, there is no
 * Data Direct and the plugin loads as before). Declared here from the
 * library's ABI, as rdma-core 52 exports them, because the build machine's
 * mlx5dv.h may be older than the calls.
 */
#ifndef GDX_MLX5DV_H
#define GDX_MLX5DV_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* mlx5dv_reg_dmabuf_mr's mlx5_access: the DMA goes by the Data Direct function */
#define GDX_MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT (1 << 0)

struct gdx_mlx5dv {
	bool (*is_supported)(struct ibv_device *device);
	/* 0 and the sysfs path below /sys ("/devices/pci..."); ENODEV: not a Data
	 * Direct device; another errno: the call failed */
	int (*get_data_direct_sysfs_path)(struct ibv_context *ctx, char *buf, size_t len);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset, size_t length,
					uint64_t iova, int fd, int access, int mlx5_access);
};

/* The calls, once per process: NULL when libmlx5.so.1 is missing or lacks
 * any of them (why, said once at INFO under NET). */
const struct gdx_mlx5dv *gdx_mlx5dv(void);

/* For the tests only: no other file of the plugin uses what follows. The
 * seam: a symbol of libmlx5.so.1, or NULL. The plugin's opens the library;
 * the unit tests' scripted NIC (tests/lib/gdx_fake_nic.c) links its own in
 * place of it, to play an mlx5 device or a machine without one. */
void *gdx_mlx5dv_sym(const char *name);

#endif
