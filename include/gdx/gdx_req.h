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

#include <gdx/gdx_comm.h>
#include <gdx/gdx_post.h>

/* A free request of the comm, or NULL (with a WARN) when all are in flight. */
struct gdx_request *gdx_req_get(struct gdx_comm *c, bool is_send);
void gdx_req_put(struct gdx_request *r);
/* The comm fails with err, unless it already has: every call returns it. */
void gdx_comm_fail(struct gdx_comm *c, int err);

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
 * message carries its bytes with its immediate and needs none.
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
