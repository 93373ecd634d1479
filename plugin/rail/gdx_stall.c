/* SPDX-License-Identifier: MIT */
/* A QP that stops completing, told once per episode (gdx_stall.h). */
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
			q->stall_warned = true;
			if (r < GDX_LIVE_RAILS)
				c->live->rails[r].stalls++;
			GDX_WARN(
				"%s: QP 0x%x on %s port %d (rail %d) to %s (%s) has had no completion "
				"for %llu ms with %u work request(s) out (NCCL_GDX_STALL_MS=%d): "
				"the path is congested or broken, or the peer's NIC does not answer; "
				"ibv_devinfo -d %s and the switch's counters for that port say which",
				c->name, q->qp->qp_num, rail->dev->ibdev, rail->dev->ib_port, r,
				c->peer, GDX_LOG_QUOTED(c->peer_dev),
				(unsigned long long)(now - q->stall_since_ms),
				q->wr_posted - q->wr_done, gdx_params.stall_ms, rail->dev->ibdev);
		}
	}
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
