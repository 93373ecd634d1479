/* SPDX-License-Identifier: MIT */
/* One-sided RMA's data calls (gdx_rma_post.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nccl/rma.h>
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "rma/gdx_rma_post.h"
#include "rma/gdx_rma_progress.h"
#include "rma/gdx_rma_reg.h"

/* The connection a call names, after the checks of context and rank. */
static int gdx_rma_conn_for(struct gdx_rma_ctx *x, const char *call, int context, uint32_t rank,
			    struct gdx_rma_conn **c_p)
{
	struct gdx_rma_coll *coll = x->coll;
	struct gdx_rma_conn *c;

	if (context < 0 || context >= x->ncontexts) {
		GDX_WARN("RMA %s: context %d out of range (the block has %d)", call, context,
			 x->ncontexts);
		return -EBADR;
	}
	if (rank >= (uint32_t)coll->nranks) {
		GDX_WARN("RMA %s: rank %u out of range (the group has %d)", call, rank,
			 coll->nranks);
		return -EBADR;
	}
	c = gdx_rma_conn_of(x, context, (int)rank);
	if (!c) {
		GDX_WARN("RMA %s: rank %u is not connected in this block: its rank stride %d "
			 "connects rank %d only to ranks a multiple of it away",
			 call, rank, x->stride, coll->rank);
		return -EBADR;
	}
	if (c->err) {
		GDX_WARN("RMA %s: the connection to rank %u (context %d) has failed: %s", call,
			 rank, context, x->error[0] ? x->error : strerror(-c->err));
		return c->err;
	}
	*c_p = c;
	return 0;
}

/* A live window of the collective comm, or a WARN naming the argument. */
static int gdx_rma_window(struct gdx_rma_ctx *x, const char *call, const char *what, void *mh,
			  struct gdx_rma_mr **mr_p)
{
	if (!mh) {
		GDX_WARN("RMA %s: NULL %s handle", call, what);
		return -EBADR;
	}
	if (!gdx_rma_mr_live(x->coll, mh)) {
		GDX_WARN("RMA %s: %s handle %p is not a registered window of this collective comm "
			 "(deregistered, another comm's, or not from regMrSym)",
			 call, what, mh);
		return -EBADR;
	}
	*mr_p = mh;
	return 0;
}

/* [off, off + size) within a window of size bytes. */
static int gdx_rma_range(const char *call, const char *what, uint64_t off, uint64_t size,
			 uint64_t window, int rank)
{
	if (off > window || size > window - off) {
		GDX_WARN("RMA %s: %s range [0x%llx, +%llu) is outside rank %d's window of %llu "
			 "bytes",
			 call, what, (unsigned long long)off, (unsigned long long)size, rank,
			 (unsigned long long)window);
		return -EBADR;
	}
	return 0;
}

static int gdx_rma_size_ok(const char *call, uint64_t size)
{
	if (size <= GDX_RMA_MAX_BYTES)
		return 0;
	GDX_WARN("RMA %s: %llu bytes is more than maxP2pBytes (%llu)", call,
		 (unsigned long long)size, (unsigned long long)GDX_RMA_MAX_BYTES);
	return -EBADR;
}

static int gdx_rma_req_new(struct gdx_rma_conn *c, const char *call, enum gdx_rma_op op,
			   uint64_t size, struct gdx_rma_req **req_p)
{
	struct gdx_rma_req *r;

	if (gdx_rma_req_wrs(c, op, size) > GDX_RMA_CONN_WRS) {
		GDX_WARN("RMA %s: %llu bytes take more work requests than a connection holds (%d) "
			 "at %s's largest message",
			 call, (unsigned long long)size, GDX_RMA_CONN_WRS,
			 c->ch.rails[0].dev->ibdev);
		return -EBADR;
	}
	r = gdx_rma_req_get(c, op);
	if (!r) {
		GDX_WARN(
			"RMA %s: %d requests already in flight to rank %d on context %d, more than "
			"NCCL keeps (NCCL_NET_MAX_REQUESTS x maxRecvs)",
			call, GDX_RMA_MAX_REQS, c->peer, c->context);
		return -ENOSPC;
	}
	*req_p = r;
	return 0;
}

/* The data part of a put or get: local is the put's source or the get's
 * destination, remote the other; offsets into each window, and the size. */
struct gdx_rma_data {
	struct gdx_rma_mr *lmh, *rmh;
	uint64_t loff, roff, size;
};

/* The connection to rank on context, then (unless there are no data: size
 * 0 and NULL handles, a signal alone) both windows live and both ranges
 * inside them; the windows into d. */
static int gdx_rma_data_check(struct gdx_rma_ctx *x, const char *call, int context, uint32_t rank,
			      void *lmh, void *rmh, bool put, struct gdx_rma_data *d,
			      struct gdx_rma_conn **c_p)
{
	int ret = gdx_rma_conn_for(x, call, context, rank, c_p);

	if (ret || !(d->size || lmh || rmh))
		return ret;
	ret = gdx_rma_size_ok(call, d->size);
	if (!ret)
		ret = gdx_rma_window(x, call, put ? "source" : "local", lmh, &d->lmh);
	if (!ret)
		ret = gdx_rma_window(x, call, put ? "destination" : "remote", rmh, &d->rmh);
	if (!ret)
		ret = gdx_rma_range(call, put ? "source" : "local", d->loff, d->size,
				    d->lmh->ranks[x->coll->rank].size, x->coll->rank);
	if (!ret)
		ret = gdx_rma_range(call, put ? "destination" : "remote", d->roff, d->size,
				    d->rmh->ranks[rank].size, (int)rank);
	return ret;
}

static void gdx_rma_data_fill(struct gdx_rma_req *r, const struct gdx_rma_data *d)
{
	r->size = d->size;
	r->lmh = d->lmh;
	r->loff = d->loff;
	r->rmh = d->rmh;
	r->roff = d->roff;
	gdx_rma_req_hold(r, 1);
}

int gdx_rma_iput(struct gdx_rma_ctx *x, int context, uint64_t src_off, void *src, uint64_t size,
		 uint64_t dst_off, void *dst, uint32_t rank, bool hold, struct gdx_rma_req **req_p)
{
	struct gdx_rma_data d = {.loff = src_off, .roff = dst_off, .size = size};
	struct gdx_rma_conn *c;
	struct gdx_rma_req *r = NULL;
	int ret = gdx_rma_data_check(x, "iput", context, rank, src, dst, true, &d, &c);

	if (!ret)
		ret = gdx_rma_req_new(c, "iput", GDX_RMA_PUT, size, &r);
	if (ret)
		return ret;
	gdx_rma_data_fill(r, &d);
	gdx_rma_issue(c, r, hold);
	*req_p = r;
	return 0;
}

int gdx_rma_iput_signal(struct gdx_rma_ctx *x, int context, uint64_t src_off, void *src,
			uint64_t size, uint64_t dst_off, void *dst, uint32_t rank, uint64_t sig_off,
			void *sig, uint64_t value, uint32_t op, bool strong, bool hold,
			struct gdx_rma_req **req_p)
{
	struct gdx_rma_data d = {.loff = src_off, .roff = dst_off, .size = size};
	struct gdx_rma_mr *g = NULL;
	struct gdx_rma_conn *c;
	struct gdx_rma_req *r = NULL;
	/* the signal alone: size 0, NULL data handles (NCCL's VA signals) */
	int ret = gdx_rma_data_check(x, "iputSignal", context, rank, src, dst, true, &d, &c);

	if (!ret && op != NCCL_NET_SIGNAL_OP_INC && op != NCCL_NET_SIGNAL_OP_ADD) {
		GDX_WARN("RMA iputSignal: signal operation 0x%x is neither INC (0x%x) nor ADD "
			 "(0x%x)",
			 op, NCCL_NET_SIGNAL_OP_INC, NCCL_NET_SIGNAL_OP_ADD);
		ret = -EBADR;
	}
	if (!ret)
		ret = gdx_rma_window(x, "iputSignal", "signal", sig, &g);
	if (!ret && sig_off % 8) {
		GDX_WARN(
			"RMA iputSignal: signal offset 0x%llx is not 8-byte aligned (the signal is "
			"a 64-bit word, added atomically)",
			(unsigned long long)sig_off);
		ret = -EBADR;
	}
	if (!ret)
		ret = gdx_rma_range("iputSignal", "signal", sig_off, 8, g->ranks[rank].size,
				    (int)rank);
	if (!ret)
		ret = gdx_rma_req_new(c, "iputSignal", GDX_RMA_PUT_SIGNAL, size, &r);
	if (ret)
		return ret;
	r->smh = g; /* before the fill, which holds the windows */
	gdx_rma_data_fill(r, &d);
	r->soff = sig_off;
	r->add = op == NCCL_NET_SIGNAL_OP_INC ? 1 : value;
	r->strong = strong;
	gdx_rma_issue(c, r, hold);
	*req_p = r;
	return 0;
}

int gdx_rma_iget(struct gdx_rma_ctx *x, int context, uint64_t remote_off, void *remote,
		 uint64_t size, uint64_t local_off, void *local, uint32_t rank, bool hold,
		 struct gdx_rma_req **req_p)
{
	struct gdx_rma_data d = {.loff = local_off, .roff = remote_off, .size = size};
	struct gdx_rma_conn *c;
	struct gdx_rma_req *r = NULL;
	int ret = gdx_rma_data_check(x, "iget", context, rank, local, remote, false, &d, &c);

	if (!ret)
		ret = gdx_rma_req_new(c, "iget", GDX_RMA_GET, size, &r);
	if (ret)
		return ret;
	gdx_rma_data_fill(r, &d);
	gdx_rma_issue(c, r, hold);
	*req_p = r;
	return 0;
}

int gdx_rma_iflush(struct gdx_rma_ctx *x, int context, void *mh, uint32_t rank,
		   struct gdx_rma_req **req_p)
{
	struct gdx_rma_mr *w = NULL;
	struct gdx_rma_conn *c, *self;
	struct gdx_rma_req *r = NULL;
	int ret = gdx_rma_conn_for(x, "iflush", context, rank, &c);

	if (!ret)
		ret = gdx_rma_window(x, "iflush", "window", mh, &w);
	/* The data of gets from rank landed through this rank's NICs: a read
	 * of the window by each of them, through the connection to itself,
	 * comes back only once their earlier writes to it are visible. Host
	 * memory needs none (NCCL_GDX_GDR_FLUSH=2 reads anyway). */
	if (!ret)
		ret = gdx_rma_conn_for(x, "iflush", context, (uint32_t)x->coll->rank, &self);
	if (!ret)
		ret = gdx_rma_req_new(self, "iflush", GDX_RMA_FLUSH, 8, &r);
	if (ret)
		return ret;
	(void)c;
	r->lmh = w;
	gdx_rma_req_hold(r, 1);
	r->size = (w->type == NCCL_PTR_CUDA && gdx_params.gdr_flush) || gdx_params.gdr_flush == 2
			  ? (w->ranks[x->coll->rank].size < 8 ? w->ranks[x->coll->rank].size : 8)
			  : 0;
	gdx_rma_issue(self, r, false);
	*req_p = r;
	return 0;
}
