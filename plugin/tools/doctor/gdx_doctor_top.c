/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor top: what every process on this node moves through the plugin
 * right now, per process and rail, from their live counters (gdx_live.h):
 * two snapshots an interval apart give the rates; the counters themselves
 * are totals since each comm opened (and, per process, of the comms that
 * closed since).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data/gdx_failover.h"

#include "tools/doctor/gdx_doctor.h"

#define TOP_SPARK 24 /* samples a sparkline shows */
/* Distinct NIC ports a process shows at most: its file names them, and one
 * user's made-up names must not crowd out other users' processes. */
#define TOP_RAILS_PER_PROC 32
/* Lines of latency by peer the text shows per process. */
#define TOP_PEERS_SHOWN 8
/* The Prometheus histogram's bounds: 2^0 to 2^40 ns (about 18 minutes). */
#define TOP_PROM_LE 41

struct top_opts {
	const char *dir;
	double interval_s;
	bool once, json, prometheus;
	long count; /* refreshes before exiting; 0: until interrupted */
};

/* One row: a process's traffic on one NIC port, over every comm it has there. */
struct top_rail {
	int pid;
	char ibdev[32];
	uint32_t port;
	uint32_t state;	    /* the worst of its comms' rails: up unless one is not */
	uint64_t tx_bytes;  /* send comms: posted on it, total */
	double tx_mbps;	    /* over the last interval */
	uint64_t rx_pieces; /* receive comms: immediates taken on it, total */
	/* one-sided RMA's collective comms: bytes put and got through it, and
	 * the put rate over the last interval; rma: one of them is on it */
	uint64_t rma_put, rma_got;
	double rma_mbps;
	bool rma;
	/* send comms: their signaled sends' latencies, merged (gdx_live_rail) */
	uint64_t lat[GDX_LIVE_LAT_BUCKETS], lat_count, lat_sum, stalls;
	uint64_t stamp_hz;
	double spark[TOP_SPARK]; /* tx Mb/s, oldest first */
	int nspark;
	bool seen;
};

/* One process's totals. */
struct top_proc {
	uint64_t msgs, bytes_gpu, bytes_host;
	double direct_mbps, staged_mbps, msgs_per_s;
	uint32_t outstanding, comms;
	uint64_t oldest_ms;
	const char *oldest_wait;
	const struct gdx_live_slot *oldest;
};

static int top_on_opt(void *ctx, int key, const char *arg)
{
	struct top_opts *o = ctx;
	char *end;

	switch (key) {
	case 'd': o->dir = arg; break;
	case 'o': o->once = true; break;
	case 'j': o->json = true; break;
	case 'p': o->prometheus = true; break;
	case 'i':
		errno = 0;
		o->interval_s = strtod(arg, &end);
		if (errno || end == arg || *end || !(o->interval_s >= 0.05) ||
		    o->interval_s > 3600) {
			fprintf(stderr,
				"gdx-doctor top: --interval '%s' is not a number of seconds "
				"from 0.05 to 3600\n",
				arg);
			return DOCTOR_USAGE;
		}
		break;
	case 'n':
		errno = 0;
		o->count = strtol(arg, &end, 10);
		if (errno || end == arg || *end || o->count < 1) {
			fprintf(stderr, "gdx-doctor top: --count '%s' is not a positive integer\n",
				arg);
			return DOCTOR_USAGE;
		}
		break;
	}
	return DOCTOR_OK;
}

/* The rows of one process, at most TOP_RAILS_PER_PROC: a process's NIC
 * ports are found among its own rows alone, so that the rows are made in
 * time linear in the comms' rails, whatever the number of processes. */
struct top_group {
	int pid;
	struct top_rail *v;
	int n, cap;
};

/* The groups of the last refresh, one per process of its snapshot, in its
 * order (g[i] is procs[i]'s). */
struct top_rows {
	struct top_group *g;
	int n;
};

static struct top_rail *top_rail_row(struct top_group *g, const struct gdx_live_rail *r)
{
	for (int i = 0; i < g->n; i++)
		if (g->v[i].port == r->port && !strcmp(g->v[i].ibdev, r->ibdev))
			return &g->v[i];
	if (g->n == TOP_RAILS_PER_PROC)
		return NULL;
	if (g->n == g->cap) {
		int cap = g->cap ? 2 * g->cap : 4;
		struct top_rail *v = realloc(g->v, (size_t)cap * sizeof(*v));

		if (!v)
			return NULL;
		g->v = v;
		g->cap = cap;
	}
	memset(&g->v[g->n], 0, sizeof(g->v[0]));
	g->v[g->n].pid = g->pid;
	g->v[g->n].port = r->port;
	snprintf(g->v[g->n].ibdev, sizeof(g->v[g->n].ibdev), "%s", r->ibdev);
	return &g->v[g->n++];
}

static int top_cmp_group(const void *a, const void *b)
{
	const struct top_group *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* The groups for snapshot cur, in its order: the last refresh's of the same
 * process (its sparklines go on), else new ones; those of processes gone
 * freed. -ENOMEM. */
static int top_groups(struct top_rows *t, const struct live_snap *cur)
{
	struct top_group *ng = calloc((size_t)cur->nprocs + 1, sizeof(*ng));

	if (!ng)
		return -ENOMEM;
	if (t->n)
		qsort(t->g, (size_t)t->n, sizeof(*t->g), top_cmp_group);
	for (int i = 0; i < cur->nprocs; i++) {
		struct top_group key = {.pid = cur->procs[i].pid};
		struct top_group *old =
			t->n ? bsearch(&key, t->g, (size_t)t->n, sizeof(*t->g), top_cmp_group)
			     : NULL;

		if (old && old->pid == key.pid) {
			ng[i] = *old;
			old->v = NULL;		  /* moved */
			old->pid = -old->pid - 1; /* taken: a second file of it finds none */
		} else {
			ng[i].pid = key.pid;
		}
	}
	for (int i = 0; i < t->n; i++)
		free(t->g[i].v);
	free(t->g);
	t->g = ng;
	t->n = cur->nprocs;
	return 0;
}

static void top_rows_free(struct top_rows *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->g[i].v);
	free(t->g);
}

static double top_mbps(uint64_t now, uint64_t before, double secs)
{
	return now > before && secs > 0 ? (double)(now - before) * 8 / 1e6 / secs : 0;
}

/* The rows of snapshot cur, with rates against prev (NULL: none yet), in
 * one pass over its comms' rails. The sparklines carry over from the rows
 * of the last refresh. -ENOMEM. */
static int top_rows(const struct live_snap *cur, const struct live_snap *prev, struct top_rows *t,
		    struct top_proc *procs)
{
	double secs = prev ? (double)(cur->now_ms - prev->now_ms) / 1e3 : 0;

	if (top_groups(t, cur))
		return -ENOMEM;
	for (int i = 0; i < cur->nprocs; i++) {
		const struct live_proc *p = &cur->procs[i];
		struct top_proc *tp = &procs[i];
		struct top_group *g = &t->g[i];
		uint64_t gpu_before = 0, host_before = 0, msgs_before = 0;

		for (int k = 0; k < g->n; k++) {
			struct top_rail *row = &g->v[k];

			row->seen = false;
			row->tx_bytes = row->rx_pieces = 0;
			row->rma_put = row->rma_got = 0;
			row->rma_mbps = 0;
			row->rma = false;
			memset(row->lat, 0, sizeof(row->lat));
			row->lat_count = row->lat_sum = row->stalls = 0;
			row->tx_mbps = 0;
			row->state = 0;
		}
		memset(tp, 0, sizeof(*tp));
		tp->msgs = p->hdr.closed_msgs;
		tp->bytes_gpu = p->hdr.closed_bytes_gpu;
		tp->bytes_host = p->hdr.closed_bytes_host;
		tp->comms = (uint32_t)p->ncomms;
		for (int k = 0; k < p->ncomms; k++) {
			const struct gdx_live_slot *lc = &p->comms[k];
			const struct gdx_live_slot *old =
				prev ? live_snap_find(prev, p->pid, lc) : NULL;
			uint64_t stalled = live_comm_stalled_ms(cur, &lc->c);

			tp->msgs += lc->c.msgs;
			tp->bytes_gpu += lc->c.bytes_gpu;
			tp->bytes_host += lc->c.bytes_host;
			tp->outstanding += lc->c.outstanding;
			if (old) {
				gpu_before += old->c.bytes_gpu;
				host_before += old->c.bytes_host;
				msgs_before += old->c.msgs;
			} /* else opened since: all it moved is new */
			if (stalled > tp->oldest_ms || (!tp->oldest && lc->c.outstanding)) {
				tp->oldest_ms = stalled;
				tp->oldest = lc;
				tp->oldest_wait = gdx_live_wait_name(lc->c.wait);
			}
			for (uint32_t r = 0; r < lc->c.nrails; r++) {
				const struct gdx_live_rail *lr = &lc->c.rails[r];
				struct top_rail *row = top_rail_row(g, lr);

				if (!row)
					continue;
				row->seen = true;
				if (lc->c.role == GDX_LIVE_RMA) {
					/* its rails count bytes put and got (layout) */
					row->rma = true;
					row->rma_put += lr->tx_bytes;
					row->rma_got += lr->rx_pieces;
					if (old || prev)
						row->rma_mbps += top_mbps(
							lr->tx_bytes,
							old ? old->c.rails[r].tx_bytes : 0, secs);
					continue;
				}
				row->tx_bytes += lr->tx_bytes;
				row->rx_pieces += lr->rx_pieces;
				live_lat_add(row->lat, &row->lat_count, &row->lat_sum, lr);
				row->stalls = live_add_sat(row->stalls, lr->stalls);
				row->stamp_hz = p->hdr.stamp_hz;
				if (lr->state > row->state)
					row->state = lr->state;
				if (old)
					row->tx_mbps += top_mbps(lr->tx_bytes,
								 old->c.rails[r].tx_bytes, secs);
				else if (prev)
					row->tx_mbps += top_mbps(lr->tx_bytes, 0, secs);
			}
		}
		if (prev) {
			uint64_t gpu_now = tp->bytes_gpu - p->hdr.closed_bytes_gpu;
			uint64_t host_now = tp->bytes_host - p->hdr.closed_bytes_host;

			tp->direct_mbps = top_mbps(gpu_now, gpu_before, secs);
			tp->staged_mbps = top_mbps(host_now, host_before, secs);
			tp->msgs_per_s =
				secs > 0 && tp->msgs - p->hdr.closed_msgs > msgs_before
					? (double)(tp->msgs - p->hdr.closed_msgs - msgs_before) /
						  secs
					: 0;
		}
		for (int k = 0; k < g->n; k++) {
			struct top_rail *row = &g->v[k];

			if (!row->seen) { /* the comms on it gone */
				g->v[k--] = g->v[--g->n];
				continue;
			}
			if (!prev)
				continue;
			if (row->nspark == TOP_SPARK) {
				memmove(row->spark, row->spark + 1,
					(TOP_SPARK - 1) * sizeof(row->spark[0]));
				row->nspark--;
			}
			row->spark[row->nspark++] = row->tx_mbps;
		}
	}
	return 0;
}

/* A rail's recent rates as block characters, scaled to its own peak. */
static void top_spark(const struct top_rail *row, char *out, size_t len)
{
	static const char *const blocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
	double peak = 0;
	size_t off = 0;

	out[0] = '\0';
	for (int i = 0; i < row->nspark; i++)
		peak = row->spark[i] > peak ? row->spark[i] : peak;
	for (int i = 0; i < row->nspark && off + 4 < len; i++) {
		int b = peak > 0 ? (int)(row->spark[i] / peak * 7 + 0.5) : 0;

		off += (size_t)snprintf(out + off, len - off, "%s",
					blocks[b < 0   ? 0
					       : b > 7 ? 7
						       : b]);
	}
}

/* "12.1/40.3/81.0 us", or "-" with no sample. */
static void top_lat_text(const uint64_t *lat, uint64_t hz, char *buf, size_t len)
{
	double q[3];

	for (int i = 0; i < 3; i++)
		q[i] = live_lat_quantile_us(lat, (const double[]){0.5, 0.99, 0.999}[i], hz);
	if (q[0] < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f/%.1f/%.1f us", q[0], q[1], q[2]);
}

/* Each send comm's rails with timed sends: the latency to that peer. */
static void top_peers_text(const struct live_proc *p)
{
	int shown = 0, more = 0;

	for (int k = 0; k < p->ncomms; k++) {
		const struct gdx_live_comm *c = &p->comms[k].c;

		for (uint32_t r = 0; r < c->nrails; r++) {
			char peer[GDX_ESCAPE_LEN(sizeof(c->peer))];
			char nic[GDX_ESCAPE_LEN(sizeof(c->rails[r].ibdev))], lat[64];

			if (!c->rails[r].lat_count)
				continue;
			if (shown == TOP_PEERS_SHOWN) {
				more++;
				continue;
			}
			if (!shown++)
				printf("  send latency by peer (p50/p99/p99.9, since the comm opened):\n");
			gdx_escape(GDX_ESCAPE_TEXT, c->peer, peer, sizeof(peer));
			gdx_escape(GDX_ESCAPE_TEXT, c->rails[r].ibdev, nic, sizeof(nic));
			top_lat_text(c->rails[r].lat, p->hdr.stamp_hz, lat, sizeof(lat));
			printf("    %-24s %-12s %10llu sends  %s%s\n", peer, nic,
			       (unsigned long long)c->rails[r].lat_count, lat,
			       c->rails[r].stalls ? "  (stalled before)" : "");
		}
	}
	if (more)
		printf("    ... and %d more (gdx-doctor top --json has them all)\n", more);
}

/* One-sided RMA: its NICs' bytes put and got, and what each collective
 * comm that waits waits for; nothing when the process has none. */
static void top_rma_text(const struct live_proc *p, const struct top_group *g)
{
	bool any = false;

	for (int k = 0; k < g->n; k++) {
		const struct top_rail *row = &g->v[k];
		char nic[GDX_ESCAPE_LEN(sizeof(row->ibdev))];

		if (!row->rma)
			continue;
		if (!any)
			printf("  one-sided RMA:\n  %-12s %4s %10s %14s %14s\n", "NIC", "port",
			       "put Mb/s", "bytes put", "bytes got");
		any = true;
		gdx_escape(GDX_ESCAPE_TEXT, row->ibdev, nic, sizeof(nic));
		printf("  %-12s %4u %10.1f %14llu %14llu\n", nic, row->port, row->rma_mbps,
		       (unsigned long long)row->rma_put, (unsigned long long)row->rma_got);
	}
	for (int k = 0; k < p->ncomms; k++) {
		const struct gdx_live_comm *c = &p->comms[k].c;
		char dev[GDX_ESCAPE_LEN(sizeof(c->dev))], group[GDX_ESCAPE_LEN(sizeof(c->peer))];
		char what[GDX_ESCAPE_LEN(sizeof(c->peer_dev))];

		if (c->role != GDX_LIVE_RMA || c->wait == GDX_LIVE_IDLE)
			continue;
		gdx_escape(GDX_ESCAPE_TEXT, c->dev, dev, sizeof(dev));
		gdx_escape(GDX_ESCAPE_TEXT, c->peer, group, sizeof(group));
		gdx_escape(GDX_ESCAPE_TEXT, c->peer_dev, what, sizeof(what));
		printf("  RMA %s on %s: %u request(s) out, %s%s%s\n", group, dev, c->outstanding,
		       gdx_live_wait_name(c->wait), what[0] ? ": " : "", what);
	}
}

static void top_text(const struct live_snap *s, const struct top_rows *t,
		     const struct top_proc *procs, const char *dir, double interval_s, bool tty)
{
	if (tty)
		fputs("\033[H\033[2J", stdout);
	printf("gdx-doctor top: %d process(es) with the plugin loaded, every %.1f s%s\n", s->nprocs,
	       interval_s,
	       s->skipped ? " (some live files left out: other layout, gone, or a process's second)"
			  : "");
	live_snap_notes_text(stdout, s, dir);
	for (int i = 0; i < s->nprocs; i++) {
		const struct live_proc *p = &s->procs[i];
		const struct top_proc *tp = &procs[i];

		char cmd[GDX_ESCAPE_LEN(sizeof(p->hdr.cmd))];
		char version[GDX_ESCAPE_LEN(sizeof(p->hdr.version))];

		/* what the file says reaches the terminal escaped */
		gdx_escape(GDX_ESCAPE_TEXT, p->hdr.cmd, cmd, sizeof(cmd));
		gdx_escape(GDX_ESCAPE_TEXT, p->hdr.version, version, sizeof(version));
		printf("\npid %d%s  %s  (plugin %s)%s\n", p->pid, p->stopped ? " (stopped)" : "",
		       cmd, version,
		       p->comms_cut ? "  (not all its comms read: its user's cap, note above)"
				    : "");
		printf("  %u comm(s), %u request(s) outstanding; %.0f msg/s; GPU-direct %.1f Mb/s, "
		       "through host memory %.1f Mb/s; totals %llu msgs, %llu B direct, %llu B "
		       "host\n",
		       tp->comms, tp->outstanding, tp->msgs_per_s, tp->direct_mbps, tp->staged_mbps,
		       (unsigned long long)tp->msgs, (unsigned long long)tp->bytes_gpu,
		       (unsigned long long)tp->bytes_host);
		if (tp->oldest && tp->oldest_ms) {
			char dev[GDX_ESCAPE_LEN(sizeof(tp->oldest->c.dev))];
			char peer[GDX_ESCAPE_LEN(sizeof(tp->oldest->c.peer))];

			gdx_escape(GDX_ESCAPE_TEXT, tp->oldest->c.dev, dev, sizeof(dev));
			gdx_escape(GDX_ESCAPE_TEXT, tp->oldest->c.peer, peer, sizeof(peer));
			printf("  oldest wait: %.1f s, %s (%s comm on %s with %s)\n",
			       (double)tp->oldest_ms / 1e3, tp->oldest_wait,
			       gdx_live_role_name(tp->oldest->c.role), dev, peer);
		}
		printf("  %-12s %4s %-20s %10s %14s %12s %26s  %s\n", "NIC", "port", "state",
		       "tx Mb/s", "tx bytes", "rx pieces", "send latency p50/99/99.9",
		       "tx, recent");
		for (int k = 0; k < t->g[i].n; k++) {
			const struct top_rail *rows = t->g[i].v;
			char spark[TOP_SPARK * 4 + 1], nic[GDX_ESCAPE_LEN(sizeof(rows[k].ibdev))];
			char lat[64];

			top_spark(&rows[k], spark, sizeof(spark));
			gdx_escape(GDX_ESCAPE_TEXT, rows[k].ibdev, nic, sizeof(nic));
			top_lat_text(rows[k].lat, rows[k].stamp_hz, lat, sizeof(lat));
			printf("  %-12s %4u %-20s %10.1f %14llu %12llu %26s  %s\n", nic,
			       rows[k].port, gdx_rail_state_name(rows[k].state), rows[k].tx_mbps,
			       (unsigned long long)rows[k].tx_bytes,
			       (unsigned long long)rows[k].rx_pieces, lat, spark);
		}
		top_peers_text(p);
		top_rma_text(p, &t->g[i]);
		top_nic_text(p, s->now_ms);
	}
	fflush(stdout);
}

/* "sends": N, "latency_us": {"p50": .., "p99": .., "p999": .., "mean": ..}
 * (null with no sample). */
static void top_lat_json(const uint64_t *lat, uint64_t count, uint64_t sum, uint64_t hz)
{
	printf("\"sends_timed\": %llu, \"latency_us\": ", (unsigned long long)count);
	if (live_lat_quantile_us(lat, 0.5, hz) < 0 || !count) {
		printf("null");
		return;
	}
	printf("{\"p50\": %.3f, \"p99\": %.3f, \"p999\": %.3f, \"mean\": %.3f}",
	       live_lat_quantile_us(lat, 0.5, hz), live_lat_quantile_us(lat, 0.99, hz),
	       live_lat_quantile_us(lat, 0.999, hz),
	       (double)sum / (double)count / (double)hz * 1e6);
}

/* Per send comm (a peer) and rail: its latencies. */
static void top_peers_json(const struct live_proc *p)
{
	bool first = true;

	for (int k = 0; k < p->ncomms; k++) {
		const struct gdx_live_comm *c = &p->comms[k].c;

		if (c->role != GDX_LIVE_SEND)
			continue;
		printf("%s{", first ? "" : ", ");
		live_json_ends(stdout, c);
		printf(", \"rails\": [");
		for (uint32_t r = 0; r < c->nrails; r++) {
			printf("%s{\"nic\": ", r ? ", " : "");
			json_str(stdout, c->rails[r].ibdev);
			printf(", \"port\": %u, \"stalls\": %llu, ", c->rails[r].port,
			       (unsigned long long)c->rails[r].stalls);
			top_lat_json(c->rails[r].lat, c->rails[r].lat_count, c->rails[r].lat_sum,
				     p->hdr.stamp_hz);
			printf("}");
		}
		printf("]}");
		first = false;
	}
}

static void top_json(const struct live_snap *s, const struct top_rows *t,
		     const struct top_proc *procs, double interval_s)
{
	printf("{");
	json_report_origin(stdout, "top");
	printf(", \"interval_s\": %.3f, \"processes\": [", interval_s);
	for (int i = 0; i < s->nprocs; i++) {
		const struct live_proc *p = &s->procs[i];
		const struct top_proc *tp = &procs[i];
		bool first = true;

		printf("%s\n  {\"pid\": %d, \"uid\": %u, \"comms_cut\": %s, \"cmd\": ",
		       i ? "," : "", p->pid, p->uid, p->comms_cut ? "true" : "false");
		json_str(stdout, p->hdr.cmd);
		printf(", ");
		json_key_count(stdout, "rank", p->hdr.rank);
		printf(", \"version\": ");
		json_str(stdout, p->hdr.version);
		printf(", \"stopped\": %s, \"comms\": %u, \"untracked_comms\": %llu, "
		       "\"outstanding\": %u, \"msgs\": %llu, \"bytes_gpu\": %llu, \"bytes_host\": "
		       "%llu, \"msgs_per_s\": %.1f, \"direct_mbps\": %.3f, \"staged_mbps\": %.3f, "
		       "\"oldest_wait_s\": %.3f, \"oldest_wait\": ",
		       p->stopped ? "true" : "false", tp->comms,
		       (unsigned long long)p->hdr.untracked, tp->outstanding,
		       (unsigned long long)tp->msgs, (unsigned long long)tp->bytes_gpu,
		       (unsigned long long)tp->bytes_host, tp->msgs_per_s, tp->direct_mbps,
		       tp->staged_mbps, (double)tp->oldest_ms / 1e3);
		json_str_or_null(stdout, tp->oldest_ms ? tp->oldest_wait : NULL);
		printf(", \"rails\": [");
		for (int k = 0; k < t->g[i].n; k++) {
			const struct top_rail *rows = t->g[i].v;

			printf("%s{\"nic\": ", first ? "" : ", ");
			json_str(stdout, rows[k].ibdev);
			printf(", \"port\": %u, \"state\": \"%s\", \"tx_bytes\": %llu, \"tx_mbps\": "
			       "%.3f, \"rx_pieces\": %llu, \"stalls\": %llu, \"rma_put_bytes\": "
			       "%llu, \"rma_put_mbps\": %.3f, \"rma_got_bytes\": %llu, ",
			       rows[k].port, gdx_rail_state_name(rows[k].state),
			       (unsigned long long)rows[k].tx_bytes, rows[k].tx_mbps,
			       (unsigned long long)rows[k].rx_pieces,
			       (unsigned long long)rows[k].stalls,
			       (unsigned long long)rows[k].rma_put, rows[k].rma_mbps,
			       (unsigned long long)rows[k].rma_got);
			top_lat_json(rows[k].lat, rows[k].lat_count, rows[k].lat_sum,
				     rows[k].stamp_hz);
			printf("}");
			first = false;
		}
		printf("], \"peers\": [");
		top_peers_json(p);
		printf("], ");
		top_nic_json(p, s->now_ms);
		printf("}");
	}
	printf("\n], ");
	live_snap_notes_json(stdout, s);
	printf("}\n");
	fflush(stdout);
}

/* Every row of every process, flat, with where each process's rows end:
 * row k's series is found among rows[k .. end[k]) alone. */
struct top_flat {
	const struct top_rail **rows;
	int *end, *series, n;
	/* each process's labels (top_prom_id()), and row k's, id[proc[k]] */
	char (*id)[TOP_PROM_ID_LEN];
	int *proc;
	char (*nic)[GDX_ESCAPE_LEN(sizeof(((struct top_rail *)0)->ibdev))];
};

/*
 * The rows' NIC names as label values (nic) and the series each row is
 * part of (series: the first row of it, of the same process). The names
 * are the files': the exposition format escapes a quote, a backslash and a
 * newline, and has no escape for anything else that does not show as
 * itself (U+FFFD), so two names may make one label value. Their rows are
 * one series, which the collector wants once (it refuses a file with a
 * series twice). A process has TOP_RAILS_PER_PROC rows at most: linear.
 */
static int top_flat_make(const struct live_snap *s, const struct top_rows *t, struct top_flat *f)
{
	int n = 0;

	for (int i = 0; i < t->n; i++)
		n += t->g[i].n;
	f->n = n;
	f->rows = calloc((size_t)n + 1, sizeof(*f->rows));
	f->end = calloc((size_t)n + 1, sizeof(*f->end));
	f->series = calloc((size_t)n + 1, sizeof(*f->series));
	f->nic = calloc((size_t)n + 1, sizeof(*f->nic));
	f->proc = calloc((size_t)n + 1, sizeof(*f->proc));
	f->id = calloc((size_t)s->nprocs + 1, sizeof(*f->id));
	if (!f->rows || !f->end || !f->series || !f->nic || !f->proc || !f->id)
		return -ENOMEM;
	for (int i = 0; i < s->nprocs; i++)
		top_prom_id(&s->procs[i], f->id[i], sizeof(f->id[i]));
	n = 0;
	for (int i = 0; i < t->n; i++) {
		int base = n;

		for (int k = 0; k < t->g[i].n; k++, n++) {
			f->rows[n] = &t->g[i].v[k];
			f->proc[n] = i;
			f->end[n] = base + t->g[i].n;
			gdx_escape(GDX_ESCAPE_PROM_LABEL, f->rows[n]->ibdev, f->nic[n],
				   sizeof(f->nic[n]));
			f->series[n] = n;
			for (int j = base; j < n && f->series[n] == n; j++)
				if (f->rows[j]->port == f->rows[n]->port &&
				    !strcmp(f->nic[j], f->nic[n]))
					f->series[n] = j;
		}
	}
	return 0;
}

static void top_flat_free(struct top_flat *f)
{
	free(f->rows);
	free(f->end);
	free(f->series);
	free(f->nic);
	free(f->proc);
	free(f->id);
}

/* The send latencies as a Prometheus histogram per NIC port, at bounds
 * every process and node shares (2^k ns), so that a server can sum the
 * buckets across them: each process's buckets are in ticks of its own
 * clock, and each counts under the first bound at or above its upper end
 * (a count at or below the true one, never above). */
static void top_prom_latency(const struct top_flat *f)
{
	printf("# HELP gdx_rail_send_latency_seconds Signaled sends on a NIC port, post to "
	       "completion.\n# TYPE gdx_rail_send_latency_seconds histogram\n");
	for (int k = 0; k < f->n; k++) {
		uint64_t le[TOP_PROM_LE + 1] = {0}, sum = 0, cum = 0; /* [TOP_PROM_LE]: +Inf */
		const struct top_rail *row = f->rows[k];
		double hz = (double)row->stamp_hz;

		if (f->series[k] != k || !row->stamp_hz)
			continue;
		for (int j = k; j < f->end[k]; j++) {
			if (f->series[j] != k)
				continue;
			for (int b = 0; b < GDX_LIVE_LAT_BUCKETS; b++) {
				double top_ns = (double)(2ULL << b) / hz * 1e9;
				int i = 0;

				/* the last bucket holds everything longer: +Inf */
				while (b < GDX_LIVE_LAT_BUCKETS - 1 && i < TOP_PROM_LE &&
				       (double)(1ULL << i) < top_ns)
					i++;
				if (b == GDX_LIVE_LAT_BUCKETS - 1)
					i = TOP_PROM_LE;
				le[i] = live_add_sat(le[i], f->rows[j]->lat[b]);
			}
			sum = live_add_sat(sum, f->rows[j]->lat_sum);
		}
		for (int i = 0; i < TOP_PROM_LE; i++) {
			cum = live_add_sat(cum, le[i]);
			printf("gdx_rail_send_latency_seconds_bucket{%s,nic=\"%s\","
			       "port=\"%u\",le=\"%.9g\"} %llu\n",
			       f->id[f->proc[k]], f->nic[k], row->port, (double)(1ULL << i) / 1e9,
			       (unsigned long long)cum);
		}
		cum = live_add_sat(cum, le[TOP_PROM_LE]);
		printf("gdx_rail_send_latency_seconds_bucket{%s,nic=\"%s\",port=\"%u\","
		       "le=\"+Inf\"} %llu\n",
		       f->id[f->proc[k]], f->nic[k], row->port, (unsigned long long)cum);
		printf("gdx_rail_send_latency_seconds_sum{%s,nic=\"%s\",port=\"%u\"} "
		       "%.9f\n",
		       f->id[f->proc[k]], f->nic[k], row->port, (double)sum / hz);
		/* the buckets' total: _count and +Inf agree, as the format asks */
		printf("gdx_rail_send_latency_seconds_count{%s,nic=\"%s\",port=\"%u\"} "
		       "%llu\n",
		       f->id[f->proc[k]], f->nic[k], row->port, (unsigned long long)cum);
	}
}

/* One-sided RMA's bytes per NIC port that has them: put, or got. */
static void top_prom_rma(const struct top_flat *f, bool got)
{
	for (int k = 0; k < f->n; k++) {
		uint64_t n = 0;
		bool rma = false;

		if (f->series[k] != k)
			continue;
		for (int j = k; j < f->end[k]; j++) {
			if (f->series[j] != k)
				continue;
			rma |= f->rows[j]->rma;
			n += got ? f->rows[j]->rma_got : f->rows[j]->rma_put;
		}
		if (rma)
			printf("gdx_rma_%s_bytes_total{%s,nic=\"%s\",port=\"%u\"} %llu\n",
			       got ? "got" : "put", f->id[f->proc[k]], f->nic[k], f->rows[k]->port,
			       (unsigned long long)n);
	}
}

/* The node exporter's textfile collector format: one sample per line,
 * each series once. */
static int top_prometheus(const struct live_snap *s, const struct top_rows *t,
			  const struct top_proc *procs)
{
	struct top_flat f = {0};

	if (top_flat_make(s, t, &f)) {
		top_flat_free(&f);
		return DOCTOR_ERROR;
	}
	printf("# HELP gdx_bytes_total Bytes moved by completed requests, by memory.\n"
	       "# TYPE gdx_bytes_total counter\n");
	for (int i = 0; i < s->nprocs; i++) {
		printf("gdx_bytes_total{%s,memory=\"gpu\"} %llu\n", f.id[i],
		       (unsigned long long)procs[i].bytes_gpu);
		printf("gdx_bytes_total{%s,memory=\"host\"} %llu\n", f.id[i],
		       (unsigned long long)procs[i].bytes_host);
	}
	printf("# HELP gdx_messages_total Requests completed.\n# TYPE gdx_messages_total counter\n");
	for (int i = 0; i < s->nprocs; i++)
		printf("gdx_messages_total{%s} %llu\n", f.id[i], (unsigned long long)procs[i].msgs);
	printf("# HELP gdx_outstanding_requests Requests in flight.\n"
	       "# TYPE gdx_outstanding_requests gauge\n");
	for (int i = 0; i < s->nprocs; i++)
		printf("gdx_outstanding_requests{%s} %u\n", f.id[i], procs[i].outstanding);
	printf("# HELP gdx_oldest_wait_seconds The longest a comm has waited without progress.\n"
	       "# TYPE gdx_oldest_wait_seconds gauge\n");
	for (int i = 0; i < s->nprocs; i++)
		printf("gdx_oldest_wait_seconds{%s} %.3f\n", f.id[i],
		       (double)procs[i].oldest_ms / 1e3);
	printf("# HELP gdx_rail_tx_bytes_total Bytes posted on a NIC port by send comms.\n"
	       "# TYPE gdx_rail_tx_bytes_total counter\n");
	for (int k = 0; k < f.n; k++) {
		uint64_t tx = 0;

		if (f.series[k] != k)
			continue;
		for (int j = k; j < f.end[k]; j++)
			tx += f.series[j] == k ? f.rows[j]->tx_bytes : 0;
		printf("gdx_rail_tx_bytes_total{%s,nic=\"%s\",port=\"%u\"} %llu\n", f.id[f.proc[k]],
		       f.nic[k], f.rows[k]->port, (unsigned long long)tx);
	}
	printf("# HELP gdx_rma_put_bytes_total Bytes one-sided RMA put through a NIC port.\n"
	       "# TYPE gdx_rma_put_bytes_total counter\n");
	top_prom_rma(&f, false);
	printf("# HELP gdx_rma_got_bytes_total Bytes one-sided RMA got through a NIC port.\n"
	       "# TYPE gdx_rma_got_bytes_total counter\n");
	top_prom_rma(&f, true);
	printf("# HELP gdx_rail_up Whether every comm's rail on the NIC port is up.\n"
	       "# TYPE gdx_rail_up gauge\n");
	for (int k = 0; k < f.n; k++) {
		bool up = true;

		if (f.series[k] != k)
			continue;
		for (int j = k; j < f.end[k]; j++)
			up = up && (f.series[j] != k || f.rows[j]->state == GDX_RAIL_UP);
		printf("gdx_rail_up{%s,nic=\"%s\",port=\"%u\"} %d\n", f.id[f.proc[k]], f.nic[k],
		       f.rows[k]->port, up);
	}
	top_prom_latency(&f);
	top_nic_prometheus(s);
	fflush(stdout);
	top_flat_free(&f);
	return DOCTOR_OK;
}

static void top_sleep(double secs)
{
	struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* top; between its snapshots, the interval's sleep, or between(arg) */
static int top_run(const struct doctor_cmd *cmd, int argc, char **argv, void (*between)(void *arg),
		   void *arg)
{
	struct top_opts o = {.interval_s = 1.0};
	struct live_snap prev, cur;
	struct top_rows rows = {0};
	struct top_proc *procs = NULL;
	int ret;
	bool tty = isatty(STDOUT_FILENO);

	ret = doctor_args(cmd, argc, argv, top_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.json + o.prometheus > 1) {
		fprintf(stderr,
			"gdx-doctor top: --json and --prometheus are two formats: give one\n");
		return DOCTOR_USAGE;
	}
	if ((o.json || o.prometheus) && !o.count)
		o.once = true; /* a machine reads one report */
	if (o.once)
		o.count = 1;
	ret = live_snap_take(o.dir, &prev);
	if (ret != DOCTOR_OK)
		return ret;
	for (long i = 0; !o.count || i < o.count; i++) {
		if (between)
			between(arg);
		else
			top_sleep(o.interval_s);
		ret = live_snap_take(o.dir, &cur);
		if (ret != DOCTOR_OK)
			break;
		free(procs);
		procs = calloc((size_t)cur.nprocs + 1, sizeof(*procs));
		if (!procs) {
			live_snap_free(&cur);
			ret = DOCTOR_ERROR;
			break;
		}
		if (top_rows(&cur, &prev, &rows, procs)) {
			live_snap_free(&cur);
			ret = DOCTOR_ERROR;
			break;
		}
		if (o.json)
			top_json(&cur, &rows, procs, o.interval_s);
		else if (o.prometheus)
			ret = top_prometheus(&cur, &rows, procs);
		else
			top_text(&cur, &rows, procs, o.dir, o.interval_s, tty && !o.once);
		live_snap_free(&prev);
		prev = cur;
	}
	live_snap_free(&prev);
	free(procs);
	top_rows_free(&rows);
	if (ret == DOCTOR_OK && ferror(stdout))
		ret = DOCTOR_ERROR;
	return ret;
}

static int doctor_top(const struct doctor_cmd *cmd, int argc, char **argv)
{
	return top_run(cmd, argc, argv, NULL, NULL);
}

int doctor_top_between(int argc, char **argv, void (*between)(void *arg), void *arg)
{
	return top_run(&doctor_cmd_top, argc, argv, between, arg);
}

static const struct doctor_opt top_opts[] = {
	{"once", 'o', NULL, "one report after one interval, then exit"},
	{"interval", 'i', "SECONDS", "time between the two snapshots a rate is taken over (1)"},
	{"count", 'n', "N", "N reports, then exit"},
	{"json", 'j', NULL, "JSON (one report unless --count)"},
	{"prometheus", 'p', NULL,
	 "the node exporter's textfile format (one report unless --count)"},
	{"dir", 'd', "DIR", "where the live files are (NCCL_GDX_LIVE_DIR, else /dev/shm)"},
	{0},
};

const struct doctor_cmd doctor_cmd_top = {
	.name = "top",
	.summary = "what each process with the plugin moves now, per NIC port, from its live "
		   "counters",
	.opts = top_opts,
	.run = doctor_top,
};
