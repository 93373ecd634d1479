/* SPDX-License-Identifier: MIT */
/* A rail taken out of a channel, and the liveness rule (gdx_chan_out.h). */
#include <stdio.h>

#include "rail/gdx_chan_out.h"
#include "sys/gdx_param.h"
#include "rail/gdx_stripe.h"

void gdx_chan_take_out(struct gdx_chan *ch, int r, enum gdx_rail_state state, uint64_t now)
{
	gdx_rail_freeze(&ch->rails[r]);
	ch->run[r].state = state;
	ch->run[r].since_ms = now;
	gdx_chan_count_live(ch);
	gdx_stripe_reset(ch, r);
}

uint64_t gdx_chan_retry_budget_ms(void)
{
	return (uint64_t)(4.096e-3 * (double)(1ULL << gdx_params.timeout) *
			  (gdx_params.retry_cnt + 1)) +
	       1;
}

bool gdx_chan_overdue(struct gdx_dev *dev, uint64_t waited_ms, uint64_t now, char *what, size_t len)
{
	uint64_t budget = gdx_chan_retry_budget_ms();
	uint64_t down = __atomic_load_n(&dev->port_down_ms, __ATOMIC_RELAXED);

	if (down && now > down && now - down > budget && waited_ms > budget) {
		snprintf(what, len, "its port has been down %llu ms, longer than its retries last",
			 (unsigned long long)(now - down));
		return true;
	}
	if (waited_ms > 4 * budget) {
		snprintf(what, len, "no completion for %llu ms, four times what its retries last",
			 (unsigned long long)waited_ms);
		return true;
	}
	return false;
}
