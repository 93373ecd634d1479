/* SPDX-License-Identifier: MIT */
/* A QP that stops completing, told once per episode (gdx_stall.h). */
#include <stdio.h>

#include "rail/gdx_chan.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "rail/gdx_stall.h"
#include "sys/gdx_time.h"

void gdx_stall_check(struct gdx_chan *c, uint64_t now)
{
	uint64_t limit = (uint64_t)gdx_params.stall_ms;

	if (!limit)
		return;
	for (int r = 0; r < c->nrails; r++) {
		struct gdx_rail *rail = &c->rails[r];

		/* a rail failover took out has said so, and its QPs are reset */
		if (c->run[r].state != GDX_RAIL_UP)
			continue;
		for (int i = 0; i < c->qps_per_rail; i++) {
			struct gdx_qp *q = &rail->qps[i];

			/* the WR count at the last signaled WR: those since are not */
			uint32_t signaled = q->wr_posted - q->unsignaled;

			if ((int32_t)(signaled - q->wr_done) <= 0) {
				q->stall_since_ms = 0; /* nothing a completion would answer */
				continue;
			}
			/* The episode starts at the first check that sees the WR out
			 * and no completion since: a comm nobody polled (idle) was
			 * not checked, and its old stamp says nothing. */
			if (!q->stall_since_ms || q->wr_done != q->stall_done) {
				q->stall_done = q->wr_done;
				q->stall_since_ms = now;
				continue;
			}
			if (q->stall_warned || now - q->stall_since_ms < limit)
				continue;
			gdx_stall_tell(c, r, i, q->wr_posted - q->wr_done, now - q->stall_since_ms);
		}
	}
}

void gdx_stall_tell(struct gdx_chan *c, int r, int i, uint32_t out, uint64_t waited_ms)
{
	struct gdx_rail *rail = &c->rails[r];
	struct gdx_qp *q = &rail->qps[i];
	char peer_dev[GDX_LOG_QUOTE_MAX + 3] = "";

	if (q->stall_warned)
		return;
	if (*c->peer_dev) /* one-sided RMA knows the peer by rank only */
		snprintf(peer_dev, sizeof(peer_dev), " (%s)", GDX_LOG_QUOTED(c->peer_dev));
	q->stall_warned = true;
	if (!q->stall_since_ms)
		q->stall_since_ms = gdx_now_ms() - waited_ms;
	if (r < GDX_LIVE_RAILS)
		c->live->rails[r].stalls++;
	GDX_WARN("%s: QP 0x%x on %s port %d (rail %d) to %s%s has had no completion for %llu "
		 "ms with %u work request(s) out (NCCL_GDX_STALL_MS=%d): the path is congested "
		 "or broken, or the peer's NIC does not answer; ibv_devinfo -d %s and the "
		 "switch's counters for that port say which",
		 c->name, q->qp->qp_num, rail->dev->ibdev, rail->dev->ib_port, r, c->peer, peer_dev,
		 (unsigned long long)waited_ms, out, gdx_params.stall_ms, rail->dev->ibdev);
}

void gdx_stall_drained(struct gdx_chan *c, int r, int i)
{
	struct gdx_rail *rail = &c->rails[r];
	struct gdx_qp *q = &rail->qps[i];

	GDX_INFO(NCCL_NET,
		 "%s: QP 0x%x on %s port %d (rail %d) to %s completes again, %llu ms "
		 "after its stall began",
		 c->name, q->qp->qp_num, rail->dev->ibdev, rail->dev->ib_port, r, c->peer,
		 (unsigned long long)(gdx_now_ms() - q->stall_since_ms));
	q->stall_warned = false;
	q->stall_since_ms = 0;
}
