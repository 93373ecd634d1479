/* SPDX-License-Identifier: MIT */
/* One-sided RMA's symmetric windows (gdx_rma_reg.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <nccl/rma.h>
#include "sys/gdx_log.h"
#include "data/gdx_reg.h"
#include "rma/gdx_rma_boot.h"
#include "rma/gdx_rma_reg.h"

/* What each rank says of its window: status, type, base, size, its NICs
 * and a key on each. */
#define GDX_RMA_MR_REC (32 + 4 * GDX_MAX_RAILS)

static void gdx_rma_mr_pack(uint8_t *p, int status, const struct gdx_mr *mr, int type)
{
	memset(p, 0, GDX_RMA_MR_REC);
	gdx_rma_put32(p, (uint32_t)status);
	gdx_rma_put32(p + 4, (uint32_t)type);
	if (!mr)
		return;
	gdx_rma_put64(p + 8, mr->addr);
	gdx_rma_put64(p + 16, mr->size);
	gdx_rma_put32(p + 24, (uint32_t)mr->nmembers);
	for (int m = 0; m < mr->nmembers; m++)
		gdx_rma_put32(p + 32 + 4 * (size_t)m, mr->rkey[m]);
}

/* Every rank's part into mh; the first rank that failed makes it fail. */
int gdx_rma_mr_unpack(struct gdx_rma_coll *c, const uint8_t *all, struct gdx_rma_mr *mh)
{
	for (int i = 0; i < c->nranks; i++) {
		const uint8_t *p = all + (size_t)i * GDX_RMA_MR_REC;
		struct gdx_rma_mr_rank *r = &mh->ranks[i];
		uint32_t st = gdx_rma_get32(p);

		if (st > GDX_RMA_ERRNO_MAX) {
			GDX_WARN("RMA regMrSym: rank %d (%s) sent status 0x%x, which is no errno: "
				 "a malformed window, the registration fails on every rank",
				 i, c->ranks[i].addr, st);
			return -EPROTO;
		}
		if (st) {
			if (i != c->rank)
				GDX_WARN("RMA regMrSym: rank %d (%s) could not register its buffer "
					 "(%s): the registration fails on every rank",
					 i, c->ranks[i].addr, strerror((int)st));
			return gdx_rma_peer_status(st);
		}
		r->base = gdx_rma_get64(p + 8);
		r->size = gdx_rma_get64(p + 16);
		r->nmembers = gdx_rma_get32(p + 24);
		if (r->nmembers != c->ranks[i].nmembers || r->size == 0) {
			GDX_WARN("RMA regMrSym: rank %d sent a malformed window (%u keys for %u "
				 "NICs, %llu bytes)",
				 i, r->nmembers, c->ranks[i].nmembers, (unsigned long long)r->size);
			return -EPROTO;
		}
		for (int m = 0; m < (int)r->nmembers; m++)
			r->rkey[m] = gdx_rma_get32(p + 32 + 4 * (size_t)m);
	}
	return 0;
}

int gdx_rma_reg_sym(struct gdx_rma_coll *c, void *data, uint64_t size, int type, uint64_t mr_flags,
		    bool dmabuf, uint64_t offset, int fd, struct gdx_rma_mr **mh_p)
{
	bool strict = mr_flags & NCCL_NET_MR_FLAG_FORCE_SO;
	struct gdx_rma_mr *mh = calloc(1, sizeof(*mh));
	uint8_t *all = NULL;
	int local = 0, ret;

	if (mh)
		mh->ranks = calloc((size_t)c->nranks, sizeof(*mh->ranks));
	all = calloc((size_t)c->nranks, GDX_RMA_MR_REC);
	if (!mh || !mh->ranks || !all)
		local = -ENOMEM;
	if (!local)
		local = gdx_reg_sym(c->v, data, size, type, strict, dmabuf, offset, fd, &mh->local);
	if (!all) {
		ret = local; /* the others time out: nothing better to do */
		goto out;
	}
	gdx_rma_mr_pack(all + (size_t)c->rank * GDX_RMA_MR_REC, -local, local ? NULL : mh->local,
			type);
	ret = gdx_rma_boot_allgather(&c->boot, all, GDX_RMA_MR_REC, "regMrSym");
	if (!ret)
		ret = gdx_rma_mr_unpack(c, all, mh);
	if (!ret) {
		mh->kind = GDX_KIND_RMA_MR;
		mh->coll = c;
		mh->type = type;
		mh->strict = strict;
		pthread_mutex_lock(&c->lock);
		ret = gdx_ptrset_add(&c->mrs, mh);
		pthread_mutex_unlock(&c->lock);
	}
out:
	free(all);
	if (ret) {
		if (mh && mh->local)
			gdx_dereg_mr(mh->local);
		if (mh)
			free(mh->ranks);
		free(mh);
		return ret;
	}
	GDX_INFO(NCCL_NET,
		 "RMA: window %p of %llu bytes at %p (%s%s%s) on %s, every rank's "
		 "address and keys exchanged",
		 (void *)mh, (unsigned long long)size, data, type == NCCL_PTR_CUDA ? "GPU" : "host",
		 dmabuf ? ", DMA-BUF" : "", strict ? ", strictly ordered" : "", c->v->name);
	*mh_p = mh;
	return 0;
}

static void gdx_rma_mr_free(struct gdx_rma_mr *mh)
{
	gdx_dereg_mr(mh->local);
	free(mh->ranks);
	mh->kind = GDX_KIND_DEAD;
	free(mh);
}

int gdx_rma_dereg_sym(struct gdx_rma_coll *c, struct gdx_rma_mr *mh)
{
	int ret;

	uint32_t inflight = 0;

	pthread_mutex_lock(&c->lock);
	ret = gdx_ptrset_has(&c->mrs, mh) ? 0 : -EBADR;
	if (!ret)
		inflight = __atomic_load_n(&mh->inflight, __ATOMIC_RELAXED);
	if (!ret && !inflight)
		gdx_ptrset_remove(&c->mrs, mh);
	pthread_mutex_unlock(&c->lock);
	if (ret) {
		GDX_WARN("RMA deregMrSym: %p is not a live window of collective comm %p "
			 "(deregistered already, or another comm's)",
			 (void *)mh, (void *)c);
		return -EBADR;
	}
	if (inflight) {
		GDX_WARN("RMA deregMrSym: window %p is named by %u request(s) still in flight: "
			 "it stays registered (test them to completion, or destroy their "
			 "context, then deregister)",
			 (void *)mh, inflight);
		return -EBUSY;
	}
	gdx_rma_mr_free(mh);
	return 0;
}

bool gdx_rma_mr_live(struct gdx_rma_coll *c, const void *mh)
{
	bool live;

	pthread_mutex_lock(&c->lock);
	live = mh && gdx_ptrset_has(&c->mrs, mh);
	pthread_mutex_unlock(&c->lock);
	return live;
}

static bool gdx_rma_any(const void *p, void *arg)
{
	(void)p;
	(void)arg;
	return true;
}

int gdx_rma_mrs_drop(struct gdx_rma_coll *c)
{
	int n = 0;
	const void *mh;

	pthread_mutex_lock(&c->lock);
	while ((mh = gdx_ptrset_first(&c->mrs, gdx_rma_any, NULL))) {
		gdx_ptrset_remove(&c->mrs, mh);
		gdx_rma_mr_free((struct gdx_rma_mr *)mh);
		n++;
	}
	gdx_ptrset_free(&c->mrs);
	pthread_mutex_unlock(&c->lock);
	return n;
}
