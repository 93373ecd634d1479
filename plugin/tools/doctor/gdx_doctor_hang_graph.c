/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor hang --merge's graph: the processes, each stuck comm an edge
 * to the process it waits for (gdx_doctor_hang_merge.c joined them), walked
 * to where the waits end. A chain ends at a root cause: a process stopped,
 * a process that waits for nothing (busy elsewhere), a cycle of processes
 * each waiting for the next, or a cause in a comm itself (a port down, no
 * answer on the path, the peer gone, a failure, a peer no report has).
 *
 * A job's graph may have 100,000 processes, and a report set from other
 * users anything: the cycles are found in linear time (Tarjan's strongly
 * connected components, without recursion); each root's count is a walk up
 * from it, the roots found from one process sharing one walk; and every
 * comm a walk meets, every process a chain reaches and every chain
 * recorded is a step of one bound (MERGE_MAX_STEPS), past which the counts
 * are said to be lower bounds. gdx_doctor_hang_print.c prints what is found.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_hang_waits.h"

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

/* The stuck comms met walking up from the processes queued (visited with
 * stamp), each process once: the walk's steps are the edges it scans, each
 * one counted in the budget (-1 when the budget ends it). */
static long merge_walk_up(const struct merge *m, struct merge_work *w, int stamp, int head,
			  int tail)
{
	long met = 0;

	while (head < tail) {
		int q = w->queue[head++];

		for (int k = w->in_start[q]; k < w->in_start[q + 1]; k++) {
			if (w->budget-- <= 0)
				return -1;
			met++;
			merge_visit(w, m->comms[w->in_comms[k]].owner, stamp, &tail);
		}
	}
	return met;
}

/*
 * For each root, the stuck comms it explains: those it is found from, and
 * each stuck comm waiting for a process from which it is reached, walked up
 * the stuck comms that wait for each process (w->in_comms). Every comm the
 * walks meet is a step of the budget: many roots found from one process,
 * which many comms wait for, cost each an edge, not each a process. A root
 * found from one process alone (a stopped one, or the comms of one process
 * to peers no report has) reuses what the walk up from that process met:
 * such roots cost one walk in all, not one each.
 */
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
	if (!ret)
		w->up = fleet_alloc(&m->fl, (size_t)n, sizeof(long), &ret);
	if (ret)
		return ret;
	for (int p = 0; p < n; p++)
		w->up[p] = -1;
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
		int tail = 0, only = -1;
		long met;

		if (root->kind == MERGE_STOPPED || root->kind == MERGE_NOT_WAITING)
			merge_visit(w, root->proc, r + 1, &tail);
		if (root->kind == MERGE_CYCLE)
			for (int k = m->scc_start[root->scc]; k < m->scc_start[root->scc + 1]; k++)
				merge_visit(w, m->scc_members[k], r + 1, &tail);
		for (int c = root->first_direct; c >= 0 && w->budget > 0;
		     c = m->comms[c].next_direct) {
			w->budget--;
			root->explains++;
			merge_visit(w, m->comms[c].owner, r + 1, &tail);
		}
		if (tail == 1) {
			only = w->queue[0];
			if (w->up[only] >= 0) {
				root->explains += w->up[only];
				continue;
			}
		}
		met = merge_walk_up(m, w, r + 1, 0, tail);
		if (met < 0)
			break;
		root->explains += met;
		if (only >= 0)
			w->up[only] = met;
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
	int ret;

	if (w->budget-- <= 0)
		return -E2BIG; /* a chain is a step too: a dense graph has many */
	ret = fleet_grow(&m->fl, &w->chains, &w->chains_cap, w->nchains, sizeof(*w->chains));
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
		if (c->contested)
			continue; /* waits for no one known: no chain */
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

		if (!m->procs[p].nstuck || m->scc_entered[s] || headed[s] ||
		    merge_proc_conflict(m, p))
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
	free(w->up);
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
	merge_print(m, &w);
	merge_work_free(&w);
	return m->nstuck ? DOCTOR_HANG : DOCTOR_OK;
}
