/* SPDX-License-Identifier: MIT */
#include <endian.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/gdx_dev.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "rail/gdx_post.h"
#include "data/gdx_prof.h"
#include "data/gdx_req.h"

_Static_assert((GDX_MAX_SEND_REQUESTS & (GDX_MAX_SEND_REQUESTS - 1)) == 0 &&
		       (GDX_MAX_REQUESTS & (GDX_MAX_REQUESTS - 1)) == 0,
	       "request tables are rings of a power of two");

struct gdx_request *gdx_req_none(struct gdx_comm *c, bool is_send)
{
	GDX_WARN("%s: more than %d %s requests in flight on one comm (NCCL allows %d)", c->dev_name,
		 c->max_reqs, is_send ? "send" : "receive", c->max_reqs);
	return NULL;
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

	for (*rail = 0; *rail < c->ch.nrails; (*rail)++) {
		for (*q = 0; *q < c->ch.rails[*rail].nqps; (*q)++) {
			const struct gdx_seglog *log = c->ch.rails[*rail].qps[*q].log;

			for (uint32_t i = log ? log->head : 0; log && i != log->tail; i++) {
				const struct gdx_seglog_entry *e = &log->e[i % GDX_SEGLOG_SIZE];
				const struct gdx_seg *s = &e->seg;

				if (s->wait == &r->wait)
					return e;
				if (!s->wait && s->len && r->dbg_len &&
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
		if ((r->wait.dbg_mode & (1u << i)) && off < sizeof(mode))
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

	if (r->wait.dbg_wrs != r->wait.dbg_wrs_done) {
		snprintf(why, sizeof(why), "%u of its %u work requests were not complete",
			 r->wait.dbg_wrs - r->wait.dbg_wrs_done, r->wait.dbg_wrs);
		gdx_req_abort(r, why);
	}
	if (r->is_send && (e = gdx_req_reader(r, &rail, &q))) {
		snprintf(why, sizeof(why),
			 "a %u-byte WRITE %s on rail %d QP %d was not complete (WR %u)", e->seg.len,
			 e->seg.wait ? "of its own" : "over its buffer for no request", rail, q,
			 e->last_wr);
		gdx_req_abort(r, why);
	}
	if (!r->is_send && !r->flush && !r->small && r->arrived != r->pieces) {
		snprintf(why, sizeof(why), "%u of its %u pieces had arrived", r->arrived,
			 r->pieces);
		gdx_req_abort(r, why);
	}
}

/* ---- the receive side's bytes (gdx_req.h) ---- */

#define GDX_DBG_NO_SUM 1u /* gdx_dbg_piece.reserved: GPU memory, not summed */

uint64_t gdx_req_sum(const void *p, uint64_t len)
{
	const unsigned char *b = p;
	uint64_t h = 0xcbf29ce484222325ull ^ len, w;
	uint64_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

void gdx_req_dbg_fill(struct gdx_comm *c, uint32_t s, uint32_t i, uint64_t seq, const char *data,
		      uint64_t off, uint64_t len, bool gpu, int rail, int q)
{
	struct gdx_dbg_piece *d = &c->stage->dbg[s][i];

	d->seq = seq + 1;
	d->off = off;
	d->len = len;
	d->sum = gpu ? 0 : gdx_req_sum(data + off, len);
	d->reserved = gpu ? GDX_DBG_NO_SUM : 0;
	d->rail = (uint16_t)rail;
	d->q = (uint16_t)q;
}

struct gdx_seg gdx_req_dbg_seg(const struct gdx_comm *c, uint32_t s, uint32_t first, uint32_t n)
{
	return (struct gdx_seg){.data = (char *)&c->stage->dbg[s][first],
				.raddr = c->remote_ctrl + offsetof(struct gdx_ctrl, dbg) +
					 ((uint64_t)s * GDX_IMM_MAX_PIECES + first) *
						 sizeof(struct gdx_dbg_piece),
				.len = n * (uint32_t)sizeof(struct gdx_dbg_piece),
				.flags = GDX_SEG_CTRL | GDX_SEG_DBG};
}

__attribute__((noreturn)) static void gdx_req_piece_abort(const struct gdx_recv_comm *rc,
							  const struct gdx_request *req,
							  uint32_t piece, const char *why)
{
	GDX_WARN("%s: piece %u of receive %llu: %s", rc->base.dev_name, piece,
		 (unsigned long long)req->seq, why);
	fprintf(stderr,
		"libnccl-net-gdx: invariant broken: piece %u of receive %llu (%s) counted while "
		"%s\n",
		piece, (unsigned long long)req->seq, req->n > 1 ? "grouped" : "chunked", why);
	abort();
}

/* Record i of the receive's slot against the bytes of buffer `buf` now. */
static void gdx_req_check_record(struct gdx_recv_comm *rc, const struct gdx_request *req,
				 uint32_t i, uint32_t buf, int rail, int q)
{
	uint32_t s = (uint32_t)(req->seq % GDX_MAX_REQUESTS);
	const struct gdx_dbg_piece *d = &rc->base.ctrl->dbg[s][i];
	const struct gdx_cts *e = &rc->base.stage->fifo[GDX_FIFO_INDEX(s, buf)];
	char why[256];

	if (d->seq != req->seq + 1) {
		snprintf(why, sizeof(why),
			 "its record is of message %lld: it did not land before its immediate, "
			 "which came by rail %d QP %d",
			 (long long)d->seq - 1, rail, q);
		gdx_req_piece_abort(rc, req, i, why);
	}
	if (d->rail != rail || d->q != q) {
		snprintf(why, sizeof(why),
			 "its immediate came by rail %d QP %d, its bytes went by rail %u QP %u",
			 rail, q, d->rail, d->q);
		gdx_req_piece_abort(rc, req, i, why);
	}
	if (d->off + d->len < d->off || d->off + d->len > le64toh(e->size)) {
		snprintf(why, sizeof(why),
			 "its record says bytes [%llu, +%llu) of a %llu-byte buffer",
			 (unsigned long long)d->off, (unsigned long long)d->len,
			 (unsigned long long)le64toh(e->size));
		gdx_req_piece_abort(rc, req, i, why);
	}
	if (!(d->reserved & GDX_DBG_NO_SUM) && !req->gpu &&
	    gdx_req_sum((const char *)(uintptr_t)le64toh(e->addr) + d->off, d->len) != d->sum) {
		snprintf(
			why, sizeof(why),
			"its %llu bytes at offset %llu were not all placed when its immediate came "
			"by rail %d QP %d",
			(unsigned long long)d->len, (unsigned long long)d->off, rail, q);
		gdx_req_piece_abort(rc, req, i, why);
	}
}

void gdx_req_check_piece(struct gdx_recv_comm *rc, const struct gdx_request *req, uint32_t piece,
			 bool group, int rail, int q)
{
	if (!rc->base.dbg_records) /* a release build's sender writes none */
		return;
	if (!group) {
		gdx_req_check_record(rc, req, piece, 0, rail, q);
		return;
	}
	for (int i = 0; i < req->n; i++)
		gdx_req_check_record(rc, req, (uint32_t)i, (uint32_t)i, rail, q);
}
#endif
