/* SPDX-License-Identifier: MIT */
/*
 * The data path. The receiver posts a buffer by RDMA-writing a clear-to-send
 * entry into the sender's FIFO; the sender, on finding it, RDMA-writes the
 * bytes straight into that buffer and ends with a WRITE_WITH_IMM whose
 * immediate is the byte count. Zero-length receives are posted ahead on every
 * rail to consume the immediates. No allocation, lock or system call here
 * beyond what the verbs provider itself does.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <gdx/gdx_comm.h>
#include <gdx/gdx_event.h>
#include <gdx/gdx_flush.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_p2p.h>
#include <gdx/gdx_param.h>
#include <gdx/gdx_time.h>

/* Receives are kept posted per rail, GDX_RECVS_AHEAD, reposted in batches
 * of GDX_RECV_BATCH; work requests that need no completion of their own
 * (clear-to-sends, inline sends) go unsignaled, one in GDX_SIGNAL_EVERY
 * signaled to free their slots (gdx_comm.h). */
/* How long closing a send comm waits for its inline sends to be delivered;
 * a peer host that let one such wait run out is not waited for again for
 * GDX_DEAF_MS, so that closing every comm to a dead host costs one wait. */
#define GDX_DRAIN_MS 100
#define GDX_DEAF_MS  10000
/* Clear-to-sends go out in batches while the sender still holds at least
 * GDX_CTS_DEFER_MIN of them: one RDMA WRITE, one doorbell, for up to
 * NCCL_GDX_CTS_BATCH receives. They go at the next test of any receive of
 * the comm (NCCL's proxy tests one in every pass, so they are held for one
 * pass at most), and all at once when the sender is down to its last one:
 * what the receiver counts as held includes messages on their way, so
 * waiting for the sender to run out could leave it idle. */
#define GDX_CTS_DEFER_MIN 2
/* How often a waiting request looks at the peer's out-of-band socket. */
#define GDX_LIVENESS_POLLS 1024
#define GDX_LIVENESS_MS	   100
/* Largest piece of one RDMA WRITE; the port's max_msg_sz may be lower. */
#define GDX_MAX_WRITE (1ULL << 30)
/* Work requests chained into one ibv_post_send call. */
#define GDX_POST_BATCH 16

static int gdx_cts_flush(struct gdx_recv_comm *rc);

static const char *gdx_comm_dev_name(const struct gdx_comm *c)
{
	return gdx_vdev_get(c->dev_index)->name;
}

_Static_assert((GDX_MAX_SEND_REQUESTS & (GDX_MAX_SEND_REQUESTS - 1)) == 0 &&
		       (GDX_MAX_REQUESTS & (GDX_MAX_REQUESTS - 1)) == 0,
	       "request tables are rings of a power of two");

static struct gdx_request *gdx_req_get(struct gdx_comm *c, bool is_send)
{
	uint32_t wrap = (uint32_t)c->max_reqs - 1;
	struct gdx_request *r;

	if (c->active == c->max_reqs) {
		GDX_WARN("%s: more than %d %s requests in flight on one comm (NCCL allows %d)",
			 gdx_comm_dev_name(c), c->max_reqs, is_send ? "send" : "receive",
			 c->max_reqs);
		return NULL;
	}
	/* Requests mostly complete in order: the next slot is usually free,
	 * and one is, as active < max. */
	while (c->reqs[c->next_req].state != GDX_REQ_FREE)
		c->next_req = (c->next_req + 1) & wrap;
	r = &c->reqs[c->next_req];
	c->next_req = (c->next_req + 1) & wrap;
	c->active++;
	r->state = GDX_REQ_ACTIVE;
	r->is_send = is_send;
	r->pending = 0;
	r->err = 0;
	r->size = 0;
	r->posted = 0;
	r->n = 1;
	r->flush = false;
	return r;
}

static void gdx_req_put(struct gdx_request *r)
{
	r->state = GDX_REQ_FREE;
	r->comm->active--;
	if (!r->is_send && !r->flush)
		gdx_recv_comm_of(r->comm)->recvs_active--;
}

static void gdx_comm_fail(struct gdx_comm *c, int err)
{
	if (!c->err)
		c->err = err;
}

static void gdx_wc_failed(struct gdx_comm *c, int rail, const struct ibv_wc *wc)
{
	/* The async events first: a port that went down is the cause to name,
	 * and its event is queued before the completions it causes. */
	gdx_event_poll(c);
	if (!c->err)
		GDX_WARN("%s rail %d (%s), peer %s (%s): completion failed: %s (status %d, "
			 "vendor error 0x%x, qp 0x%x, %s); %s",
			 gdx_comm_dev_name(c), rail, c->rails[rail].dev->ibdev, c->peer,
			 c->peer_dev, ibv_wc_status_str(wc->status), wc->status, wc->vendor_err,
			 wc->qp_num, c->kind == GDX_KIND_SEND ? "send side" : "receive side",
			 gdx_wc_hint(wc->status));
	gdx_comm_fail(c, -EREMOTEIO);
}

/* A grouped receive's sizes, written by the sender at its slot before the
 * immediate that ended it: each must fit its buffer. */
static void gdx_recv_group_sizes(struct gdx_recv_comm *rc, struct gdx_request *req)
{
	const uint32_t *sizes = rc->base.ctrl->sizes[req->seq % GDX_MAX_REQUESTS];

	for (int i = 0; i < req->n; i++) {
		/* the posted size, in this receive's clear-to-send, still staged */
		uint64_t posted = le64toh(
			rc->base.ctrl->fifo[GDX_FIFO_INDEX(req->seq % GDX_MAX_REQUESTS, i)].size);

		req->sizes[i] = __atomic_load_n(&sizes[i], __ATOMIC_RELAXED);
		if (req->sizes[i] > posted) {
			GDX_WARN("%s: peer %s sent %u bytes into buffer %d of a grouped receive "
				 "of %llu",
				 gdx_comm_dev_name(&rc->base), rc->base.peer, req->sizes[i], i,
				 (unsigned long long)posted);
			req->err = -EPROTO;
			gdx_comm_fail(&rc->base, -EPROTO);
		}
	}
}

static void gdx_recv_imm(struct gdx_recv_comm *rc, int rail, uint32_t imm)
{
	struct gdx_expect_ring *ring = &rc->expect[rail];
	struct gdx_request *req;

	if (ring->head == ring->tail) {
		GDX_WARN("%s: data arrived on rail %d from %s with no receive posted",
			 gdx_comm_dev_name(&rc->base), rail, rc->base.peer);
		gdx_comm_fail(&rc->base, -EPROTO);
		return;
	}
	req = ring->reqs[ring->head++ % GDX_MAX_REQUESTS];
	rc->recvs_to_post[rail]++;
	if (imm == GDX_IMM_REFUSED) {
		GDX_WARN("%s: peer %s refused to send into a %llu-byte receive: its message is "
			 "larger (see its log for the size)",
			 gdx_comm_dev_name(&rc->base), rc->base.peer,
			 (unsigned long long)req->posted);
		req->err = -EMSGSIZE;
		gdx_comm_fail(&rc->base, -EMSGSIZE);
	} else if (req->n == 1) {
		req->size += imm;
	} else if (imm == GDX_IMM_GROUP) {
		gdx_recv_group_sizes(rc, req);
	} else {
		GDX_WARN("%s: peer %s ended a %d-buffer receive with immediate 0x%x, not the "
			 "group's",
			 gdx_comm_dev_name(&rc->base), rc->base.peer, req->n, imm);
		req->err = -EPROTO;
		gdx_comm_fail(&rc->base, -EPROTO);
	}
	if (--req->pending == 0)
		rc->cts_outstanding--;
}

/* A signaled send completion: it frees the queue slots of every WR before it. */
static void gdx_send_done(struct gdx_comm *c, int rail, uint64_t wr_id)
{
	struct gdx_rail *r = &c->rails[rail];
	struct gdx_request *req;

	if (GDX_WRID_IS_SLOTS(wr_id)) {
		r->sq_used -= GDX_WRID_SLOTS_N(wr_id);
		return;
	}
	req = (struct gdx_request *)(uintptr_t)wr_id;
	r->sq_used -= req->wrs[rail];
	req->pending--;
}

/* Counts n more WRs on rail r and says whether the last of them is signaled
 * (always when must); if so, *freed is how many slots its completion frees. */
static bool gdx_rail_signal(struct gdx_rail *r, uint32_t n, bool must, uint32_t *freed)
{
	r->unsignaled += n;
	if (!must && r->unsignaled < GDX_SIGNAL_EVERY)
		return false;
	*freed = r->unsignaled;
	r->unsignaled = 0;
	return true;
}

/* The flush reads' completions, on their own CQs. */
static int gdx_flush_poll(struct gdx_recv_comm *rc)
{
	struct ibv_wc wcs[8];
	int seen = 0;

	for (int r = 0; r < rc->nflush; r++) {
		int n = ibv_poll_cq(rc->flush[r].cq, 8, wcs);

		for (int i = 0; i < n; i++) {
			if (wcs[i].status != IBV_WC_SUCCESS)
				gdx_wc_failed(&rc->base, r, &wcs[i]);
			else
				((struct gdx_request *)(uintptr_t)wcs[i].wr_id)->pending--;
		}
		seen += n > 0 ? n : 0;
	}
	return seen;
}

/* Polls every rail's CQ once; returns how many completions were seen. */
static int gdx_comm_poll(struct gdx_comm *c)
{
	struct ibv_wc wcs[16];
	int seen = 0;

	for (int r = 0; r < c->nrails; r++) {
		int n = ibv_poll_cq(c->rails[r].cq, 16, wcs);

		if (n < 0) {
			GDX_WARN("%s: ibv_poll_cq failed (%d)", gdx_comm_dev_name(c), n);
			gdx_comm_fail(c, -EIO);
			return seen;
		}
		seen += n;
		for (int i = 0; i < n; i++) {
			struct ibv_wc *wc = &wcs[i];

			if (wc->status != IBV_WC_SUCCESS) {
				gdx_wc_failed(c, r, wc);
				continue;
			}
			if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
				gdx_recv_imm(gdx_recv_comm_of(c), r, be32toh(wc->imm_data));
			else
				gdx_send_done(c, r, wc->wr_id);
		}
		if (c->kind == GDX_KIND_RECV) {
			struct gdx_recv_comm *rc = gdx_recv_comm_of(c);

			if (rc->recvs_to_post[r] >= GDX_RECV_BATCH) {
				if (gdx_rail_post_recvs(&c->rails[r], (int)rc->recvs_to_post[r]))
					gdx_comm_fail(c, -EIO);
				rc->recvs_to_post[r] = 0;
			}
		}
	}
	if (c->kind == GDX_KIND_RECV) {
		struct gdx_recv_comm *rc = gdx_recv_comm_of(c);

		if (rc->nflush)
			seen += gdx_flush_poll(rc);
		/* The sender runs low with some held back: the batch goes while it
		 * still has a message to send, so that it never waits for one
		 * (NCCL tests only the oldest receive, which is never held back). */
		if (rc->cts_stalled ||
		    (rc->cts_sent < rc->tail && rc->cts_outstanding < GDX_CTS_DEFER_MIN))
			gdx_cts_flush(rc);
	}
	return seen;
}

/* True when rail has room for need more WRs, polling once to make room. */
static bool gdx_rail_has_room(struct gdx_comm *c, int rail, uint32_t need)
{
	struct gdx_rail *r = &c->rails[rail];

	if (r->sq_used + need <= r->sq_depth)
		return true;
	gdx_comm_poll(c);
	return r->sq_used + need <= r->sq_depth;
}

/* Called while waiting: verbs says nothing when the peer process is simply
 * gone, but its kernel closes the out-of-band socket. */
static void gdx_comm_check_peer(struct gdx_comm *c)
{
	uint64_t now;

	if (++c->idle_polls % GDX_LIVENESS_POLLS)
		return;
	now = gdx_now_ms();
	if (now - c->last_check_ms < GDX_LIVENESS_MS)
		return;
	c->last_check_ms = now;
	gdx_event_poll(c);
	if (c->err)
		return;
	if (gdx_sock_peer_alive(c->sock) == 0)
		return;
	/* Anything that arrived before the peer left still counts. */
	if (gdx_comm_poll(c))
		return;
	GDX_WARN("%s: peer %s (%s) closed its connection with requests pending: the peer "
		 "process exited or closed its comm",
		 gdx_comm_dev_name(c), c->peer, c->peer_dev);
	gdx_comm_fail(c, -ECONNRESET);
}

static bool gdx_mr_covers(const struct gdx_mr *mr, const void *data, uint64_t size)
{
	uintptr_t a = (uintptr_t)data;

	return a >= mr->addr && size <= mr->size && a - mr->addr <= mr->size - size;
}

/* Why gdx_check_mr refused: kept out of line, off the data path. */
__attribute__((cold, noinline)) static int gdx_mr_refuse(const struct gdx_comm *c,
							 const struct gdx_mr *mr, const void *data,
							 uint64_t size, const char *what)
{
	if (!mr || mr->kind != GDX_KIND_MR) {
		GDX_WARN("%s: %s with an invalid memory handle %p", gdx_comm_dev_name(c), what,
			 (const void *)mr);
		return -EINVAL;
	}
	if (mr->nmembers < c->nmembers) {
		GDX_WARN("%s: %s with a memory handle registered on %d NIC(s), the comm's device "
			 "has %d",
			 gdx_comm_dev_name(c), what, mr->nmembers, c->nmembers);
		return -EINVAL;
	}
	if (size && !gdx_mr_covers(mr, data, size)) {
		GDX_WARN("%s: %s of %llu bytes at %p lies outside its registration [%p, +%llu)",
			 gdx_comm_dev_name(c), what, (unsigned long long)size, data,
			 (void *)mr->addr, (unsigned long long)mr->size);
		return -EINVAL;
	}
	return 0;
}

static inline int gdx_check_mr(const struct gdx_comm *c, const struct gdx_mr *mr, const void *data,
			       uint64_t size, const char *what)
{
	if (mr && mr->kind == GDX_KIND_MR && mr->nmembers >= c->nmembers &&
	    (!size || gdx_mr_covers(mr, data, size)))
		return 0;
	return gdx_mr_refuse(c, mr, data, size, what);
}

static inline uint64_t gdx_rail_max_write(const struct gdx_rail *r)
{
	uint64_t max = r->dev->max_msg_sz;

	return max && max < GDX_MAX_WRITE ? max : GDX_MAX_WRITE;
}

/* Work requests a message of len bytes takes on rail r. */
static uint32_t gdx_rail_wrs(const struct gdx_rail *r, uint64_t len)
{
	uint64_t max = gdx_rail_max_write(r);

	return len <= max ? 1 : (uint32_t)((len + max - 1) / max);
}

/* No immediate: the message ends with a plain RDMA WRITE (a grouped
 * receive's buffers, whose sizes go in one write after them). */
#define GDX_NO_IMM UINT64_MAX

/* Posts len bytes of data (registered as mr, NULL for none) to raddr on one
 * rail, as RDMA WRITEs ending with a WRITE_WITH_IMM that carries imm (or a
 * plain one for GDX_NO_IMM, when nothing is posted for 0 bytes); req (NULL
 * for none) is done when that completes. Small host-memory messages go
 * inline: the provider copies them at post time and the NIC skips a DMA read;
 * their buffer is free again at once, so they count as done when posted and
 * go unsignaled like clear-to-sends. The caller made sure the queue has room. */
static int gdx_post_rail(struct gdx_comm *c, int rail, struct gdx_request *req, char *data,
			 uint64_t len, const struct gdx_mr *mr, uint64_t raddr, uint32_t rkey,
			 uint64_t imm)
{
	struct gdx_rail *r = &c->rails[rail];
	uint64_t max = gdx_rail_max_write(r), off = 0;
	uint32_t lkey = mr ? mr->lkey[r->member] : 0, total = 0, freed = 0;
	bool may_inline = mr && mr->type == NCCL_PTR_HOST;
	bool done_at_post = req && len <= r->max_inline && (len == 0 || may_inline);
	struct ibv_send_wr wrs[GDX_POST_BATCH], *bad;
	struct ibv_sge sges[GDX_POST_BATCH];
	enum ibv_wr_opcode last_op =
		imm == GDX_NO_IMM ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
	int ret;

	if (imm == GDX_NO_IMM && len == 0)
		return 0; /* nothing to place, nothing to say */
	do {
		int n = 0;
		bool last = false;

		while (n < GDX_POST_BATCH && !last) {
			uint64_t chunk = len - off < max ? len - off : max;

			last = off + chunk == len;
			sges[n] = (struct ibv_sge){.addr = (uintptr_t)(data + off),
						   .length = (uint32_t)chunk,
						   .lkey = lkey};
			wrs[n] = (struct ibv_send_wr){
				.next = NULL,
				.sg_list = chunk ? &sges[n] : NULL,
				.num_sge = chunk ? 1 : 0,
				.opcode = last ? last_op : IBV_WR_RDMA_WRITE,
				.send_flags = may_inline && chunk && chunk <= r->max_inline
						      ? IBV_SEND_INLINE
						      : 0,
				.imm_data = htobe32((uint32_t)imm),
				.wr.rdma = {.remote_addr = raddr + off, .rkey = rkey},
			};
			if (n)
				wrs[n - 1].next = &wrs[n];
			n++;
			off += chunk;
		}
		if (last && gdx_rail_signal(r, total + (uint32_t)n, req && !done_at_post, &freed)) {
			wrs[n - 1].send_flags |= IBV_SEND_SIGNALED;
			wrs[n - 1].wr_id =
				done_at_post || !req ? GDX_WRID_SLOTS(freed) : (uintptr_t)req;
		}
		ret = ibv_post_send(r->qp, wrs, &bad);
		if (ret) {
			GDX_WARN("%s: ibv_post_send(qp 0x%x) failed: %s", gdx_comm_dev_name(c),
				 r->qp->qp_num, strerror(ret));
			return -ret;
		}
		total += (uint32_t)n;
	} while (off < len);
	r->sq_used += total;
	if (req && !done_at_post) {
		req->wrs[rail] = (uint16_t)freed;
		req->pending++;
	}
	return 0;
}

/* The message does not fit the receive: tell the receiver on a rail it waits
 * on (its request would otherwise wait forever), and fail. */
static int gdx_send_refuse(struct gdx_send_comm *sc, uint32_t mask, uint64_t size, uint64_t posted)
{
	struct gdx_comm *c = &sc->base;

	GDX_WARN("%s: send of %llu bytes to %s is larger than the receive posted there "
		 "(%llu bytes): the two ranks disagree on the message size",
		 gdx_comm_dev_name(c), (unsigned long long)size, c->peer,
		 (unsigned long long)posted);
	gdx_post_rail(c, __builtin_ctz(mask), NULL, NULL, 0, NULL, 0, 0, GDX_IMM_REFUSED);
	gdx_comm_fail(c, -EMSGSIZE);
	return -EMSGSIZE;
}

/* Bytes each rail of mask carries: 128-byte multiples, so that NCCL's LL and
 * LL128 flag lines are never split between rails; the last rails may get 0. */
static uint64_t gdx_stripe_chunk(uint64_t size, uint32_t mask)
{
	uint64_t n = (uint64_t)__builtin_popcount(mask);

	return n == 1 ? size : ((size + n - 1) / n + 127) / 128 * 128;
}

static bool gdx_stripe_has_room(struct gdx_comm *c, uint32_t mask, uint64_t size)
{
	uint64_t chunk = gdx_stripe_chunk(size, mask), off = 0;

	for (uint32_t m = mask; m; m &= m - 1) {
		int r = __builtin_ctz(m);
		uint64_t len = off < size ? (size - off < chunk ? size - off : chunk) : 0;

		if (!gdx_rail_has_room(c, r, gdx_rail_wrs(&c->rails[r], len)))
			return false;
		off += chunk;
	}
	return true;
}

static int gdx_stripe_post(struct gdx_comm *c, struct gdx_request *req, struct gdx_cts *const *slot,
			   uint32_t mask, char *data, uint64_t size, const struct gdx_mr *mr)
{
	uint64_t chunk = gdx_stripe_chunk(size, mask), off = 0, raddr = le64toh(slot[0]->addr);

	for (uint32_t m = mask; m; m &= m - 1) {
		int r = __builtin_ctz(m);
		uint64_t len = off < size ? (size - off < chunk ? size - off : chunk) : 0;
		int ret;

		ret = gdx_post_rail(c, r, req, data + (off < size ? off : 0), len, mr,
				    raddr + (off < size ? off : 0), le32toh(slot[0]->rkeys[r]),
				    (uint32_t)len);
		if (ret)
			return ret;
		off += chunk;
	}
	return 0;
}

/* Reads the head slot: 0 with the entry count once every entry of it has
 * arrived, -EAGAIN before, -EPROTO for a malformed slot. */
static int gdx_head_slot(struct gdx_send_comm *sc, struct gdx_cts **slot, int *n_p)
{
	struct gdx_comm *c = &sc->base;
	uint32_t s = (uint32_t)(sc->head % GDX_MAX_REQUESTS), seq = (uint32_t)(sc->head + 1), n,
		 mask;

	slot[0] = &sc->base.ctrl->fifo[GDX_FIFO_INDEX(s, 0)];
	if (le32toh(__atomic_load_n(&slot[0]->seq, __ATOMIC_ACQUIRE)) != seq)
		return -EAGAIN;
	n = le32toh(slot[0]->nreqs);
	mask = le32toh(slot[0]->rail_mask);
	if (n < 1 || n > GDX_MAX_RECVS || mask == 0 || mask >> c->nrails ||
	    (n > 1 && __builtin_popcount(mask) != 1)) {
		GDX_WARN("%s: clear-to-send from %s is malformed (%u buffers, rails 0x%x of %d)",
			 gdx_comm_dev_name(c), c->peer, n, mask, c->nrails);
		gdx_comm_fail(c, -EPROTO);
		return -EPROTO;
	}
	/* The other entries come by other writes, or land in any order. */
	for (uint32_t i = 1; i < n; i++) {
		slot[i] = &sc->base.ctrl->fifo[GDX_FIFO_INDEX(s, i)];
		if (le32toh(__atomic_load_n(&slot[i]->seq, __ATOMIC_ACQUIRE)) != seq)
			return -EAGAIN;
	}
	*n_p = (int)n;
	return 0;
}

/* Every buffer of a grouped receive has its isend: on one rail, each
 * buffer's bytes by plain RDMA WRITEs, then the sizes into the receiver's
 * array at the slot by one WRITE_WITH_IMM, which RC places after them. */
static int gdx_group_post(struct gdx_send_comm *sc, struct gdx_cts *const *slot, int n)
{
	struct gdx_comm *c = &sc->base;
	int rail = __builtin_ctz(le32toh(slot[0]->rail_mask));
	uint32_t s = (uint32_t)(sc->head % GDX_MAX_REQUESTS);
	struct gdx_mr sizes_mr = {.type = NCCL_PTR_HOST};
	int ret;

	for (int i = 0; i < n; i++) {
		struct gdx_request *req = sc->matched[i];

		ret = gdx_post_rail(c, rail, req, sc->matched_data[i], req->size, sc->matched_mr[i],
				    le64toh(slot[i]->addr), le32toh(slot[i]->rkeys[rail]),
				    GDX_NO_IMM);
		if (ret)
			return ret;
		req->pending--; /* posted now: its own completion, if any, is what is left */
		c->ctrl->sizes[s][i] = (uint32_t)req->size;
	}
	sizes_mr.lkey[c->rails[rail].member] = c->ctrl_mr[c->rails[rail].member]->lkey;
	ret = gdx_post_rail(c, rail, NULL, (char *)c->ctrl->sizes[s],
			    (uint64_t)n * sizeof(uint32_t), &sizes_mr,
			    sc->remote_sizes + s * sizeof(c->ctrl->sizes[0]),
			    sc->remote_sizes_rkey[rail], GDX_IMM_GROUP);
	if (ret)
		return ret;
	memset(sc->matched, 0, sizeof(sc->matched));
	sc->nmatched = 0;
	sc->head++;
	return 0;
}

/* isend into a grouped receive: matched by tag; the request is returned at
 * once, the bytes go when the last buffer of the slot is matched. */
static int gdx_isend_group(struct gdx_send_comm *sc, struct gdx_cts *const *slot, int n, void *data,
			   uint64_t size, int tag, struct gdx_mr *mr, struct gdx_request **req_p)
{
	struct gdx_comm *c = &sc->base;
	int rail = __builtin_ctz(le32toh(slot[0]->rail_mask)), i, ret;
	struct gdx_request *req;
	uint32_t need = 0;

	for (i = 0; i < n; i++)
		if (!sc->matched[i] && le32toh(slot[i]->tag) == (uint32_t)tag)
			break;
	if (i == n)
		return 0; /* no buffer for this tag in the slot: NCCL calls again */
	if (size > le64toh(slot[i]->size)) {
		sc->head++;
		return gdx_send_refuse(sc, le32toh(slot[0]->rail_mask), size,
				       le64toh(slot[i]->size));
	}
	if (sc->nmatched == n - 1) {
		/* the last one: make sure the whole group fits before taking it,
		 * the sizes' write included */
		need = 1;
		for (int k = 0; k < n; k++)
			need += gdx_rail_wrs(&c->rails[rail], k == i ? size : sc->matched[k]->size);
		if (!gdx_rail_has_room(c, rail, need))
			return c->err;
	}
	req = gdx_req_get(c, true);
	if (!req)
		return -ENOSPC;
	req->size = size;
	req->gpu = mr->type == NCCL_PTR_CUDA;
	req->pending = 1; /* not done before its bytes are posted, with the group's last */
	sc->matched[i] = req;
	sc->matched_data[i] = data;
	sc->matched_mr[i] = mr;
	sc->nmatched++;
	*req_p = req;
	if (sc->nmatched < n)
		return 0;
	ret = gdx_group_post(sc, slot, n);
	if (ret)
		gdx_comm_fail(c, ret);
	return ret;
}

int gdx_isend(struct gdx_send_comm *sc, void *data, uint64_t size, int tag, struct gdx_mr *mr,
	      struct gdx_request **req_p)
{
	struct gdx_comm *c = &sc->base;
	struct gdx_cts *slot[GDX_MAX_RECVS];
	struct gdx_request *req;
	uint64_t posted;
	uint32_t mask;
	int n, ret;

	*req_p = NULL;
	if (c->err)
		return c->err;
	ret = gdx_check_mr(c, mr, data, size, "isend");
	if (ret)
		return ret;
	ret = gdx_head_slot(sc, slot, &n);
	if (ret == -EAGAIN) {
		/* No clear-to-send yet: NCCL calls again. Keep completions moving. */
		if (!gdx_comm_poll(c))
			gdx_comm_check_peer(c);
		return c->err;
	}
	if (ret)
		return ret;
	c->idle_polls = 0;
	if (n > 1)
		return gdx_isend_group(sc, slot, n, data, size, tag, mr, req_p);
	/* A single receive is matched by tag as a grouped one is (net_ib): NCCL
	 * shares one send comm among local ranks (PXN) and tells them apart by
	 * tag, so a send of another rank waits for a receive of its own. */
	if (le32toh(slot[0]->tag) != (uint32_t)tag)
		return 0;
	posted = le64toh(slot[0]->size);
	mask = le32toh(slot[0]->rail_mask);
	if (size > posted) {
		sc->head++;
		return gdx_send_refuse(sc, mask, size, posted);
	}
	if (!gdx_stripe_has_room(c, mask, size))
		return c->err; /* completions free the room; NCCL calls again */
	req = gdx_req_get(c, true);
	if (!req)
		return -ENOSPC;
	sc->head++;
	req->size = size;
	req->gpu = mr->type == NCCL_PTR_CUDA;
	ret = gdx_stripe_post(c, req, slot, mask, data, size, mr);
	if (ret) {
		gdx_req_put(req);
		gdx_comm_fail(c, ret);
		return ret;
	}
	*req_p = req;
	return 0;
}

/* One RDMA WRITE of count FIFO entries from index first on. */
static int gdx_cts_write(struct gdx_recv_comm *rc, uint32_t first, uint32_t count)
{
	struct gdx_rail *r = &rc->base.rails[0];
	struct gdx_cts *cts = rc->base.ctrl->fifo;
	struct ibv_sge sge = {.addr = (uintptr_t)&cts[first],
			      .length = count * (uint32_t)sizeof(*cts),
			      .lkey = rc->base.ctrl_mr[0]->lkey};
	struct ibv_send_wr wr = {
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = {.remote_addr = rc->remote_fifo + first * sizeof(*cts),
			    .rkey = rc->remote_fifo_rkey},
	};
	struct ibv_send_wr *bad;
	uint32_t freed;
	int ret;

	if (r->max_inline >= sge.length)
		wr.send_flags |= IBV_SEND_INLINE;
	if (gdx_rail_signal(r, 1, false, &freed)) {
		wr.send_flags |= IBV_SEND_SIGNALED;
		wr.wr_id = GDX_WRID_SLOTS(freed);
	}
	ret = ibv_post_send(r->qp, &wr, &bad);
	if (ret) {
		GDX_WARN("%s: ibv_post_send(clear-to-send, qp 0x%x) failed: %s",
			 gdx_comm_dev_name(&rc->base), r->qp->qp_num, strerror(ret));
		gdx_comm_fail(&rc->base, -ret);
		return -ret;
	}
	r->sq_used++;
	return 0;
}

/* Writes the clear-to-sends of receives [cts_sent, tail) into the sender's
 * FIFO: per run of consecutive slots (two where the ring wraps), one write of
 * their first entries, and one per further entry row that a grouped receive
 * among them uses. */
static int gdx_cts_flush(struct gdx_recv_comm *rc)
{
	if (rc->base.err)
		return rc->base.err;
	if (rc->cts_flushing)
		return 0; /* polling for room below came back here */
	rc->cts_flushing = true;
	while (rc->cts_sent < rc->tail) {
		uint32_t first = (uint32_t)(rc->cts_sent % GDX_MAX_REQUESTS);
		uint64_t count = rc->tail - rc->cts_sent;

		if (first + count > GDX_MAX_REQUESTS)
			count = GDX_MAX_REQUESTS - first;
		for (uint32_t i = 0; i < GDX_MAX_RECVS; i++) {
			uint32_t lo = GDX_MAX_REQUESTS, hi = 0;
			int ret;

			for (uint32_t s = first; s < first + count; s++) {
				if (le32toh(rc->base.ctrl->fifo[GDX_FIFO_INDEX(s, 0)].nreqs) <= i)
					continue;
				lo = s < lo ? s : lo;
				hi = s;
			}
			if (lo > hi)
				break; /* no receive of the run has this many buffers */
			/* No room: the run is written again, whole, once there is
			 * (the writes are idempotent); every poll retries it. */
			rc->cts_stalled = !gdx_rail_has_room(&rc->base, 0, 1);
			ret = rc->cts_stalled
				      ? rc->base.err
				      : gdx_cts_write(rc, GDX_FIFO_INDEX(lo, i), hi - lo + 1);
			if (ret || rc->cts_stalled) {
				rc->cts_flushing = false;
				return ret;
			}
		}
		rc->cts_sent += count;
		rc->cts_outstanding += (uint32_t)count;
	}
	rc->cts_flushing = false;
	return 0;
}

int gdx_irecv(struct gdx_recv_comm *rc, int n, void **data, const uint64_t *sizes, const int *tags,
	      struct gdx_mr **mrs, struct gdx_request **req_p)
{
	struct gdx_comm *c = &rc->base;
	struct gdx_cts *cts;
	struct gdx_request *req;
	uint32_t mask;
	int ret;

	*req_p = NULL;
	if (c->err)
		return c->err;
	if (n < 1 || n > GDX_MAX_RECVS) {
		GDX_WARN("%s: irecv of %d buffers; this device takes 1 to %d", gdx_comm_dev_name(c),
			 n, GDX_MAX_RECVS);
		return -EINVAL;
	}
	for (int i = 0; i < n; i++) {
		ret = gdx_check_mr(c, mrs[i], data[i], sizes[i], "irecv");
		if (ret)
			return ret;
	}
	if (rc->recvs_active == GDX_MAX_REQUESTS) {
		GDX_WARN("%s: more than %d receive requests in flight on one comm (NCCL allows %d)",
			 gdx_comm_dev_name(c), GDX_MAX_REQUESTS, NCCL_NET_MAX_REQUESTS);
		return -ENOSPC;
	}
	req = gdx_req_get(c, false);
	if (!req)
		return -ENOSPC;
	rc->recvs_active++;
	req->posted = sizes[0];
	req->n = n;
	req->gpu = mrs[0]->type == NCCL_PTR_CUDA;
	memset(req->sizes, 0, sizeof(req->sizes));
	/* Large single receives take every rail; the rest take one, in turn. */
	if (c->nrails == 1)
		mask = 1;
	else if (n == 1 && sizes[0] >= (uint64_t)gdx_params.stripe_min)
		mask = (1u << c->nrails) - 1;
	else
		mask = 1u << (rc->tail % (uint64_t)c->nrails);
	for (int i = 0; i < n; i++) {
		cts = &rc->base.ctrl->fifo[GDX_FIFO_INDEX(rc->tail % GDX_MAX_REQUESTS, i)];
		memset(cts, 0, sizeof(*cts));
		cts->addr = htole64((uintptr_t)data[i]);
		cts->size = htole64(sizes[i]);
		for (int r = 0; r < c->nrails; r++)
			cts->rkeys[r] = htole32(mrs[i]->rkey[c->rails[r].member]);
		cts->rail_mask = htole32(mask);
		cts->tag = htole32((uint32_t)tags[i]);
		cts->nreqs = htole32((uint32_t)n);
		cts->seq = htole32((uint32_t)(rc->tail + 1));
	}
	req->seq = rc->tail++;
	/* One immediate per rail of the mask (a group has one rail, one immediate). */
	for (int r = 0; r < c->nrails; r++) {
		struct gdx_expect_ring *ring = &rc->expect[r];

		if (!(mask & (1u << r)))
			continue;
		ring->reqs[ring->tail++ % GDX_MAX_REQUESTS] = req;
		req->pending++;
	}
	if (rc->cts_outstanding < GDX_CTS_DEFER_MIN ||
	    rc->tail - rc->cts_sent >= (uint64_t)gdx_params.cts_batch)
		ret = gdx_cts_flush(rc);
	else
		/* held back only while the sender really holds two or more: what
		 * arrived since the last poll may say it does not */
		ret = gdx_comm_poll(c) >= 0 ? c->err : 0;
	if (ret) {
		gdx_req_put(req); /* the comm has failed: so do its other requests */
		return ret;
	}
	*req_p = req;
	return 0;
}

int gdx_iflush(struct gdx_recv_comm *rc, int n, void **data, const int *sizes, struct gdx_mr **mrs,
	       struct gdx_request **req_p)
{
	struct gdx_comm *c = &rc->base;
	struct gdx_request *req;
	int last = -1;

	*req_p = NULL;
	if (c->err)
		return c->err;
	if (n < 1 || n > GDX_MAX_RECVS || !data || !sizes || !mrs)
		return 0; /* nothing to flush: NCCL counts it done */
	/* The last buffer that received bytes into memory that needs it. */
	for (int i = 0; i < n; i++)
		if (sizes[i] > 0 && mrs[i] && mrs[i]->kind == GDX_KIND_MR &&
		    (mrs[i]->type == NCCL_PTR_CUDA || gdx_params.gdr_flush == 2))
			last = i;
	if (last < 0)
		return 0;
	if (!rc->nflush) {
		/* GPU memory registered through another comm (regIsGlobal, NCCL
		 * 2.20-2.23's user buffers): the QPs are made now, once */
		int ret = gdx_flush_create(rc);

		if (ret) {
			gdx_comm_fail(c, ret);
			return ret;
		}
		if (!rc->nflush)
			return 0; /* the device needs no flush */
	}
	req = gdx_req_get(c, false);
	if (!req)
		return -ENOSPC;
	req->flush = true;
	for (int r = 0; r < rc->nflush; r++) {
		struct ibv_sge sge = {.addr = (uintptr_t)rc->flush_byte,
				      .length = 1,
				      .lkey = rc->flush_mr[r]->lkey};
		struct ibv_send_wr wr = {
			.wr_id = (uintptr_t)req,
			.sg_list = &sge,
			.num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = {.remote_addr = (uintptr_t)data[last],
				    .rkey = mrs[last]->rkey[r]}, /* flush[r] is on member r */
		};
		struct ibv_send_wr *bad;
		int ret = ibv_post_send(rc->flush[r].qp, &wr, &bad);

		if (ret) {
			GDX_WARN("%s: ibv_post_send(flush read, qp 0x%x) failed: %s",
				 gdx_comm_dev_name(c), rc->flush[r].qp->qp_num, strerror(ret));
			gdx_comm_fail(c, -ret);
			if (req->pending == 0)
				gdx_req_put(req);
			return -ret;
		}
		req->pending++;
	}
	*req_p = req;
	return 0;
}

int gdx_test(struct gdx_request *req, int *done_p, int *sizes)
{
	struct gdx_comm *c = req->comm;
	int err;

	if (req->state != GDX_REQ_ACTIVE) {
		GDX_WARN("test of request %p, which is not in flight (already completed?)",
			 (void *)req);
		return -EINVAL;
	}
	*done_p = 0;
	if (c->kind == GDX_KIND_RECV && gdx_recv_comm_of(c)->cts_sent < gdx_recv_comm_of(c)->tail)
		gdx_cts_flush(gdx_recv_comm_of(c));
	if (req->pending > 0 && !req->err && !c->err) {
		if (gdx_comm_poll(c))
			c->idle_polls = 0;
		else
			gdx_comm_check_peer(c);
	}
	err = req->err ? req->err : (req->pending > 0 ? c->err : 0);
	if (err) {
		gdx_req_put(req);
		return err;
	}
	if (req->pending > 0)
		return 0;
	*done_p = 1;
	for (int i = 0; i < req->n && req->n > 1; i++)
		req->size += req->sizes[i]; /* a group's total, for the counters */
	if (sizes && req->n > 1)
		for (int i = 0; i < req->n; i++)
			sizes[i] = (int)req->sizes[i];
	else if (sizes)
		sizes[0] = (int)req->size;
	*(req->gpu ? &c->bytes_gpu : &c->bytes_host) += req->size;
	gdx_req_put(req);
	return 0;
}

int gdx_recv_comm_start(struct gdx_recv_comm *rc)
{
	for (int r = 0; r < rc->base.nrails; r++) {
		int ret = gdx_rail_post_recvs(&rc->base.rails[r], GDX_RECVS_AHEAD);

		if (ret)
			return ret;
	}
	return 0;
}

/* Peer hosts a drain gave up on lately, by address without the port. A job
 * that aborts closes its comms one by one; only the first to a dead host
 * waits. Off the data path: closing only. */
#define GDX_DEAF_HOSTS 32
static struct {
	char host[64];
	uint64_t since;
} gdx_deaf[GDX_DEAF_HOSTS];
static pthread_mutex_t gdx_deaf_lock = PTHREAD_MUTEX_INITIALIZER;

static void gdx_peer_host(const struct gdx_comm *c, char *host, size_t len)
{
	const char *colon = strrchr(c->peer, ':');

	snprintf(host, len, "%.*s", colon ? (int)(colon - c->peer) : (int)strlen(c->peer), c->peer);
}

/* Whether host let a drain run out within GDX_DEAF_MS; deaf sets or clears it. */
static bool gdx_deaf_host(const char *host, int deaf)
{
	uint64_t now = gdx_now_ms();
	bool found = false;
	int slot = 0;

	pthread_mutex_lock(&gdx_deaf_lock);
	for (int i = 0; i < GDX_DEAF_HOSTS; i++) {
		if (!strcmp(gdx_deaf[i].host, host) && now - gdx_deaf[i].since < GDX_DEAF_MS) {
			found = true;
			slot = i;
			break;
		}
		if (gdx_deaf[i].since < gdx_deaf[slot].since)
			slot = i; /* the oldest, to take when host is not there */
	}
	if (deaf > 0) {
		snprintf(gdx_deaf[slot].host, sizeof(gdx_deaf[slot].host), "%s", host);
		gdx_deaf[slot].since = now;
	} else if (deaf == 0 && found) {
		gdx_deaf[slot].host[0] = '\0';
	}
	pthread_mutex_unlock(&gdx_deaf_lock);
	return found;
}

/* Inline sends count as done when posted, but destroying the QP could still
 * drop them (and the receiver would wait forever): one signaled zero-byte
 * write behind them (no address or key: the responder checks none for zero
 * bytes) says when they are delivered. A peer that has closed its end needs
 * nothing more; one that does not answer holds the close up GDX_DRAIN_MS,
 * once per host (net_ib waits for nothing, and can lose such sends). */
void gdx_send_drain(struct gdx_send_comm *sc)
{
	struct gdx_comm *c = &sc->base;
	bool busy = false, deaf;
	uint64_t deadline;
	char host[64];

	for (int i = 0; i < c->nrails && !c->err; i++) {
		struct gdx_rail *r = &c->rails[i];
		struct ibv_send_wr wr = {.opcode = IBV_WR_RDMA_WRITE,
					 .send_flags = IBV_SEND_SIGNALED},
				   *bad;
		uint32_t freed;
		int ret;

		if (!r->unsignaled)
			continue;
		gdx_rail_signal(r, 1, true, &freed);
		wr.wr_id = GDX_WRID_SLOTS(freed);
		ret = ibv_post_send(r->qp, &wr, &bad);
		if (ret) {
			GDX_WARN("%s: ibv_post_send(close, qp 0x%x) failed: %s",
				 gdx_comm_dev_name(c), r->qp->qp_num, strerror(ret));
			return;
		}
		r->sq_used++;
		busy = true;
	}
	if (!busy)
		return;
	gdx_peer_host(c, host, sizeof(host));
	deaf = gdx_deaf_host(host, -1);
	deadline = gdx_now_ms() + (deaf ? 0 : GDX_DRAIN_MS);
	while (busy && !c->err) {
		busy = false;
		gdx_comm_poll(c);
		for (int i = 0; i < c->nrails; i++)
			busy |= c->rails[i].sq_used > 0;
		if (busy && gdx_sock_peer_alive(c->sock))
			return; /* the peer closed its comm: nothing waits for them */
		if (busy && gdx_now_ms() > deadline) {
			if (!deaf)
				GDX_INFO(NCCL_NET,
					 "%s: closing the send comm to %s with sends not confirmed "
					 "delivered after %d ms; further comms to %s close without "
					 "waiting for %d s",
					 gdx_comm_dev_name(c), c->peer, GDX_DRAIN_MS, host,
					 GDX_DEAF_MS / 1000);
			gdx_deaf_host(host, 1);
			return;
		}
	}
	if (deaf && !busy)
		gdx_deaf_host(host, 0); /* it answers again */
}
