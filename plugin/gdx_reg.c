/* SPDX-License-Identifier: MIT */
/*
 * Memory registration. Every registration goes through the registration cache
 * of each rail's device, so a buffer registered once serves every comm on
 * that device (regIsGlobal) and a second registration inside it is a hit.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <gdx/gdx_comm.h>
#include <gdx/gdx_dev.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_reg.h>

#define GDX_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* Names the likely cause: the memlock limit, an unmapped range, or the errno. */
static void gdx_reg_warn(const char *ibdev, uintptr_t start, uintptr_t end, int err)
{
	unsigned long long len = (unsigned long long)(end - start);
	struct rlimit rl;

	if (err == ENOMEM && !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		GDX_WARN("ibv_reg_mr(%s, %p, %llu bytes) failed: %s; the memlock limit is %llu "
			 "KiB: raise it (ulimit -l unlimited, or LimitMEMLOCK=infinity)",
			 ibdev, (void *)start, len, strerror(err),
			 (unsigned long long)rl.rlim_cur / 1024);
	else if (err == EFAULT)
		GDX_WARN("ibv_reg_mr(%s, %p, %llu bytes) failed: %s; the range is not mapped "
			 "memory of this process",
			 ibdev, (void *)start, len, strerror(err));
	else
		GDX_WARN("ibv_reg_mr(%s, %p, %llu bytes) failed: %s", ibdev, (void *)start, len,
			 strerror(err));
}

static int gdx_reg_verbs(void *arg, uintptr_t start, uintptr_t end, void **handle_p)
{
	struct gdx_ibctx *ib = arg;
	struct ibv_mr *mr = ibv_reg_mr(ib->pd, (void *)start, end - start, GDX_MR_ACCESS);

	if (!mr) {
		int err = errno ? errno : ENOMEM;

		gdx_reg_warn(ibv_get_device_name(ib->ctx->device), start, end, err);
		return -err;
	}
	*handle_p = mr;
	return 0;
}

static void gdx_dereg_verbs(void *arg, void *handle)
{
	int err = ibv_dereg_mr(handle);

	(void)arg;
	if (err)
		GDX_WARN("ibv_dereg_mr failed: %s", strerror(err));
}

static const struct gdx_regcache_ops gdx_reg_verbs_ops = {.reg = gdx_reg_verbs,
							  .dereg = gdx_dereg_verbs};

/* The registration cache of dev's protection domain, made on first use; the
 * device table frees it with the PD. */
static int gdx_reg_cache(struct gdx_dev *dev, struct gdx_regcache **cache_p)
{
	struct gdx_ibctx *ib = dev->ib;
	struct ibv_pd *pd;
	int ret = gdx_dev_pd(dev, &pd);

	if (ret)
		return ret;
	pthread_mutex_lock(&ib->lock);
	if (!ib->cache)
		ret = gdx_regcache_create(&gdx_reg_verbs_ops, ib, &ib->cache);
	*cache_p = ib->cache;
	pthread_mutex_unlock(&ib->lock);
	return ret;
}

/* Whether every rail of comm takes memory of this NCCL_PTR_* kind; if not,
 * says why in one WARN. */
static bool gdx_reg_supported(struct gdx_comm *comm, int ptr, const char *what)
{
	for (int r = 0; r < comm->nrails; r++) {
		const struct gdx_dev *d = comm->rails[r].dev;

		if (!(d->ptr_support & ptr)) {
			GDX_WARN("%s: registration of %s refused: %s does not advertise it (%s)",
				 gdx_vdev_get(comm->dev_index)->name, what, d->ibdev,
				 d->gdr_why[0] ? d->gdr_why : "no GPUDirect RDMA");
			return false;
		}
	}
	return true;
}

static int gdx_reg_check(struct gdx_comm *comm, void *data, uint64_t size, int type)
{
	if (type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) {
		GDX_WARN("%s: registration of memory type %d refused: not NCCL_PTR_HOST or "
			 "NCCL_PTR_CUDA",
			 gdx_vdev_get(comm->dev_index)->name, type);
		return -EINVAL;
	}
	if (size == 0 || !data) {
		GDX_WARN("%s: registration of %llu bytes at %p refused: empty range",
			 gdx_vdev_get(comm->dev_index)->name, (unsigned long long)size, data);
		return -EINVAL;
	}
	return 0;
}

static struct gdx_mr *gdx_mr_new(void *data, uint64_t size, int type)
{
	struct gdx_mr *mr = calloc(1, sizeof(*mr));

	if (mr) {
		mr->addr = (uintptr_t)data;
		mr->size = size;
		mr->type = type;
	}
	return mr;
}

static void gdx_mr_release(struct gdx_mr *mr)
{
	for (int r = 0; r < mr->nrails; r++) {
		if (mr->direct[r]) {
			int err = ibv_dereg_mr(mr->direct[r]);

			if (err)
				GDX_WARN("ibv_dereg_mr failed: %s", strerror(err));
		} else {
			gdx_regcache_put(mr->caches[r], mr->entries[r]);
		}
	}
	mr->kind = GDX_KIND_DEAD;
	free(mr);
}

int gdx_reg_mr(struct gdx_comm *comm, void *data, uint64_t size, int type, struct gdx_mr **mr_p)
{
	struct gdx_mr *mr;
	int ret = gdx_reg_check(comm, data, size, type);

	if (ret)
		return ret;
	/* GPU memory through peer memory: ibv_reg_mr takes the CUDA pointer. */
	if (type == NCCL_PTR_CUDA && !gdx_reg_supported(comm, NCCL_PTR_CUDA, "GPU memory"))
		return -EINVAL;
	mr = gdx_mr_new(data, size, type);
	if (!mr)
		return -ENOMEM;
	for (int r = 0; r < comm->nrails; r++) {
		struct gdx_regcache *cache;
		struct ibv_mr *vmr;

		ret = gdx_reg_cache(comm->rails[r].dev, &cache);
		if (!ret)
			ret = gdx_regcache_get(cache, (uintptr_t)data, size, &mr->entries[r]);
		if (ret)
			goto err;
		mr->caches[r] = cache;
		vmr = mr->entries[r]->handle;
		mr->lkey[r] = vmr->lkey;
		mr->rkey[r] = vmr->rkey;
		mr->nrails = r + 1;
	}
	mr->kind = GDX_KIND_MR;
	*mr_p = mr;
	return 0;

err:
	gdx_mr_release(mr);
	return ret;
}

int gdx_reg_mr_dmabuf(struct gdx_comm *comm, void *data, uint64_t size, int type, uint64_t offset,
		      int fd, struct gdx_mr **mr_p)
{
	struct gdx_mr *mr;
	int ret = gdx_reg_check(comm, data, size, type);

	if (ret)
		return ret;
	if (!gdx_reg_supported(comm, NCCL_PTR_DMABUF, "a DMA-BUF"))
		return -EINVAL;
	mr = gdx_mr_new(data, size, type);
	if (!mr)
		return -ENOMEM;
	for (int r = 0; r < comm->nrails; r++) {
		struct gdx_rail *rail = &comm->rails[r];

		mr->direct[r] = ibv_reg_dmabuf_mr(rail->pd, offset, size, (uintptr_t)data, fd,
						  GDX_MR_ACCESS);
		if (!mr->direct[r]) {
			ret = errno ? -errno : -ENOMEM;
			GDX_WARN(
				"ibv_reg_dmabuf_mr(%s, fd %d, offset %llu, %llu bytes) failed: %s%s",
				rail->dev->ibdev, fd, (unsigned long long)offset,
				(unsigned long long)size, strerror(-ret),
				ret == -EOPNOTSUPP ? "; the kernel or provider lacks DMA-BUF" : "");
			goto err;
		}
		mr->lkey[r] = mr->direct[r]->lkey;
		mr->rkey[r] = mr->direct[r]->rkey;
		mr->nrails = r + 1;
	}
	mr->kind = GDX_KIND_MR;
	*mr_p = mr;
	return 0;

err:
	gdx_mr_release(mr);
	return ret;
}

int gdx_dereg_mr(struct gdx_mr *mr)
{
	if (!mr || mr->kind != GDX_KIND_MR) {
		GDX_WARN("deregMr of %p, which is not a live memory handle", (void *)mr);
		return -EINVAL;
	}
	gdx_mr_release(mr);
	return 0;
}
