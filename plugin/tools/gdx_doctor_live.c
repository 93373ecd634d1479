/* SPDX-License-Identifier: MIT */
/* The live counters of the processes on this node, for top and hang. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gdx/gdx_time.h>

#include "gdx_doctor.h"

/* A slot changed while it was copied: a few more tries, then it is left out
 * of this snapshot (it is being claimed or released). */
#define LIVE_COPY_TRIES 4

int live_snap_take(const char *dir, struct live_snap *s)
{
	struct gdx_live_view *v;
	int n;

	memset(s, 0, sizeof(*s));
	n = gdx_live_scan(dir, &v, &s->skipped);
	if (n < 0) {
		fprintf(stderr, "gdx-doctor: cannot read %s: %s\n", dir ? dir : gdx_live_dir(),
			strerror(-n));
		return DOCTOR_NO_INPUT;
	}
	s->now_ms = gdx_now_ms();
	s->procs = calloc((size_t)n + 1, sizeof(*s->procs));
	if (!s->procs) {
		gdx_live_unscan(v, n);
		return DOCTOR_ERROR;
	}
	for (int i = 0; i < n; i++) {
		struct live_proc *p = &s->procs[s->nprocs];

		p->pid = v[i].hdr.pid;
		p->stopped = v[i].stopped;
		p->hdr = v[i].hdr;
		p->hdr.cmd[sizeof(p->hdr.cmd) - 1] = '\0';
		p->hdr.version[sizeof(p->hdr.version) - 1] = '\0';
		p->hdr.host[sizeof(p->hdr.host) - 1] = '\0';
		p->hdr.job[sizeof(p->hdr.job) - 1] = '\0';
		p->hdr.rank_var[sizeof(p->hdr.rank_var) - 1] = '\0';
		p->comms = calloc(GDX_LIVE_COMMS, sizeof(*p->comms));
		if (!p->comms)
			break;
		for (int k = 0; k < GDX_LIVE_COMMS; k++) {
			struct live_comm *c = &p->comms[p->ncomms];

			for (int t = 0; t < LIVE_COPY_TRIES; t++) {
				if (!gdx_live_copy(&v[i], k, &c->c))
					continue;
				c->slot = k;
				c->c.dev[sizeof(c->c.dev) - 1] = '\0';
				c->c.addr[sizeof(c->c.addr) - 1] = '\0';
				c->c.peer[sizeof(c->c.peer) - 1] = '\0';
				c->c.peer_dev[sizeof(c->c.peer_dev) - 1] = '\0';
				if (c->c.nrails > GDX_LIVE_RAILS)
					c->c.nrails = GDX_LIVE_RAILS;
				for (int r = 0; r < GDX_LIVE_RAILS; r++)
					c->c.rails[r].ibdev[sizeof(c->c.rails[r].ibdev) - 1] = '\0';
				p->ncomms++;
				break;
			}
		}
		s->nprocs++;
	}
	gdx_live_unscan(v, n);
	return DOCTOR_OK;
}

void live_snap_free(struct live_snap *s)
{
	for (int i = 0; i < s->nprocs; i++)
		free(s->procs[i].comms);
	free(s->procs);
	memset(s, 0, sizeof(*s));
}

const struct live_comm *live_snap_find(const struct live_snap *s, int pid,
				       const struct live_comm *c)
{
	for (int i = 0; i < s->nprocs; i++) {
		if (s->procs[i].pid != pid)
			continue;
		for (int k = 0; k < s->procs[i].ncomms; k++) {
			const struct live_comm *o = &s->procs[i].comms[k];

			if (o->slot == c->slot && o->c.gen == c->c.gen)
				return o;
		}
	}
	return NULL;
}

uint64_t live_comm_stalled_ms(const struct live_snap *s, const struct gdx_live_comm *c)
{
	/* progress since the last tick: it is moving (its next tick will say) */
	if (c->msgs != c->tick_msgs || c->wait == GDX_LIVE_IDLE)
		return 0;
	return s->now_ms > c->stall_ms ? s->now_ms - c->stall_ms : 0;
}

uint64_t live_add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

void live_lat_add(uint64_t *lat, uint64_t *count, uint64_t *sum, const struct gdx_live_rail *r)
{
	/* a file's owner writes what it likes: no sum wraps round */
	for (int b = 0; b < GDX_LIVE_LAT_BUCKETS; b++)
		lat[b] = live_add_sat(lat[b], r->lat[b]);
	*count = live_add_sat(*count, r->lat_count);
	*sum = live_add_sat(*sum, r->lat_sum);
}

double live_lat_quantile_us(const uint64_t *lat, double q, uint64_t hz)
{
	uint64_t total = 0, below = 0;
	double rank;

	/* the buckets, not lat_count: a reader may copy them between two stores */
	for (int b = 0; b < GDX_LIVE_LAT_BUCKETS; b++)
		total = live_add_sat(total, lat[b]);
	if (!total || !hz)
		return -1;
	rank = q * (double)total;
	for (int b = 0; b < GDX_LIVE_LAT_BUCKETS; b++) {
		double lo = b ? (double)(1ULL << b) : 0, hi = (double)(1ULL << (b + 1));

		if (!lat[b] || (double)below + (double)lat[b] < rank) {
			below = live_add_sat(below, lat[b]);
			continue;
		}
		/* spread evenly over [lo, hi): as good as a log2 bucket allows */
		return (lo + (hi - lo) * (rank - (double)below) / (double)lat[b]) / (double)hz *
		       1e6;
	}
	return (double)(1ULL << GDX_LIVE_LAT_BUCKETS) / (double)hz * 1e6;
}

void live_json_ends(FILE *f, const struct gdx_live_comm *c)
{
	fprintf(f, "\"device\": ");
	json_str(f, c->dev);
	fprintf(f, ", \"address\": ");
	json_str(f, c->addr);
	fprintf(f, ", \"peer\": ");
	json_str(f, c->peer);
	fprintf(f, ", \"peer_device\": ");
	json_str(f, c->peer_dev);
}
