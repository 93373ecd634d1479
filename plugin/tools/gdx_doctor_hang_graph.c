/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor hang --merge's graph: the processes, each stuck comm an edge
 * to the process it waits for (gdx_doctor_hang_merge.c joined them), walked
 * to where the waits end. A chain ends at a root cause: a process stopped,
 * a process that waits for nothing (busy elsewhere), a cycle of processes
 * each waiting for the next, or a cause in a comm itself (a port down, no
 * answer on the path, the peer gone, a failure, a peer no report has).
 *
 * A job's graph may have 100,000 processes: the cycles are found in linear
 * time (Tarjan's strongly connected components, without recursion), each
 * root's count is one walk up from it, and the chains, which a dense graph
 * has exponentially many of, are walked within a bound of steps, past which
 * the counts are said to be lower bounds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdx/gdx_escape.h>

#include "gdx_doctor.h"
#include "gdx_doctor_hang.h"

/* The chains printed, the shortest first; how many more is said. */
#define MERGE_CHAINS_SHOWN 50
/* A chain longer than this is printed with its middle left out. */
#define MERGE_CHAIN_ENDS 10
/* The steps the walks may take in all: far more than a real job needs. */
#define MERGE_MAX_STEPS (1L << 24)

static const char *const merge_kind_names[] = {
	[MERGE_STOPPED] = "stopped", [MERGE_NOT_WAITING] = "not_waiting",
	[MERGE_CYCLE] = "cycle",     [MERGE_UNKNOWN_PEER] = "unknown_peer",
	[MERGE_PORT] = "port",	     [MERGE_PATH] = "path",
	[MERGE_GONE] = "gone",	     [MERGE_FAILED_COMM] = "failed",
};

static const char *const merge_why[] = {
	[MERGE_STOPPED] = "stopped (SIGSTOP or a debugger): it drives none of its comms",
	[MERGE_NOT_WAITING] = "none of its comms waits: busy elsewhere \u2014 compute, a "
			      "host-side barrier, another communicator",
	[MERGE_CYCLE] = "each waits for the next: a deadlock, no chain leads out of it",
	[MERGE_UNKNOWN_PEER] = "a node missing from the input?",
	[MERGE_PORT] = "the NIC's port is down, or the plugin took the rail out: check the link "
		       "with ibv_devinfo",
	[MERGE_PATH] = "the NIC had no answer from the peer: routing, its port, or the process "
		       "is gone",
	[MERGE_GONE] = "the peer process closed the connection or exited",
	[MERGE_FAILED_COMM] = "the comm failed: its WARN line in the job's log names the cause",
};

/* One step of a walk: the process reached, the step it came from, and the
 * comm of that one's process it followed (-1 at a head). */
struct merge_step {
	int proc, parent, comm;
};

/* A chain: its last step, its length in processes, its root, and the comm
 * that leads from the last process to the root when the root is a comm's. */
struct merge_chain {
	int tail, len, root, end;
	long order;
};

/* What the report is built with, freed at its end. */
struct merge_work {
	int *in_start, *in_comms; /* the stuck comms waiting for each process */
	int *stamp, *queue;
	struct merge_step *steps;
	int nsteps, steps_cap;
	struct merge_chain *chains;
	int nchains, chains_cap;
	int *order; /* roots, in the order printed */
	int *rank;  /* where each root is in that order */
	int *path;  /* a chain's processes, being printed */
	long budget;
};

/* A root looked up by its kind and key. */
struct merge_root_lookup {
	const struct merge *m;
	enum merge_kind kind;
	const char *key;
};

static bool merge_same_root(const void *ctx, uint32_t id)
{
	const struct merge_root_lookup *l = ctx;
	const struct merge_root *r = &l->m->roots[id];

	return r->kind == l->kind && !strcmp(r->key, l->key);
}

int merge_root_of(struct merge *m, enum merge_kind kind, const char *key, int proc, int comm,
		  int *out)
{
	struct merge_root_lookup l = {m, kind, key};
	uint32_t h = key ? fleet_hash(key) ^ (uint32_t)kind : 0;
	int r = key ? fleet_map_find(&m->root_map, h, merge_same_root, &l) : -1, ret;

	if (r < 0) {
		ret = fleet_grow(&m->fl, &m->roots, &m->roots_cap, m->nroots, sizeof(*m->roots));
		if (!ret && key)
			ret = fleet_map_add(&m->fl, &m->root_map, h, (uint32_t)m->nroots);
		if (ret)
			return ret;
		r = m->nroots++;
		m->roots[r] = (struct merge_root){.kind = kind,
						  .key = key,
						  .proc = proc,
						  .comm = comm,
						  .scc = -1,
						  .first_direct = -1};
	}
	*out = r;
	return 0;
}

static bool merge_is_edge(const struct merge_comm *c)
{
	return c->stuck && c->root < 0 && c->target >= 0;
}

/* Where Tarjan's walk is in a process: its next comm. */
struct merge_call {
	int proc, next;
};

/* Tarjan's strongly connected components with a stack of its own instead
 * of recursion: a chain of 100,000 waits is as deep. Each set's members
 * are stored together as it completes. */
static int merge_scc(struct merge *m)
{
	int n = m->nprocs, idx = 0, top = 0, depth = 0, nmembers = 0, ret = 0;
	int *index, *low = NULL, *stack = NULL;
	struct merge_call *calls = NULL;

	index = fleet_alloc(&m->fl, (size_t)n, sizeof(int), &ret);
	if (!ret)
		low = fleet_alloc(&m->fl, (size_t)n, sizeof(int), &ret);
	if (!ret)
		stack = fleet_alloc(&m->fl, (size_t)n, sizeof(int), &ret);
	if (!ret)
		calls = fleet_alloc(&m->fl, (size_t)n, sizeof(*calls), &ret);
	if (!ret)
		m->scc_start = fleet_alloc(&m->fl, (size_t)n + 1, sizeof(int), &ret);
	if (!ret)
		m->scc_members = fleet_alloc(&m->fl, (size_t)n, sizeof(int), &ret);
	for (int p = 0; p < n && !ret; p++) {
		if (index[p])
			continue;
		index[p] = low[p] = ++idx; /* 0: not reached yet */
		stack[top++] = p;
		m->procs[p].scc = -1; /* -1: on the stack */
		calls[depth++] = (struct merge_call){p, 0};
		while (depth) {
			struct merge_call *call = &calls[depth - 1];
			int v = call->proc, w;

			if (call->next < m->procs[v].ncomms) {
				const struct merge_comm *c =
					&m->comms[m->procs[v].first + call->next++];

				if (!merge_is_edge(c))
					continue;
				w = c->target;
				if (!index[w]) {
					index[w] = low[w] = ++idx;
					stack[top++] = w;
					m->procs[w].scc = -1;
					calls[depth++] = (struct merge_call){w, 0};
				} else if (m->procs[w].scc < 0 && index[w] < low[v]) {
					low[v] = index[w];
				}
				continue;
			}
			depth--;
			if (depth && low[v] < low[calls[depth - 1].proc])
				low[calls[depth - 1].proc] = low[v];
			if (low[v] != index[v])
				continue;
			/* v is the first of its set reached: the set is the stack down to it */
			m->scc_start[m->nscc] = nmembers;
			do {
				w = stack[--top];
				m->procs[w].scc = m->nscc;
				m->scc_members[nmembers++] = w;
			} while (w != v);
			m->nscc++;
		}
	}
	if (!ret)
		m->scc_start[m->nscc] = nmembers;
	free(index);
	free(low);
	free(stack);
	free(calls);
	return ret;
}

static int merge_cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* The sets no stuck comm leads out of, of more than one process or one
 * waiting for itself: cycles, roots of their own. And the sets a stuck comm
 * from outside leads into (the others start chains). */
static int merge_cycles(struct merge *m)
{
	int ret = 0;

	m->scc_root = fleet_alloc(&m->fl, (size_t)m->nscc, sizeof(int), &ret);
	if (!ret)
		m->scc_entered = fleet_alloc(&m->fl, (size_t)m->nscc, sizeof(bool), &ret);
	if (ret)
		return ret;
	for (int c = 0; c < m->ncomms; c++) {
		const struct merge_comm *comm = &m->comms[c];

		if (merge_is_edge(comm) && m->procs[comm->owner].scc != m->procs[comm->target].scc)
			m->scc_entered[m->procs[comm->target].scc] = true;
	}
	for (int s = 0; s < m->nscc && !ret; s++) {
		bool closed = true, inside = false;
		int first = m->nprocs;

		m->scc_root[s] = -1;
		for (int k = m->scc_start[s]; k < m->scc_start[s + 1] && closed; k++) {
			const struct merge_proc *p = &m->procs[m->scc_members[k]];

			if (m->scc_members[k] < first)
				first = m->scc_members[k];
			for (int c = p->first; c < p->first + p->ncomms && closed; c++) {
				const struct merge_comm *comm = &m->comms[c];

				if (!comm->stuck)
					continue;
				closed = merge_is_edge(comm) && m->procs[comm->target].scc == s;
				inside = true;
			}
		}
		if (closed && inside && !m->procs[first].stopped) {
			/* its members in the reports' order, as said */
			qsort(&m->scc_members[m->scc_start[s]],
			      (size_t)(m->scc_start[s + 1] - m->scc_start[s]), sizeof(int),
			      merge_cmp_int);
			ret = merge_root_of(m, MERGE_CYCLE, NULL, first, -1, &m->scc_root[s]);
			if (!ret)
				m->roots[m->scc_root[s]].scc = s;
		}
	}
	return ret;
}

static void merge_visit(struct merge_work *w, int p, int stamp, int *tail)
{
	if (w->stamp[p] != stamp) {
		w->stamp[p] = stamp;
		w->queue[(*tail)++] = p;
	}
}

/* For each root, the stuck comms it explains: those it is found from, and
 * each stuck comm waiting for a process from which it is reached, walked up
 * the stuck comms that wait for each process (w->in_comms). */
static int merge_explain(struct merge *m, struct merge_work *w)
{
	int n = m->nprocs, ret = 0;

	w->in_start = fleet_alloc(&m->fl, (size_t)n + 1, sizeof(int), &ret);
	if (!ret)
		w->in_comms = fleet_alloc(&m->fl, (size_t)m->ncomms, sizeof(int), &ret);
	if (!ret)
		w->stamp = fleet_alloc(&m->fl, (size_t)n, sizeof(int), &ret);
	if (!ret)
		w->queue = fleet_alloc(&m->fl, (size_t)n, sizeof(int), &ret);
	if (ret)
		return ret;
	/* Counted, summed to where each process's list ends, then filled
	 * from the end down: in_start[p] is where p's list starts. */
	for (int c = 0; c < m->ncomms; c++)
		if (merge_is_edge(&m->comms[c]))
			w->in_start[m->comms[c].target]++;
	for (int p = 1; p <= n; p++)
		w->in_start[p] += w->in_start[p - 1];
	for (int c = m->ncomms - 1; c >= 0; c--)
		if (merge_is_edge(&m->comms[c]))
			w->in_comms[--w->in_start[m->comms[c].target]] = c;
	for (int r = 0; r < m->nroots && w->budget > 0; r++) {
		struct merge_root *root = &m->roots[r];
		int head = 0, tail = 0;

		if (root->kind == MERGE_STOPPED || root->kind == MERGE_NOT_WAITING)
			merge_visit(w, root->proc, r + 1, &tail);
		if (root->kind == MERGE_CYCLE)
			for (int k = m->scc_start[root->scc]; k < m->scc_start[root->scc + 1]; k++)
				merge_visit(w, m->scc_members[k], r + 1, &tail);
		for (int c = root->first_direct; c >= 0; c = m->comms[c].next_direct) {
			root->explains++;
			merge_visit(w, m->comms[c].owner, r + 1, &tail);
		}
		while (head < tail && w->budget-- > 0) {
			int q = w->queue[head++];

			for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++) {
				root->explains++;
				merge_visit(w, m->comms[w->in_comms[k]].owner, r + 1, &tail);
			}
		}
	}
	m->cut |= w->budget <= 0;
	return 0;
}

/* A step of a walk, counted in the bound; -E2BIG past it or past the memory
 * budget (the walk stops there: m->cut). */
static int merge_step(struct merge *m, struct merge_work *w, int proc, int parent, int comm)
{
	int ret;

	if (w->budget-- <= 0)
		return -E2BIG;
	ret = fleet_grow(&m->fl, &w->steps, &w->steps_cap, w->nsteps, sizeof(*w->steps));
	if (ret)
		return ret;
	w->steps[w->nsteps] = (struct merge_step){proc, parent, comm};
	return w->nsteps++;
}

static int merge_chain(struct merge *m, struct merge_work *w, int tail, int len, int root, int end)
{
	int ret = fleet_grow(&m->fl, &w->chains, &w->chains_cap, w->nchains, sizeof(*w->chains));

	if (ret)
		return ret;
	w->chains[w->nchains] = (struct merge_chain){tail, len, root, end, w->nchains};
	w->nchains++;
	m->roots[root].chains++;
	return 0;
}

/* Where a walk is in a process: its step, and its next comm. */
struct merge_frame {
	int step, next;
};

/*
 * Every chain from head: a walk along the stuck comms, depth first, each
 * process at most once on a chain. A chain ends at a process that is a root,
 * at a comm whose cause is its own, or back at a process of the chain: a
 * cycle's (its first comm only is followed in a cycle: the others lead
 * around it too), or else a loop the waits leave elsewhere, not a chain.
 */
static int merge_walk(struct merge *m, struct merge_work *w, struct merge_frame *frames,
		      bool *on_chain, int head)
{
	int depth = 0, s = merge_step(m, w, head, -1, -1), ret = 0;

	if (s < 0)
		return s;
	frames[depth++] = (struct merge_frame){s, 0};
	on_chain[head] = true;
	while (depth && !ret) {
		struct merge_frame *f = &frames[depth - 1];
		const struct merge_proc *p = &m->procs[w->steps[f->step].proc];
		const struct merge_comm *c;
		int cycle = m->scc_root[p->scc], q;

		if (p->root >= 0 || f->next == p->ncomms) {
			if (p->root >= 0)
				ret = merge_chain(m, w, f->step, depth, p->root, -1);
			on_chain[w->steps[f->step].proc] = false;
			depth--;
			continue;
		}
		c = &m->comms[p->first + f->next];
		f->next++;
		if (!c->stuck)
			continue;
		if (c->root >= 0) {
			ret = merge_chain(m, w, f->step, depth, c->root, (int)(c - m->comms));
			continue;
		}
		q = c->target;
		if (cycle >= 0)
			f->next = p->ncomms;
		if (on_chain[q] && m->scc_root[m->procs[q].scc] < 0)
			continue;
		s = merge_step(m, w, q, f->step, (int)(c - m->comms));
		if (s < 0)
			ret = s;
		else if (on_chain[q])
			ret = merge_chain(m, w, s, depth + 1, m->scc_root[m->procs[q].scc], -1);
		else {
			frames[depth++] = (struct merge_frame){s, 0};
			on_chain[q] = true;
		}
	}
	while (depth)
		on_chain[w->steps[frames[--depth].step].proc] = false;
	return ret;
}

/* The chains, from each head: a process with a stuck comm that no stuck
 * comm waits for, or the first process of a set of them that none from
 * outside waits for (a cycle, or a loop with a way out). */
static int merge_chains(struct merge *m, struct merge_work *w)
{
	struct merge_frame *frames;
	bool *on_chain = NULL, *headed = NULL;
	int ret = 0;

	frames = fleet_alloc(&m->fl, (size_t)m->nprocs, sizeof(*frames), &ret);
	if (!ret)
		on_chain = fleet_alloc(&m->fl, (size_t)m->nprocs, sizeof(bool), &ret);
	if (!ret)
		headed = fleet_alloc(&m->fl, (size_t)m->nscc, sizeof(bool), &ret);
	for (int p = 0; p < m->nprocs && !ret; p++) {
		int s = m->procs[p].scc;

		if (!m->procs[p].nstuck || m->scc_entered[s] || headed[s])
			continue;
		headed[s] = true;
		ret = merge_walk(m, w, frames, on_chain, p);
	}
	if (ret == -E2BIG) {
		m->cut = true;
		ret = 0;
	}
	free(frames);
	free(on_chain);
	free(headed);
	return ret;
}

/* The roots by what they explain, then by their chains, then as found. */
static int merge_cmp_root(const void *a, const void *b, void *ctx)
{
	const struct merge *m = ctx;
	int x = *(const int *)a, y = *(const int *)b;
	const struct merge_root *rx = &m->roots[x], *ry = &m->roots[y];

	if (rx->explains != ry->explains)
		return rx->explains > ry->explains ? -1 : 1;
	if (rx->chains != ry->chains)
		return rx->chains > ry->chains ? -1 : 1;
	return (x > y) - (x < y);
}

/* The chains, the shortest first, then as found. */
static int merge_cmp_chain(const void *a, const void *b)
{
	const struct merge_chain *x = a, *y = b;

	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

static void merge_put_proc(FILE *f, const struct merge_proc *p)
{
	gdx_esc_text(f, p->host);
	fprintf(f, ":%d(", p->pid);
	if (p->rank >= 0)
		fprintf(f, "%d)", p->rank);
	else
		fputs("?)", f);
}

static const char *merge_edge_name(const struct merge_comm *c)
{
	return c->wait == MERGE_CTS ? "CTS" : "data";
}

/* The label of the last step of a chain that ends at comm c's own root. */
static const char *merge_end_name(const struct merge *m, const struct merge_comm *c)
{
	switch (m->roots[c->root].kind) {
	case MERGE_PATH: return "no answer";
	case MERGE_GONE: return "closed";
	case MERGE_FAILED_COMM: return "failed";
	case MERGE_PORT: return "port";
	default: return merge_edge_name(c);
	}
}

/* The name of root r, for a person: what it is, where. */
static void merge_put_root(FILE *f, const struct merge *m, const struct merge_root *r)
{
	const struct merge_comm *c = r->comm >= 0 ? &m->comms[r->comm] : NULL;
	const struct merge_proc *p = r->proc >= 0 ? &m->procs[r->proc] : NULL;

	switch (r->kind) {
	case MERGE_STOPPED:
	case MERGE_NOT_WAITING: merge_put_proc(f, p); break;
	case MERGE_CYCLE: {
		int first = m->scc_start[r->scc], n = m->scc_start[r->scc + 1] - first;

		fprintf(f, "cycle of %d process(es):", n);
		for (int k = 0; k < n && k < MERGE_CHAIN_ENDS; k++) {
			fputc(' ', f);
			merge_put_proc(f, &m->procs[m->scc_members[first + k]]);
		}
		if (n > MERGE_CHAIN_ENDS)
			fprintf(f, " and %d more", n - MERGE_CHAIN_ENDS);
		break;
	}
	case MERGE_UNKNOWN_PEER:
		fputs("unknown peer ", f);
		gdx_esc_text(f, c->peer ? c->peer : "(no address in the report)");
		break;
	case MERGE_PORT:
		fputs("port: ", f);
		gdx_esc_text(f, m->procs[c->owner].host);
		fputc(' ', f);
		gdx_esc_text(f, c->nic ? c->nic : "(NIC unnamed)");
		if (c->port >= 0)
			fprintf(f, " port %d", c->port);
		fputs(" is ", f);
		gdx_esc_text(f, c->rail_state);
		break;
	case MERGE_PATH:
	case MERGE_GONE:
	case MERGE_FAILED_COMM:
		fputs(r->kind == MERGE_PATH   ? "no answer: "
		      : r->kind == MERGE_GONE ? "gone: "
					      : "failed: ",
		      f);
		if (r->kind != MERGE_GONE && p) {
			merge_put_proc(f, p);
			fprintf(f, "'s %s comm with ", c->role ? c->role : "");
		}
		gdx_esc_text(f, c->peer ? c->peer : "(no address)");
		if (r->kind == MERGE_GONE && p) {
			fputs(" (", f);
			merge_put_proc(f, p);
			fputc(')', f);
		}
		break;
	}
}

/* How a chain that ends at a comm's root goes on from its last process. */
static void merge_put_end(FILE *f, const struct merge *m, const struct merge_chain *ch)
{
	const struct merge_root *r = &m->roots[ch->root];
	const struct merge_comm *c = ch->end >= 0 ? &m->comms[ch->end] : NULL;

	if (!c) {
		fprintf(f, " [%s]",
			r->kind == MERGE_NOT_WAITING ? "not waiting" : merge_kind_names[r->kind]);
		return;
	}
	if (r->kind == MERGE_UNKNOWN_PEER || r->kind == MERGE_PATH || r->kind == MERGE_GONE) {
		fprintf(f, " --%s--> ", merge_end_name(m, c));
		gdx_esc_text(f, c->peer ? c->peer : "?");
	}
	if (r->kind == MERGE_PORT) {
		fputs(" [port ", f);
		gdx_esc_text(f, c->nic ? c->nic : "?");
		if (c->port >= 0)
			fprintf(f, " %d", c->port);
		fputc(' ', f);
		gdx_esc_text(f, c->rail_state);
		fputs("]", f);
		return;
	}
	fprintf(f, " [%s]",
		r->kind == MERGE_UNKNOWN_PEER ? "unknown peer" : merge_kind_names[r->kind]);
}

/* The steps of chain ch, first to last, into w->path; returns how many. */
static int merge_path(const struct merge_work *w, const struct merge_chain *ch)
{
	int s = ch->tail;

	for (int i = ch->len - 1; i >= 0; i--, s = w->steps[s].parent)
		w->path[i] = s;
	return ch->len;
}

static void merge_put_chain(FILE *f, const struct merge *m, const struct merge_work *w,
			    const struct merge_chain *ch)
{
	int len = merge_path(w, ch);

	for (int i = 0; i < len; i++) {
		const struct merge_step *s = &w->steps[w->path[i]];

		if (i)
			fprintf(f, " --%s--> ", merge_edge_name(&m->comms[s->comm]));
		merge_put_proc(f, &m->procs[s->proc]);
		/* A chain of thousands: its two ends */
		if (i == MERGE_CHAIN_ENDS - 1 && len > 2 * MERGE_CHAIN_ENDS + 1) {
			fprintf(f, " ... (%d more process(es)) ...", len - 2 * MERGE_CHAIN_ENDS);
			i = len - MERGE_CHAIN_ENDS - 1;
		}
	}
	merge_put_end(f, m, ch);
}

static void merge_text(FILE *f, const struct merge *m, const struct merge_work *w)
{
	fprintf(f, "gdx-doctor hang --merge: %d report(s), %d process(es), %ld stuck comm(s)\n",
		m->nnodes, m->nprocs, m->nstuck);
	if (!m->nstuck) {
		fprintf(f,
			"nothing is stuck: %d process(es) on %d node(s), none has waited past its "
			"threshold\n",
			m->nprocs, m->nnodes);
		return;
	}
	fputs("\nroot causes:\n", f);
	for (int i = 0; i < m->nroots; i++) {
		const struct merge_root *r = &m->roots[w->order[i]];
		const struct merge_proc *p = r->proc >= 0 ? &m->procs[r->proc] : NULL;

		fprintf(f, "  %d. ", i + 1);
		merge_put_root(f, m, r);
		fprintf(f, "%s%s", r->kind == MERGE_UNKNOWN_PEER ? " (" : ": ", merge_why[r->kind]);
		if (r->kind == MERGE_UNKNOWN_PEER)
			fputc(')', f);
		if (p && p->cmd && r->kind != MERGE_GONE && r->kind != MERGE_CYCLE) {
			fputs("; cmd: ", f);
			gdx_esc_text(f, p->cmd);
		}
		fprintf(f, "; explains %ld stuck comm(s), ends %ld chain(s)\n", r->explains,
			r->chains);
	}
	fputs("\nchains (the shortest first):\n", f);
	for (int i = 0; i < w->nchains && i < MERGE_CHAINS_SHOWN; i++) {
		fputs("  ", f);
		merge_put_chain(f, m, w, &w->chains[i]);
		fputc('\n', f);
	}
	if (w->nchains > MERGE_CHAINS_SHOWN)
		fprintf(f, "  ... and %d more chain(s)\n", w->nchains - MERGE_CHAINS_SHOWN);
	if (m->cut)
		fprintf(f,
			"\nnote: the walks stopped at their bound (%ld steps, or the memory "
			"allowed): the counts above are lower bounds\n",
			MERGE_MAX_STEPS);
}

static void merge_json_proc(FILE *f, const struct merge_proc *p)
{
	fputs("{", f);
	json_key_str(f, "host", p->host);
	fprintf(f, ", \"pid\": %d, \"rank\": ", p->pid);
	if (p->rank >= 0)
		fprintf(f, "%d}", p->rank);
	else
		fputs("null}", f);
}

static void merge_json_int(FILE *f, const char *key, int v)
{
	if (v >= 0)
		fprintf(f, ", \"%s\": %d", key, v);
	else
		fprintf(f, ", \"%s\": null", key);
}

static void merge_json_root(FILE *f, const struct merge *m, const struct merge_root *r)
{
	const struct merge_comm *c = r->comm >= 0 ? &m->comms[r->comm] : NULL;
	/* a cycle is its members */
	const struct merge_proc *p =
		r->proc >= 0 && r->kind != MERGE_CYCLE ? &m->procs[r->proc] : NULL;
	bool port = r->kind == MERGE_PORT;

	fprintf(f, "{\"kind\": \"%s\", ", merge_kind_names[r->kind]);
	json_key_str(f, "host", p ? p->host : port ? m->procs[c->owner].host : NULL);
	merge_json_int(f, "pid", p ? p->pid : -1);
	merge_json_int(f, "rank", p ? p->rank : -1);
	fputs(", ", f);
	json_key_str(f, "cmd", p ? p->cmd : NULL);
	fputs(", ", f);
	json_key_str(f, "nic", port ? c->nic : NULL);
	merge_json_int(f, "port", port ? c->port : -1);
	fputs(", ", f);
	json_key_str(f, "state", port ? c->rail_state : NULL);
	fputs(", ", f);
	json_key_str(f, "address", c && !port ? c->peer : NULL);
	fputs(", \"members\": [", f);
	if (r->kind == MERGE_CYCLE)
		for (int k = m->scc_start[r->scc]; k < m->scc_start[r->scc + 1]; k++) {
			if (k > m->scc_start[r->scc])
				fputs(", ", f);
			merge_json_proc(f, &m->procs[m->scc_members[k]]);
		}
	fprintf(f, "], \"explains\": %ld, \"chains\": %ld, ", r->explains, r->chains);
	json_key_str(f, "why", merge_why[r->kind]);
	fputs("}", f);
}

static void merge_json(FILE *f, const struct merge *m, const struct merge_work *w)
{
	fprintf(f,
		"{\"command\": \"hang-merge\", \"reports\": %d, \"nodes\": %d, \"processes\": %d, "
		"\"stuck\": %ld, \"cut\": %s,\n \"roots\": [",
		m->nnodes, m->nnodes, m->nprocs, m->nstuck, m->cut ? "true" : "false");
	for (int i = 0; i < m->nroots; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		merge_json_root(f, m, &m->roots[w->order[i]]);
	}
	fputs("],\n \"chains\": [", f);
	for (int i = 0; i < w->nchains && i < MERGE_CHAINS_SHOWN; i++) {
		const struct merge_chain *ch = &w->chains[i];
		int len = merge_path(w, ch);

		fputs(i ? ",\n  {\"path\": [" : "\n  {\"path\": [", f);
		for (int k = 0; k < len; k++) {
			if (k)
				fputs(", ", f);
			merge_json_proc(f, &m->procs[w->steps[w->path[k]].proc]);
		}
		fputs("], \"edges\": [", f);
		for (int k = 1; k < len; k++)
			fprintf(f, "%s\"%s\"", k > 1 ? ", " : "",
				merge_edge_name(&m->comms[w->steps[w->path[k]].comm]));
		if (ch->end >= 0)
			fprintf(f, "%s\"%s\"", len > 1 ? ", " : "",
				merge_end_name(m, &m->comms[ch->end]));
		fprintf(f, "], \"root\": %d}", w->rank[ch->root]);
	}
	fprintf(f, "],\n \"chains_total\": %d, \"exit\": %d}\n", w->nchains,
		m->nstuck ? DOCTOR_HANG : DOCTOR_OK);
}

/* A root of a comm's for dot: its kind, then its names, each escaped as
 * JSON's, which dot reads as its own (a control character stays visible as
 * \uXXXX). */
static void merge_dot_root(FILE *f, const struct merge *m, int r)
{
	const struct merge_root *root = &m->roots[r];
	const struct merge_comm *c = &m->comms[root->comm];

	fprintf(f,
		"  r%d [shape=ellipse, style=filled, fillcolor=\"#f4a0a0\", penwidth=2, "
		"label=\"%s\\n",
		r,
		root->kind == MERGE_UNKNOWN_PEER ? "unknown peer" : merge_kind_names[root->kind]);
	if (root->kind == MERGE_PORT) {
		gdx_esc_json(f, m->procs[c->owner].host);
		fputc(' ', f);
		gdx_esc_json(f, c->nic ? c->nic : "?");
		fprintf(f, " port %d ", c->port);
		gdx_esc_json(f, c->rail_state);
	} else {
		gdx_esc_json(f, c->peer ? c->peer : "?");
	}
	fputs("\"];\n", f);
}

static void merge_dot_proc(FILE *f, const struct merge *m, int i)
{
	const struct merge_proc *p = &m->procs[i];
	int cycle = m->scc_root[p->scc];
	char name[64];

	/* the name's parts escaped one by one: the host is the report's */
	fprintf(f, "  p%d [label=\"", i);
	gdx_esc_json(f, p->host);
	snprintf(name, sizeof(name), p->rank >= 0 ? ":%d(%d)" : ":%d(?)", p->pid, p->rank);
	fputs(name, f);
	if (p->root >= 0)
		fprintf(f, "\\n%s\", style=filled, fillcolor=\"#f4a0a0\", penwidth=2",
			p->stopped ? "stopped" : "not waiting");
	else if (cycle >= 0)
		fputs("\\ncycle\", style=filled, fillcolor=\"#f4d090\", penwidth=2", f);
	else
		fputc('"', f);
	fputs("];\n", f);
}

static void merge_dot(FILE *f, const struct merge *m)
{
	fputs("digraph hang {\n  rankdir=LR;\n  node [shape=box];\n", f);
	for (int i = 0; i < m->nprocs; i++)
		if (m->procs[i].nstuck || m->procs[i].root >= 0)
			merge_dot_proc(f, m, i);
	for (int r = 0; r < m->nroots; r++) {
		const struct merge_root *root = &m->roots[r];
		const struct merge_comm *c = root->comm >= 0 ? &m->comms[root->comm] : NULL;

		if (!c || m->procs[c->owner].stopped)
			continue;
		merge_dot_root(f, m, r);
	}
	for (int i = 0; i < m->ncomms; i++) {
		const struct merge_comm *c = &m->comms[i];

		if (!c->stuck || m->procs[c->owner].stopped)
			continue;
		if (c->target >= 0)
			fprintf(f, "  p%d -> p%d [label=\"%s\"];\n", c->owner, c->target,
				merge_edge_name(c));
		else
			fprintf(f, "  p%d -> r%d [label=\"%s\"];\n", c->owner, c->root,
				merge_end_name(m, c));
	}
	fputs("}\n", f);
}

static void merge_work_free(struct merge_work *w)
{
	free(w->in_start);
	free(w->in_comms);
	free(w->stamp);
	free(w->queue);
	free(w->steps);
	free(w->chains);
	free(w->order);
	free(w->rank);
	free(w->path);
}

int merge_report(struct merge *m)
{
	struct merge_work w = {.budget = MERGE_MAX_STEPS};
	int ret = merge_scc(m);

	if (!ret)
		ret = merge_cycles(m);
	if (!ret)
		ret = merge_explain(m, &w);
	if (!ret) {
		w.budget = MERGE_MAX_STEPS;
		ret = merge_chains(m, &w);
	}
	if (!ret)
		w.order = fleet_alloc(&m->fl, (size_t)m->nroots, sizeof(int), &ret);
	if (!ret)
		w.rank = fleet_alloc(&m->fl, (size_t)m->nroots, sizeof(int), &ret);
	if (!ret)
		w.path = fleet_alloc(&m->fl, (size_t)m->nprocs + 1, sizeof(int), &ret);
	if (ret) {
		merge_work_free(&w);
		return fleet_status(&m->fl, ret, "the wait-for graph");
	}
	for (int r = 0; r < m->nroots; r++)
		w.order[r] = r;
	/* (qsort takes no NULL, which an empty array may be) */
	if (m->nroots)
		qsort_r(w.order, (size_t)m->nroots, sizeof(int), merge_cmp_root, m);
	for (int i = 0; i < m->nroots; i++)
		w.rank[w.order[i]] = i;
	if (w.nchains)
		qsort(w.chains, (size_t)w.nchains, sizeof(*w.chains), merge_cmp_chain);
	if (m->fmt == HANG_MERGE_JSON)
		merge_json(m->fl.out, m, &w);
	else if (m->fmt == HANG_MERGE_DOT)
		merge_dot(m->fl.out, m);
	else
		merge_text(m->fl.out, m, &w);
	merge_work_free(&w);
	return m->nstuck ? DOCTOR_HANG : DOCTOR_OK;
}
