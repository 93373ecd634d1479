/* SPDX-License-Identifier: MIT */
/*
 * A connection that survives a rail: a rail whose QPs fail (a port down,
 * retries exceeded, a fatal async event) is taken out, every piece in flight
 * on it that the receiver did not take is posted again on the rails left,
 * and once its port is back the rail's QPs are reset and connected again in
 * the background (a growing wait between attempts, which never end unless
 * NCCL_GDX_RECOVERY_ATTEMPTS caps them) and it
 * carries traffic again. Only losing every rail is an error. The two ends
 * agree through notes they RDMA-write into each other's control region on a
 * rail that works (gdx_comm.h), so the out-of-band network plays no part.
 */
#ifndef GDX_FAILOVER_H
#define GDX_FAILOVER_H

#include <stdbool.h>

#include "comm/gdx_comm.h"

/* What gdx_failover_poll asks of the data path. */
enum {
	GDX_FO_REWRITE_CTS = 1, /* receiver: write the clear-to-sends of every receive
				 * not yet complete again, on the rail now used (one
				 * lost with its rail would hold the sender at its
				 * slot; it takes a rewrite as the same entry) */
};

/* Sets the comm up: every rail UP, failover on where it can be. */
void gdx_failover_init(struct gdx_comm *c);
/* Before the comm's rails go: waits for restores still working. */
void gdx_failover_fini(struct gdx_comm *c);
/* Rail rail failed (why: what was seen): taken out where it can be (then
 * returns GDX_FO_* actions), else the comm fails with -EREMOTEIO. */
int gdx_rail_failed(struct gdx_comm *c, int rail, const char *why);
/* Whether a failed completion with this status takes its rail out (the path
 * failed) rather than the comm (a local or protocol error). */
bool gdx_failover_status(enum ibv_wc_status status);
/* A poll of a comm with two or more rails that took completions, or found
 * gdx_failover_due: the peer's notes, the async events another thread saw,
 * and every GDX_PORT_CHECK_POLLS polls (every poll while a rail is not up)
 * the rails' timers and the ports' state. Returns GDX_FO_* actions. */
int gdx_failover_poll(struct gdx_comm *c);

#define GDX_PORT_CHECK_POLLS 64

/* Whether a poll that took no completion runs gdx_failover_poll: on every
 * poll while a rail is not up (draining, re-sending, restoring, probing all
 * move by polls), at once when an async event put a rail's QP in error, and
 * otherwise every GDX_PORT_CHECK_POLLS-th poll, which is when a healthy
 * comm reads the peer's notes (writes the protocol takes as late: a note is
 * written again every 500 ms, counts are waited for 10 s). Our own failures
 * need no sweep to be seen: they arrive as failed completions. */
static inline bool gdx_failover_due(struct gdx_comm *c)
{
	return c->ch.failover &&
	       (c->ch.nlive != c->ch.nrails || ++c->fo_polls >= GDX_PORT_CHECK_POLLS ||
		__atomic_load_n(&c->ch.async_failed, __ATOMIC_RELAXED));
}
/* A probe on a PROBING rail completed (ok: delivered). */
void gdx_failover_probed(struct gdx_comm *c, int rail, bool ok);
/* The rail the comm's control writes (clear-to-sends, notes) go on: the
 * first that is up, -1 when none. */
int gdx_failover_ctrl_rail(const struct gdx_comm *c);

const char *gdx_rail_state_name(enum gdx_rail_state s);

#endif
