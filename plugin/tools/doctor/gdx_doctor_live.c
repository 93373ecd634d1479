/* SPDX-License-Identifier: MIT */
/* The live counters of the processes on this node, for top and hang. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/gdx_escape.h"
#include "sys/gdx_time.h"

#include "tools/doctor/gdx_doctor.h"

static int live_cmp_pid(const void *a, const void *b, void *ctx)
{
	const struct live_snap *s = ctx;
	int x = s->procs[*(const int *)a].pid, y = s->procs[*(const int *)b].pid;

	return (x > y) - (x < y);
}

int live_snap_take(const char *dir, struct live_snap *s)
{
	int ret;

	memset(s, 0, sizeof(*s));
	ret = gdx_live_scan(dir, &s->scan);
	/* the directory not made yet (NCCL_GDX_LIVE_DIR, before the first job
	 * with it): no process has the plugin loaded there, which is no error
	 * (a gate before the first job runs); said in the notes */
	if (ret == -ENOENT) {
		s->dir_missing = true;
		ret = 0;
	}
	if (ret) {
		fprintf(stderr, "gdx-doctor: cannot read the live files in ");
		gdx_esc_text(stderr, dir ? dir : gdx_live_dir());
		fprintf(stderr, ": %s%s\n", strerror(-ret),
			ret == -EMFILE || ret == -ENFILE ? " (a file is read and closed at once: "
							   "raise ulimit -n)"
							 : "");
		/* out of descriptors or memory is this program's failure, not a
		 * file left out: said, never skipped */
		return ret == -EMFILE || ret == -ENFILE || ret == -ENOMEM ? DOCTOR_ERROR
									  : DOCTOR_NO_INPUT;
	}
	s->now_ms = gdx_now_ms();
	s->skipped = s->scan.skipped;
	s->procs = calloc((size_t)s->scan.n + 1, sizeof(*s->procs));
	s->by_pid = calloc((size_t)s->scan.n + 1, sizeof(*s->by_pid));
	if (!s->procs || !s->by_pid) {
		live_snap_free(s);
		return DOCTOR_ERROR;
	}
	for (int i = 0; i < s->scan.n; i++) {
		const struct gdx_live_view *v = &s->scan.v[i];
		struct live_proc *p = &s->procs[s->nprocs++];

		p->pid = v->hdr.pid;
		p->uid = v->uid;
		p->stopped = v->stopped;
		p->hdr = v->hdr;
		p->ncomms = v->nslots;
		p->comms = v->slots;
		p->comms_cut = v->slots_cut;
		p->nnics = v->nnics;
		p->nics = v->nics;
		s->by_pid[i] = i;
	}
	if (s->nprocs)
		qsort_r(s->by_pid, (size_t)s->nprocs, sizeof(int), live_cmp_pid, s);
	return DOCTOR_OK;
}

void live_snap_free(struct live_snap *s)
{
	gdx_live_scan_free(&s->scan);
	free(s->procs);
	free(s->by_pid);
	memset(s, 0, sizeof(*s));
}

const struct gdx_live_slot *live_snap_find(const struct live_snap *s, int pid,
					   const struct gdx_live_slot *c)
{
	int lo = 0, hi = s->nprocs - 1;

	/* processes by pid, a process's slots by slot: found in log time */
	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;
		const struct live_proc *p = &s->procs[s->by_pid[mid]];

		if (p->pid < pid) {
			lo = mid + 1;
		} else if (p->pid > pid) {
			hi = mid - 1;
		} else {
			int l = 0, h = p->ncomms - 1;

			while (l <= h) {
				int m = l + (h - l) / 2;
				const struct gdx_live_slot *o = &p->comms[m];

				if (o->slot == c->slot)
					return o->c.gen == c->c.gen ? o : NULL;
				if (o->slot < c->slot)
					l = m + 1;
				else
					h = m - 1;
			}
			return NULL;
		}
	}
	return NULL;
}

void live_snap_notes_text(FILE *f, const struct live_snap *s, const char *dir)
{
	const struct gdx_live_scan *sc = &s->scan;

	if (s->dir_missing) {
		fputs("note: ", f);
		gdx_esc_text(f, dir ? dir : gdx_live_dir());
		fputs(" does not exist yet: no process has loaded the plugin with it\n", f);
	}
	for (int i = 0; i < sc->nusers; i++) {
		const struct gdx_live_user *u = &sc->users[i];

		if (u->foreign) {
			fprintf(f, "note: ");
			gdx_esc_text(f, dir ? dir : gdx_live_dir());
			fprintf(f,
				"/" GDX_LIVE_USER_DIR
				"%u is not uid %u's alone (owner uid %u, mode "
				"%04o): none of its files is read, and the plugin of uid %u makes no "
				"live file while it is there (remove it)\n",
				u->uid, u->uid, u->owner, u->mode, u->uid);
		}
		if (u->files_left)
			fprintf(f,
				"note: uid %u has %d live file(s) past the %d read a user: left "
				"out\n",
				u->uid, u->files_left, GDX_LIVE_USER_FILES);
		if (u->procs_cut)
			fprintf(f,
				"note: uid %u: %d comms read, the most a user; %d process(es) shown "
				"without all of theirs\n",
				u->uid, GDX_LIVE_USER_SLOTS, u->procs_cut);
	}
	if (sc->more_users)
		fprintf(f, "note: and %d more user(s) with notes like these\n", sc->more_users);
}

void live_snap_notes_json(FILE *f, const struct live_snap *s)
{
	const struct gdx_live_scan *sc = &s->scan;

	fprintf(f, "\"live_notes\": {\"files_per_user\": %d, \"comms_per_user\": %d, \"users\": [",
		GDX_LIVE_USER_FILES, GDX_LIVE_USER_SLOTS);
	for (int i = 0; i < sc->nusers; i++) {
		const struct gdx_live_user *u = &sc->users[i];

		fprintf(f, "%s{\"uid\": %u, \"foreign\": %s, ", i ? ", " : "", u->uid,
			u->foreign ? "true" : "false");
		if (u->foreign)
			fprintf(f, "\"owner\": %u, \"mode\": \"%04o\", ", u->owner, u->mode);
		fprintf(f, "\"files_left\": %d, \"processes_cut\": %d}", u->files_left,
			u->procs_cut);
	}
	fprintf(f, "], \"more_users\": %d, \"dir_missing\": %s}", sc->more_users,
		s->dir_missing ? "true" : "false");
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
