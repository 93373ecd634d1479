/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <gdx/gdx_comm.h>
#include <gdx/gdx_log.h>

#define GDX_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static void gdx_reg_warn(const struct gdx_rail *r, const void *data, uint64_t size, int err)
{
	struct rlimit rl;

	if (err == ENOMEM && !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		GDX_WARN("ibv_reg_mr(%s, %p, %llu bytes) failed: %s; the memlock limit is %llu "
			 "KiB: raise it (ulimit -l unlimited, or LimitMEMLOCK=infinity)",
			 r->dev->ibdev, data, (unsigned long long)size, strerror(err),
			 (unsigned long long)rl.rlim_cur / 1024);
	else if (err == EFAULT)
		GDX_WARN("ibv_reg_mr(%s, %p, %llu bytes) failed: %s; the range is not mapped "
			 "memory of this process",
			 r->dev->ibdev, data, (unsigned long long)size, strerror(err));
	else
		GDX_WARN("ibv_reg_mr(%s, %p, %llu bytes) failed: %s", r->dev->ibdev, data,
			 (unsigned long long)size, strerror(err));
}

int gdx_reg_mr(struct gdx_comm *comm, void *data, uint64_t size, int type, struct gdx_mr **mr_p)
{
	struct gdx_mr *mr;
	int ret;

	if (type != NCCL_PTR_HOST) {
		GDX_WARN("%s: registration of memory type %d refused: this device advertises "
			 "host memory only (NCCL_PTR_HOST)",
			 gdx_vdev_get(comm->dev_index)->name, type);
		return -EINVAL;
	}
	if (size == 0 || !data) {
		GDX_WARN("%s: registration of %llu bytes at %p refused: empty range",
			 gdx_vdev_get(comm->dev_index)->name, (unsigned long long)size, data);
		return -EINVAL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mr->addr = (uintptr_t)data;
	mr->size = size;
	for (int r = 0; r < comm->nrails; r++) {
		struct gdx_rail *rail = &comm->rails[r];

		mr->mrs[r] = ibv_reg_mr(rail->pd, data, size, GDX_MR_ACCESS);
		if (!mr->mrs[r]) {
			ret = errno ? -errno : -ENOMEM;
			gdx_reg_warn(rail, data, size, -ret);
			goto err;
		}
		mr->nrails = r + 1;
	}
	mr->kind = GDX_KIND_MR;
	*mr_p = mr;
	return 0;

err:
	for (int r = 0; r < mr->nrails; r++)
		ibv_dereg_mr(mr->mrs[r]);
	free(mr);
	return ret;
}

int gdx_dereg_mr(struct gdx_mr *mr)
{
	int ret = 0;

	if (!mr || mr->kind != GDX_KIND_MR) {
		GDX_WARN("deregMr of %p, which is not a live memory handle", (void *)mr);
		return -EINVAL;
	}
	for (int r = 0; r < mr->nrails; r++) {
		int err = ibv_dereg_mr(mr->mrs[r]);

		if (err) {
			GDX_WARN("ibv_dereg_mr failed: %s", strerror(err));
			ret = -err;
		}
	}
	mr->kind = GDX_KIND_DEAD;
	free(mr);
	return ret;
}
