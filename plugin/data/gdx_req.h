/* SPDX-License-Identifier: MIT */
/*
 * Requests (gdx_req.c): taken from a comm's table and given back, and, in
 * debug builds (GDX_DEBUG: make DEBUG=1, and the sanitizer builds), the
 * invariant the data path keeps: a request completes only when the NIC is
 * done with its buffer. Each request counts the work requests posted that
 * read its buffer (or carry its immediate, or flush it) and those a
 * completion showed done (gdx_comm.h); completing it with any outstanding
 * aborts, naming the modes it went by. Release builds compile it out.
 */
#ifndef GDX_REQ_H
#define GDX_REQ_H

#include <stdbool.h>
#include <stdint.h>

#include "comm/gdx_comm.h"
#include "rail/gdx_post.h"
#include "data/gdx_prof.h"

/* No free request: the WARN, NULL. */
struct gdx_request *gdx_req_none(struct gdx_comm *c, bool is_send) __attribute__((cold, noinline));

/* A free request of the comm, or NULL (with a WARN) when all are in flight.
 * Inline, as every message takes one and gives it back. */
static inline struct gdx_request *gdx_req_get(struct gdx_comm *c, bool is_send)
{
	uint32_t wrap = (uint32_t)c->max_reqs - 1;
	struct gdx_request *r;

	if (c->active == c->max_reqs)
		return gdx_req_none(c, is_send);
	/* Requests mostly complete in order: the next slot is usually free,
	 * and one is, as active < max. */
	while (c->reqs[c->next_req].state != GDX_REQ_FREE)
		c->next_req = (c->next_req + 1) & wrap;
	r = &c->reqs[c->next_req];
	c->next_req = (c->next_req + 1) & wrap;
	c->active++;
	GDX_LIVE_COUNT(c->ch.live->outstanding = (uint32_t)c->active);
	r->state = GDX_REQ_ACTIVE;
	r->is_send = is_send;
	r->wait.pending = 0;
	r->err = 0;
	r->size = 0;
	r->posted = 0;
	r->n = 1;
	r->flush = false;
#ifdef GDX_DEBUG
	r->wait.dbg_wrs = r->wait.dbg_wrs_done = r->wait.dbg_mode = 0;
	r->dbg_buf = NULL;
	r->dbg_len = 0;
#endif
	return r;
}

static inline void gdx_req_put(struct gdx_request *r)
{
	gdx_prof_done(r);
	r->state = GDX_REQ_FREE;
	r->comm->active--;
	GDX_LIVE_COUNT(r->comm->ch.live->outstanding = (uint32_t)r->comm->active);
	if (!r->is_send && !r->flush) {
		struct gdx_recv_comm *rc = gdx_recv_comm_of(r->comm);
		uint32_t s = (uint32_t)(r->seq % GDX_MAX_REQUESTS);

		rc->recvs_active--;
		if (rc->slots[s] == r) /* given back before it completed: the comm failed */
			rc->slots[s] = NULL;
	}
}

/*
 * The receive side proves bytes, not counts. A debug build's sender puts a
 * record of each piece (gdx_dbg_piece: its place in the receive, the sum
 * of its bytes, its QP) into the receiver's control region, on the piece's
 * QP, just before the immediate that ends the piece; a grouped send one per
 * buffer. RC places a QP's writes in order, so when the immediate arrives
 * the record has landed, and so have the bytes if they went on that QP
 * before it: the receiver sums its buffer there and then, and aborts,
 * naming the piece and the QPs, when the record is of another message,
 * came by another QP, or the bytes are not what was sent. A single-WR
 * message carries its bytes with its immediate and needs none. Records go
 * only between two debug builds, as each end's handshake says
 * (GDX_META_F_RECORDS): a release peer's pieces go unchecked, and so do a
 * peer's that never said it writes them.
 */
#ifdef GDX_DEBUG
/* Called as test reports the request done: aborts, naming the modes the
 * request went by, if a work request still reads its buffer (by its
 * counts, and a send's by the QPs' logs of what is not yet complete). */
void gdx_req_check_done(const struct gdx_request *r);
/* A sum of len bytes at p (host memory). */
uint64_t gdx_req_sum(const void *p, uint64_t len);
/* Sender: the record of part i of slot s's message seq (bytes [off, off +
 * len) of data, the receive's buffer i for a group, else its piece i),
 * going on QP q of rail; gpu: bytes the CPU cannot sum. */
void gdx_req_dbg_fill(struct gdx_comm *c, uint32_t s, uint32_t i, uint64_t seq, const char *data,
		      uint64_t off, uint64_t len, bool gpu, int rail, int q);
/* Sender: the segment that writes records [first, first + n) of slot s
 * into the receiver's. */
struct gdx_seg gdx_req_dbg_seg(const struct gdx_comm *c, uint32_t s, uint32_t first, uint32_t n);
/* Receiver: the immediate of piece `piece` (group: of the whole group) of
 * req arrived on QP q of rail. */
void gdx_req_check_piece(struct gdx_recv_comm *rc, const struct gdx_request *req, uint32_t piece,
			 bool group, int rail, int q);
#else
static inline void gdx_req_check_done(const struct gdx_request *r)
{
	(void)r;
}
static inline void gdx_req_check_piece(struct gdx_recv_comm *rc, const struct gdx_request *req,
				       uint32_t piece, bool group, int rail, int q)
{
	(void)rc;
	(void)req;
	(void)piece;
	(void)group;
	(void)rail;
	(void)q;
}
#endif

#endif
