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

/* A free request of the comm, or NULL (with a WARN) when all are in flight. */
struct gdx_request *gdx_req_get(struct gdx_comm *c, bool is_send);
void gdx_req_put(struct gdx_request *r);
/* The comm fails with err, unless it already has: every call returns it. */
void gdx_comm_fail(struct gdx_comm *c, int err);

#ifdef GDX_DEBUG
/* Called as test reports the request done: aborts, naming the modes the
 * request went by, if a work request still reads its buffer (by its
 * counts, and a send's by the QPs' logs of what is not yet complete). */
void gdx_req_check_done(const struct gdx_request *r);
#else
static inline void gdx_req_check_done(const struct gdx_request *r)
{
	(void)r;
}
#endif

#endif
