/* SPDX-License-Identifier: MIT */
#include <string.h>

#include "sys/gdx_param.h"
#include "rail/gdx_stripe.h"
#include "sys/gdx_time.h"

/* A rail's rate: the bytes its completions show delivered per ms it had
 * bytes in flight, so that a rail idle for want of work does not look slow.
 * Completions show bytes in lumps (all since the last signaled one), so it
 * is measured over at least this much time the rail was busy (long enough
 * to span a few pieces of a large message: shorter windows saw the shaper's
 * bursts, and their noise became split error); each window moves it a
 * quarter of the way to what the window saw. A moving rate, not an average
 * since the comm began: a rail that degrades or recovers mid-job has its
 * share follow over a few windows, and no one window swings it. */
#define GDX_RATE_WINDOW_MS 64

void gdx_stripe_init(struct gdx_chan *c)
{
	for (int r = 0; r < c->nrails; r++) {
		struct gdx_rail_run *run = &c->run[r];

		memset(&run->rate, 0, sizeof(*run) - offsetof(struct gdx_rail_run, rate));
		/* Mbps to bytes per ms; rxe and some virtual ports report none */
		run->rate = c->rails[r].dev->speed_mbps > 0 ? c->rails[r].dev->speed_mbps * 125.0
							    : 125000.0;
		run->speed_mbps = c->rails[r].dev->speed_mbps;
	}
}

/* A rail taken out, or back: its completions count only while it is up
 * (gdx_cq.c), so bytes left in flight would never come off and would keep
 * it looking busy; what of them the receiver did not take goes again on
 * other rails, counted there. Its rate stays, for gdx_stripe_back. */
void gdx_stripe_reset(struct gdx_chan *c, int rail)
{
	struct gdx_rail_run *run = &c->run[rail];
	double rate = run->rate;
	uint32_t samples = run->samples;

	memset(&run->rate, 0, sizeof(*run) - offsetof(struct gdx_rail_run, rate));
	run->rate = rate;
	run->samples = samples;
}

void gdx_stripe_back(struct gdx_chan *c, int rail)
{
	double sum = 0;
	int n = 0;

	gdx_stripe_reset(c, rail);
	for (int r = 0; r < c->nrails; r++)
		if (r != rail && gdx_chan_up(c, r)) {
			sum += c->run[r].rate;
			n++;
		}
	if (n && sum / n > c->run[rail].rate)
		c->run[rail].rate = sum / n;
}

void gdx_stripe_posted(struct gdx_chan *c, int rail, uint64_t bytes)
{
	struct gdx_rail_run *run = &c->run[rail];

	if (c->nrails == 1 || !bytes)
		return;
	if (run->inflight == 0)
		run->busy_since = gdx_now_ms();
	run->inflight += bytes;
}

void gdx_stripe_delivered(struct gdx_chan *c, int rail, uint64_t bytes)
{
	struct gdx_rail_run *run = &c->run[rail];
	uint64_t now, busy;

	if (c->nrails == 1 || !bytes)
		return;
	now = gdx_now_ms();
	run->win_bytes += bytes;
	run->inflight = run->inflight > bytes ? run->inflight - bytes : 0;
	busy = run->busy_ms + (now - run->busy_since);
	if (run->inflight == 0) {
		run->busy_ms = busy;
		run->busy_since = now;
	}
	if (busy >= GDX_RATE_WINDOW_MS) {
		double seen = (double)run->win_bytes / (double)busy;

		/* the port's speed was a guess; what it delivers is not */
		run->rate = run->samples++ ? 0.75 * run->rate + 0.25 * seen : seen;
		run->win_bytes = 0;
		run->busy_ms = 0;
		run->busy_since = now;
	}
}

/* The rails that carry data now: those up, less the standing-by ones while
 * a near rail is up (NCCL_GDX_STANDBY). */
static uint32_t gdx_stripe_carriers(const struct gdx_chan *c)
{
	uint32_t up = 0;

	for (int r = 0; r < c->nrails; r++)
		if (gdx_chan_up(c, r))
			up |= 1u << r;
	return up & ~c->standby ? up & ~c->standby : up;
}

int gdx_stripe_pick(const struct gdx_chan *c, uint64_t size, uint64_t seq)
{
	uint32_t carriers;
	int best = -1;
	double best_t = 0;

	if (c->nlive == c->nrails && c->nrails == 1)
		return 0;
	carriers = gdx_stripe_carriers(c);
	/* t: when the rail would have delivered its bytes in flight and these,
	 * at its rate (a fast rail busy with a large message can finish later
	 * than a slower idle one); from a rail that turns with seq, so that
	 * equal rails take turns */
	for (int k = 0; k < c->nrails; k++) {
		int r = (int)((seq + (uint64_t)k) % (uint64_t)c->nrails);
		const struct gdx_rail_run *run = &c->run[r];
		double t;

		if (!(carriers & (1u << r)))
			continue;
		t = (double)(run->inflight + size) / (run->rate > 0 ? run->rate : 1);
		if (best < 0 || t < best_t) {
			best = r;
			best_t = t;
		}
	}
	return best;
}

void gdx_stripe_shares(uint64_t size, const double *weight, int n, uint64_t *share)
{
	double total = 0;
	uint64_t left = size;

	for (int i = 0; i < n; i++)
		total += weight[i] > 0 ? weight[i] : 0;
	for (int i = 0; i < n; i++) {
		uint64_t s;

		if (i == n - 1 || total <= 0) {
			s = i == n - 1 ? left : 0;
		} else {
			double w = weight[i] > 0 ? weight[i] : 0;

			s = (uint64_t)((double)size * (w / total));
			s = (s + GDX_STRIPE_ALIGN - 1) / GDX_STRIPE_ALIGN * GDX_STRIPE_ALIGN;
			if (s > left)
				s = left;
		}
		share[i] = s;
		left -= s;
	}
	if (total <= 0 && n > 0) {
		/* no weights: even shares */
		uint64_t even = ((size + (uint64_t)n - 1) / (uint64_t)n + GDX_STRIPE_ALIGN - 1) /
				GDX_STRIPE_ALIGN * GDX_STRIPE_ALIGN;

		left = size;
		for (int i = 0; i < n; i++) {
			share[i] = left < even || i == n - 1 ? left : even;
			left -= share[i];
		}
	}
}

/* The pieces of len bytes at off on one rail: one QP in turn, or all. */
static int gdx_stripe_rail(const struct gdx_chan *c, int rail, uint64_t off, uint64_t len,
			   uint64_t seq, struct gdx_piece *out)
{
	int nq = c->rails[rail].nqps;

	if (!c->split || nq == 1 || len < (uint64_t)nq * GDX_STRIPE_ALIGN) {
		out[0] = (struct gdx_piece){.rail = (uint8_t)rail,
					    .q = (uint8_t)(nq > 1 ? seq % (uint64_t)nq : 0),
					    .off = off,
					    .len = len};
		return 1;
	}
	{
		uint64_t even = ((len + (uint64_t)nq - 1) / (uint64_t)nq + GDX_STRIPE_ALIGN - 1) /
				GDX_STRIPE_ALIGN * GDX_STRIPE_ALIGN,
			 done = 0;
		int n = 0;

		for (int q = 0; q < nq && done < len; q++) {
			uint64_t l = len - done < even ? len - done : even;

			out[n++] = (struct gdx_piece){.rail = (uint8_t)rail,
						      .q = (uint8_t)q,
						      .off = off + done,
						      .len = l};
			done += l;
		}
		return n;
	}
}

int gdx_stripe_plan(struct gdx_chan *c, uint64_t size, uint64_t seq, bool one_rail,
		    struct gdx_piece *out)
{
	int live[GDX_MAX_RAILS], nlive = 0, n = 0;
	double weight[GDX_MAX_RAILS] = {0};
	uint64_t share[GDX_MAX_RAILS], off = 0;
	uint32_t carriers = c->standby ? gdx_stripe_carriers(c) : 0;

	/* Small messages go whole, to the rail that would deliver them first:
	 * split, each would take a WR and an immediate per rail, and its
	 * receive would complete only with its slowest piece. So do messages
	 * when one rail carries (the others standing by). */
	if (one_rail || c->nlive <= 1 || size < (uint64_t)gdx_params.stripe_min ||
	    (carriers && !(carriers & (carriers - 1)))) {
		int r = gdx_stripe_pick(c, size, seq);

		return r < 0 ? 0 : gdx_stripe_rail(c, r, 0, size, seq, out);
	}
	for (int r = 0; r < c->nrails; r++) {
		if (!gdx_chan_up(c, r) || (carriers && !(carriers & (1u << r))))
			continue;
		live[nlive] = r;
		weight[nlive++] = gdx_params.stripe_weighted ? c->run[r].rate : 1.0;
	}
	/* A rail given small pieces measures their latency more than its speed,
	 * which would keep its share small: none gets less than a quarter of
	 * the best one's weight, so each goes on being measured on real work,
	 * and a rail that recovers is seen to. */
	for (int i = 0, best = 0; i < nlive; i++) {
		best = weight[i] > weight[best] ? i : best;
		if (i == nlive - 1)
			for (int k = 0; k < nlive; k++)
				weight[k] =
					weight[k] < weight[best] / 4 ? weight[best] / 4 : weight[k];
	}
	gdx_stripe_shares(size, weight, nlive, share);
	for (int i = 0; i < nlive; i++) {
		if (!share[i])
			continue;
		n += gdx_stripe_rail(c, live[i], off, share[i], seq, out + n);
		off += share[i];
	}
	return n;
}
