/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>

#include <gdx/gdx_dev.h>
#include <gdx/gdx_live.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_post.h>
#include <gdx/gdx_prof.h>
#include <gdx/gdx_req.h>

_Static_assert((GDX_MAX_SEND_REQUESTS & (GDX_MAX_SEND_REQUESTS - 1)) == 0 &&
		       (GDX_MAX_REQUESTS & (GDX_MAX_REQUESTS - 1)) == 0,
	       "request tables are rings of a power of two");

struct gdx_request *gdx_req_get(struct gdx_comm *c, bool is_send)
{
	uint32_t wrap = (uint32_t)c->max_reqs - 1;
	struct gdx_request *r;

	if (c->active == c->max_reqs) {
		GDX_WARN("%s: more than %d %s requests in flight on one comm (NCCL allows %d)",
			 c->dev_name, c->max_reqs, is_send ? "send" : "receive", c->max_reqs);
		return NULL;
	}
	/* Requests mostly complete in order: the next slot is usually free,
	 * and one is, as active < max. */
	while (c->reqs[c->next_req].state != GDX_REQ_FREE)
		c->next_req = (c->next_req + 1) & wrap;
	r = &c->reqs[c->next_req];
	c->next_req = (c->next_req + 1) & wrap;
	c->active++;
	GDX_LIVE_COUNT(c->live->outstanding = (uint32_t)c->active);
	r->state = GDX_REQ_ACTIVE;
	r->is_send = is_send;
	r->pending = 0;
	r->err = 0;
	r->size = 0;
	r->posted = 0;
	r->n = 1;
	r->flush = false;
#ifdef GDX_DEBUG
	r->dbg_wrs = r->dbg_wrs_done = r->dbg_mode = 0;
	r->dbg_buf = NULL;
	r->dbg_len = 0;
#endif
	return r;
}

void gdx_req_put(struct gdx_request *r)
{
	gdx_prof_done(r);
	r->state = GDX_REQ_FREE;
	r->comm->active--;
	GDX_LIVE_COUNT(r->comm->live->outstanding = (uint32_t)r->comm->active);
	if (!r->is_send && !r->flush) {
		struct gdx_recv_comm *rc = gdx_recv_comm_of(r->comm);
		uint32_t s = (uint32_t)(r->seq % GDX_MAX_REQUESTS);

		rc->recvs_active--;
		if (rc->slots[s] == r) /* given back before it completed: the comm failed */
			rc->slots[s] = NULL;
	}
}

void gdx_comm_fail(struct gdx_comm *c, int err)
{
	if (!c->err)
		c->err = err;
}

#ifdef GDX_DEBUG
static const char *const gdx_req_mode_names[] = {
	"chunked",	  "adaptive routing",
	"split over QPs", "striped over rails",
	"grouped",	  "re-sent after a rail failed",
	"inline",	  "flush",
};

/* A WR still logged (not yet known complete) that reads the request's
 * buffer: one of its own, or one that names no request (which no
 * completion would hold it for) over the same bytes. */
static const struct gdx_seglog_entry *gdx_req_reader(const struct gdx_request *r, int *rail, int *q)
{
	const struct gdx_comm *c = r->comm;
	const char *lo = r->dbg_buf, *hi = lo + r->dbg_len;

	for (*rail = 0; *rail < c->nrails; (*rail)++) {
		for (*q = 0; *q < c->rails[*rail].nqps; (*q)++) {
			const struct gdx_seglog *log = c->rails[*rail].qps[*q].log;

			for (uint32_t i = log ? log->head : 0; log && i != log->tail; i++) {
				const struct gdx_seglog_entry *e = &log->e[i % GDX_SEGLOG_SIZE];
				const struct gdx_seg *s = &e->seg;

				if (s->req == r)
					return e;
				if (!s->req && s->len && r->dbg_len &&
				    !(s->flags & (GDX_SEG_CTRL | GDX_SEG_INLINE)) && s->data < hi &&
				    s->data + s->len > lo)
					return e;
			}
		}
	}
	return NULL;
}

__attribute__((noreturn)) static void gdx_req_abort(const struct gdx_request *r, const char *why)
{
	char mode[256] = "";
	size_t off = 0;

	for (unsigned i = 0; i < sizeof(gdx_req_mode_names) / sizeof(gdx_req_mode_names[0]); i++)
		if ((r->dbg_mode & (1u << i)) && off < sizeof(mode))
			off += (size_t)snprintf(mode + off, sizeof(mode) - off, "%s%s",
						off ? ", " : "", gdx_req_mode_names[i]);
	GDX_WARN("%s: a %s request (mode: %s) completed while %s", r->comm->dev_name,
		 r->flush     ? "flush"
		 : r->is_send ? "send"
			      : "receive",
		 off ? mode : "plain", why);
	fprintf(stderr,
		"libnccl-net-gdx: invariant broken: a %s request (mode: %s) completed while %s\n",
		r->flush     ? "flush"
		: r->is_send ? "send"
			     : "receive",
		off ? mode : "plain", why);
	abort();
}

void gdx_req_check_done(const struct gdx_request *r)
{
	const struct gdx_seglog_entry *e;
	char why[160];
	int rail, q;

	if (r->dbg_wrs != r->dbg_wrs_done) {
		snprintf(why, sizeof(why), "%u of its %u work requests were not complete",
			 r->dbg_wrs - r->dbg_wrs_done, r->dbg_wrs);
		gdx_req_abort(r, why);
	}
	if (r->is_send && (e = gdx_req_reader(r, &rail, &q))) {
		snprintf(why, sizeof(why),
			 "a %u-byte WRITE %s on rail %d QP %d was not complete (WR %u)", e->seg.len,
			 e->seg.req ? "of its own" : "over its buffer for no request", rail, q,
			 e->last_wr);
		gdx_req_abort(r, why);
	}
	if (!r->is_send && !r->flush && !r->small && r->arrived != r->pieces) {
		snprintf(why, sizeof(why), "%u of its %u pieces had arrived", r->arrived,
			 r->pieces);
		gdx_req_abort(r, why);
	}
}
#endif
