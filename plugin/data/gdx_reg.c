/* SPDX-License-Identifier: MIT */
/*
 * Memory registration. Every registration goes through a cache of each NIC
 * of the comm's device, so a buffer registered once serves every comm on
 * that NIC (regIsGlobal) and a second registration inside it is a hit:
 * NCCL registers its shared buffer pool through every connection. DMA-BUF
 * registrations have a cache of their own, keyed by what the range maps
 * (gdx_regcache.h), since NCCL exports the range anew, with a new fd, for
 * every call.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_data_direct.h"
#include "dev/gdx_dev.h"
#include "data/gdx_flush.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "data/gdx_reg.h"

#define GDX_MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
/* Data registrations with PCIe relaxed ordering where the device has it on
 * (gdx_dev.c); the control region never (gdx_comm.c). */
#define GDX_MR_ACCESS_OF(ib) (GDX_MR_ACCESS | ((ib)->ro ? IBV_ACCESS_RELAXED_ORDERING : 0))

/*
 * The host and peer-memory cache's keys: which access a registration of a
 * range has, as ranges of one key only are interchangeable. The two-sided
 * path's data (0); one-sided RMA's symmetric windows (remote atomics too),
 * with relaxed ordering where the device has it (1), or strictly ordered
 * for regions that take signals, NCCL_NET_MR_FLAG_FORCE_SO (2). RMA's
 * DMA-BUF registrations have a cache of their own (gdx_ibctx.rma_dmabuf_cache),
 * strictly ordered, as that cache's key is the DMA-BUF offset.
 */
enum { GDX_REG_KEY_DATA = 0, GDX_REG_KEY_RMA = 1, GDX_REG_KEY_RMA_SO = 2 };
#define GDX_MR_ACCESS_RMA (GDX_MR_ACCESS | IBV_ACCESS_REMOTE_ATOMIC)

static int gdx_reg_access(const struct gdx_ibctx *ib, uint64_t key)
{
	switch (key) {
	case GDX_REG_KEY_RMA: return GDX_MR_ACCESS_RMA | (ib->ro ? IBV_ACCESS_RELAXED_ORDERING : 0);
	case GDX_REG_KEY_RMA_SO: return GDX_MR_ACCESS_RMA;
	default: return GDX_MR_ACCESS_OF(ib);
	}
}

/* Names the likely cause: the memlock limit, an unmapped range, or the errno. */
static void gdx_reg_warn(const char *call, const char *ibdev, uintptr_t start, uintptr_t end,
			 int err)
{
	unsigned long long len = (unsigned long long)(end - start);
	struct rlimit rl;

	if (err == ENOMEM && !getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY)
		GDX_WARN("%s(%s, %p, %llu bytes) failed: %s; the memlock limit is %llu KiB: raise "
			 "it (ulimit -l unlimited, or LimitMEMLOCK=infinity)",
			 call, ibdev, (void *)start, len, strerror(err),
			 (unsigned long long)rl.rlim_cur / 1024);
	else if (err == EFAULT)
		GDX_WARN("%s(%s, %p, %llu bytes) failed: %s; the range is not mapped memory of "
			 "this process",
			 call, ibdev, (void *)start, len, strerror(err));
	else if (err == EOPNOTSUPP)
		GDX_WARN("%s(%s, %p, %llu bytes) failed: %s; the kernel or provider lacks DMA-BUF",
			 call, ibdev, (void *)start, len, strerror(err));
	else
		GDX_WARN("%s(%s, %p, %llu bytes) failed: %s", call, ibdev, (void *)start, len,
			 strerror(err));
}

/* Host and peer memory: the range itself. */
static int gdx_reg_verbs(void *arg, uintptr_t start, uintptr_t end, uint64_t key, const void *call,
			 void **handle_p)
{
	struct gdx_ibctx *ib = arg;
	struct ibv_mr *mr = ibv_reg_mr(ib->pd, (void *)start, end - start, gdx_reg_access(ib, key));

	(void)call;
	if (!mr) {
		int err = errno ? errno : ENOMEM;

		gdx_reg_warn("ibv_reg_mr", ibv_get_device_name(ib->ctx->device), start, end, err);
		return -err;
	}
	*handle_p = mr;
	return 0;
}

/* DMA-BUF: call is the fd; the object's offset at start is key + start. A
 * Data Direct device's goes through mlx5 for its DMA function (net_ib's
 * reg.cc does the same). */
static int gdx_reg_dmabuf_access(struct gdx_ibctx *ib, uintptr_t start, uintptr_t end, uint64_t key,
				 const void *call, int access, void **handle_p)
{
	int fd = *(const int *)call;
	struct ibv_mr *mr =
		ib->data_direct
			? gdx_dd_reg_dmabuf(ib->pd, key + start, end - start, start, fd, access)
			: ibv_reg_dmabuf_mr(ib->pd, key + start, end - start, start, fd, access);

	if (!mr) {
		int err = errno ? errno : ENOMEM;

		gdx_reg_warn(ib->data_direct ? "mlx5dv_reg_dmabuf_mr" : "ibv_reg_dmabuf_mr",
			     ibv_get_device_name(ib->ctx->device), start, end, err);
		return -err;
	}
	*handle_p = mr;
	return 0;
}

static int gdx_reg_dmabuf_verbs(void *arg, uintptr_t start, uintptr_t end, uint64_t key,
				const void *call, void **handle_p)
{
	struct gdx_ibctx *ib = arg;

	return gdx_reg_dmabuf_access(ib, start, end, key, call, GDX_MR_ACCESS_OF(ib), handle_p);
}

/* RMA's DMA-BUF: the same, strictly ordered, with remote atomics. */
static int gdx_reg_rma_dmabuf_verbs(void *arg, uintptr_t start, uintptr_t end, uint64_t key,
				    const void *call, void **handle_p)
{
	return gdx_reg_dmabuf_access(arg, start, end, key, call, GDX_MR_ACCESS_RMA, handle_p);
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
static const struct gdx_regcache_ops gdx_reg_dmabuf_ops = {.reg = gdx_reg_dmabuf_verbs,
							   .dereg = gdx_dereg_verbs};
static const struct gdx_regcache_ops gdx_reg_rma_dmabuf_ops = {.reg = gdx_reg_rma_dmabuf_verbs,
							       .dereg = gdx_dereg_verbs};

/* Which of a protection domain's caches. */
enum gdx_reg_cache_kind { GDX_REG_CACHE_HOST, GDX_REG_CACHE_DMABUF, GDX_REG_CACHE_RMA_DMABUF };

/* One of the caches of dev's protection domain, made on first use; the
 * device table frees them with the PD. */
static int gdx_reg_cache(struct gdx_dev *dev, enum gdx_reg_cache_kind kind,
			 struct gdx_regcache **cache_p)
{
	struct gdx_ibctx *ib = dev->ib;
	struct gdx_regcache **slot = kind == GDX_REG_CACHE_DMABUF	? &ib->dmabuf_cache
				     : kind == GDX_REG_CACHE_RMA_DMABUF ? &ib->rma_dmabuf_cache
									: &ib->cache;
	const struct gdx_regcache_ops *ops = kind == GDX_REG_CACHE_DMABUF ? &gdx_reg_dmabuf_ops
					     : kind == GDX_REG_CACHE_RMA_DMABUF
						     ? &gdx_reg_rma_dmabuf_ops
						     : &gdx_reg_verbs_ops;
	struct ibv_pd *pd;
	int ret = gdx_dev_pd(dev, &pd);

	if (ret)
		return ret;
	pthread_mutex_lock(&ib->lock);
	if (!*slot)
		ret = gdx_regcache_create(ops, ib, kind != GDX_REG_CACHE_HOST, slot);
	*cache_p = *slot;
	pthread_mutex_unlock(&ib->lock);
	return ret;
}

/* Whether every NIC of the device (devs[0..n)) takes memory of this
 * NCCL_PTR_* kind; if not, says why in one WARN. */
static bool gdx_reg_supported(const char *dev_name, struct gdx_dev *const *devs, int n, int ptr,
			      const char *what)
{
	for (int m = 0; m < n; m++) {
		const struct gdx_dev *d = devs[m];

		if (!(d->ptr_support & ptr)) {
			GDX_WARN("%s: registration of %s refused: %s does not advertise it (%s)",
				 dev_name, what, d->ibdev,
				 d->gdr_why[0] ? d->gdr_why : "no GPUDirect RDMA");
			return false;
		}
	}
	return true;
}

static int gdx_reg_check(const char *dev_name, void *data, uint64_t size, int type)
{
	if (type != NCCL_PTR_HOST && type != NCCL_PTR_CUDA) {
		GDX_WARN("%s: registration of memory type %d refused: not NCCL_PTR_HOST or "
			 "NCCL_PTR_CUDA",
			 dev_name, type);
		return -EINVAL;
	}
	if (size == 0 || !data) {
		GDX_WARN("%s: registration of %llu bytes at %p refused: empty range", dev_name,
			 (unsigned long long)size, data);
		return -EINVAL;
	}
	return 0;
}

/* The NICs of a comm's device, as its rails name them. */
static int gdx_reg_comm_devs(const struct gdx_comm *comm, struct gdx_dev **devs)
{
	for (int m = 0; m < comm->nmembers; m++)
		devs[m] = comm->ch.rails[m].dev;
	return comm->nmembers;
}

static void gdx_mr_release(struct gdx_mr *mr)
{
	for (int m = 0; m < mr->nmembers; m++)
		gdx_regcache_put(mr->caches[m], mr->entries[m]);
	mr->kind = GDX_KIND_DEAD;
	free(mr);
}

/* Receives into this memory will need iflush's reads: a receive comm gets
 * its flush QPs with the first registration of it. */
static int gdx_reg_flush_path(struct gdx_comm *comm, int type)
{
	if (comm->kind != GDX_KIND_RECV || (type != NCCL_PTR_CUDA && gdx_params.gdr_flush != 2))
		return 0;
	return gdx_flush_create(gdx_recv_comm_of(comm));
}

/* The registration on every NIC of the device (devs[0..n)), from each
 * NIC's cache; comm (or NULL) gets its flush path. */
static int gdx_reg_members(struct gdx_comm *comm, struct gdx_dev *const *devs, int n, void *data,
			   uint64_t size, int type, enum gdx_reg_cache_kind kind, uint64_t key,
			   const int *fd, struct gdx_mr **mr_p)
{
	struct gdx_mr *mr = calloc(1, sizeof(*mr));
	int ret = 0;

	if (!mr)
		return -ENOMEM;
	mr->addr = (uintptr_t)data;
	mr->size = size;
	gdx_mr_set_type(mr, type);
	for (int m = 0; m < n && !ret; m++) {
		struct gdx_regcache *cache;
		struct ibv_mr *vmr;

		ret = gdx_reg_cache(devs[m], kind, &cache);
		if (!ret)
			ret = gdx_regcache_get(cache, (uintptr_t)data, size, key, fd,
					       &mr->entries[m]);
		if (ret)
			break;
		mr->caches[m] = cache;
		vmr = mr->entries[m]->handle;
		mr->lkey[m] = vmr->lkey;
		mr->rkey[m] = vmr->rkey;
		mr->nmembers = m + 1;
	}
	if (!ret && comm)
		ret = gdx_reg_flush_path(comm, type);
	if (ret) {
		gdx_mr_release(mr);
		return ret;
	}
	mr->kind = GDX_KIND_MR;
	*mr_p = mr;
	return 0;
}

int gdx_reg_mr(struct gdx_comm *comm, void *data, uint64_t size, int type, struct gdx_mr **mr_p)
{
	struct gdx_dev *devs[GDX_MAX_RAILS];
	int n = gdx_reg_comm_devs(comm, devs);
	int ret = gdx_reg_check(comm->dev_name, data, size, type);

	if (ret)
		return ret;
	/* GPU memory through peer memory: ibv_reg_mr takes the CUDA pointer. */
	if (type == NCCL_PTR_CUDA &&
	    !gdx_reg_supported(comm->dev_name, devs, n, NCCL_PTR_CUDA, "GPU memory"))
		return -EINVAL;
	return gdx_reg_members(comm, devs, n, data, size, type, GDX_REG_CACHE_HOST,
			       GDX_REG_KEY_DATA, NULL, mr_p);
}

int gdx_reg_mr_dmabuf(struct gdx_comm *comm, void *data, uint64_t size, int type, uint64_t offset,
		      int fd, struct gdx_mr **mr_p)
{
	struct gdx_dev *devs[GDX_MAX_RAILS];
	int n = gdx_reg_comm_devs(comm, devs);
	int ret = gdx_reg_check(comm->dev_name, data, size, type);

	if (ret)
		return ret;
	if (!gdx_reg_supported(comm->dev_name, devs, n, NCCL_PTR_DMABUF, "a DMA-BUF"))
		return -EINVAL;
	/* the fd is only read during this call: NCCL closes it when it returns */
	return gdx_reg_members(comm, devs, n, data, size, type, GDX_REG_CACHE_DMABUF,
			       offset - (uint64_t)(uintptr_t)data, &fd, mr_p);
}

int gdx_reg_sym(const struct gdx_vdev *v, void *data, uint64_t size, int type, bool strict,
		bool dmabuf, uint64_t offset, int fd, struct gdx_mr **mr_p)
{
	struct gdx_dev *const *devs = v->members;
	int ret = gdx_reg_check(v->name, data, size, type);

	if (ret)
		return ret;
	if (dmabuf && !gdx_reg_supported(v->name, devs, v->nmembers, NCCL_PTR_DMABUF, "a DMA-BUF"))
		return -EINVAL;
	if (!dmabuf && type == NCCL_PTR_CUDA &&
	    !gdx_reg_supported(v->name, devs, v->nmembers, NCCL_PTR_CUDA, "GPU memory"))
		return -EINVAL;
	if (dmabuf)
		return gdx_reg_members(NULL, devs, v->nmembers, data, size, type,
				       GDX_REG_CACHE_RMA_DMABUF, offset - (uint64_t)(uintptr_t)data,
				       &fd, mr_p);
	return gdx_reg_members(NULL, devs, v->nmembers, data, size, type, GDX_REG_CACHE_HOST,
			       strict ? GDX_REG_KEY_RMA_SO : GDX_REG_KEY_RMA, NULL, mr_p);
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
