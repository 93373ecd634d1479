/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dev/gdx_data_direct.h"
#include "dev/gdx_mlx5dv.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "sys/gdx_sysfs.h"

/* Data Direct is only worth it where DMA-BUF registration works: a dummy
 * registration of fd -1 fails with EBADF where the kernel and the provider
 * take DMA-BUF, with EOPNOTSUPP or EPROTONOSUPPORT where not. */
static bool gdx_dd_dmabuf_takes(const struct gdx_mlx5dv *dv, struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_mr *mr;
	bool takes = true;

	if (!pd)
		return false;
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
	takes &= mr || (errno != EOPNOTSUPP && errno != EPROTONOSUPPORT);
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = dv->reg_dmabuf_mr(pd, 0, 0, 0, -1, 0, 0);
	takes &= mr || (errno != EOPNOTSUPP && errno != EPROTONOSUPPORT);
	if (mr)
		ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	return takes;
}

int gdx_dd_path(struct ibv_device *dev, struct ibv_context *ctx, char *path, size_t len)
{
	const struct gdx_mlx5dv *dv;
	const char *root = gdx_sysfs_root();
	char rel[256] = "";
	size_t rl = strlen(root);
	int ret;

	if (gdx_params.data_direct == GDX_DD_OFF || !(dv = gdx_mlx5dv()) ||
	    !dv->is_supported(dev) || !gdx_dd_dmabuf_takes(dv, ctx))
		return 0;
	ret = dv->get_data_direct_sysfs_path(ctx, rel, sizeof(rel));
	ret = ret < 0 ? -ret : ret; /* an errno, whichever sign the library gives it */
	if (ret == ENODEV)
		return 0; /* an mlx5 device without Data Direct */
	if (ret || rel[0] != '/') {
		GDX_WARN("mlx5dv_get_data_direct_sysfs_path(%s) failed: %s; its own PCI function "
			 "is used",
			 ibv_get_device_name(dev), ret ? strerror(ret) : "not a sysfs path");
		return 0;
	}
	if (rl && root[rl - 1] == '/')
		rl--;
	snprintf(path, len, "%.*s%s", (int)rl, root, rel);
	GDX_INFO(NCCL_INIT | NCCL_NET, "%s: Data Direct DMA function at %s",
		 ibv_get_device_name(dev), path);
	return 1;
}

struct ibv_mr *gdx_dd_reg_dmabuf(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access)
{
	const struct gdx_mlx5dv *dv = gdx_mlx5dv();

	if (!dv) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return dv->reg_dmabuf_mr(pd, offset, length, iova, fd, access,
				 GDX_MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT);
}
