/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor hang --merge: the nodes' hang --json reports read together.
 * Each report lists every process of its node that has the plugin loaded,
 * with every comm, waiting or not. A comm names its own end of the
 * connection and the peer's (address, peer), so the two ends of one
 * connection find each other across the reports: a stuck comm that waits
 * for its peer's CTS or data waits for the process that owns the other end.
 * This file reads the reports and joins each stuck comm to what it waits
 * for, a process or a cause of its own (a port down, no answer, the peer
 * gone, a failure, a peer no report has); gdx_doctor_hang_graph.c follows
 * the waits to their ends.
 *
 * The reports come from other nodes and other users: they are read with
 * fleet's reader, in fleet's memory budget, everything that grows with them
 * found by hash, and every string printed escaped.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_hang_waits.h"

/* What the map lookups compare: a name, a pair of addresses, a process. */
struct merge_lookup {
	const struct merge *m;
	const char *a, *b;
	int pid;
};

static bool merge_same_node(const void *ctx, uint32_t id)
{
	const struct merge_lookup *l = ctx;

	return !strcmp(l->m->nodes[id].name, l->a);
}

static bool merge_same_proc(const void *ctx, uint32_t id)
{
	const struct merge_lookup *l = ctx;
	const struct merge_proc *p = &l->m->procs[id];

	return p->pid == l->pid && !strcmp(p->host, l->a);
}

static bool merge_same_pair(const void *ctx, uint32_t id)
{
	const struct merge_lookup *l = ctx;
	const struct merge_comm *c = &l->m->comms[id];

	return c->address && c->peer && !strcmp(c->address, l->a) && !strcmp(c->peer, l->b);
}

static bool merge_same_addr(const void *ctx, uint32_t id)
{
	const struct merge_lookup *l = ctx;
	const struct merge_comm *c = &l->m->comms[id];

	return c->address && !strcmp(c->address, l->a);
}

static uint32_t merge_hash2(const char *a, const char *b)
{
	return fleet_hash(a) * 0x9e3779b1u ^ fleet_hash(b);
}

static uint32_t merge_hash_proc(const char *host, int pid)
{
	return fleet_hash(host) ^ (uint32_t)pid * 0x9e3779b1u;
}

/* v as an integer from lo to hi; false when it is none (another type, a
 * fraction, out of range). */
static bool merge_int(const struct json_value *v, long long lo, long long hi, int *out)
{
	long long n;
	char *end;

	if (!v || v->type != JSON_NUMBER || strpbrk(v->text, ".eE"))
		return false;
	errno = 0;
	n = strtoll(v->text, &end, 10);
	if (errno || *end || n < lo || n > hi)
		return false;
	*out = (int)n;
	return true;
}

/* A string member, NULL when it is missing, empty or not a string. */
static const char *merge_str(const struct json_value *obj, const char *key)
{
	const char *s = json_string(json_get(obj, key));

	return s && s[0] ? s : NULL;
}

static enum merge_wait merge_wait_of(const char *name)
{
	static const char *const names[] = {
		[MERGE_CTS] = "cts",
		[MERGE_DATA] = "data",
		[MERGE_COMPLETION] = "completion",
		[MERGE_PEER_CLOSED] = "peer_closed",
		[MERGE_FAILED] = "failed",
	};

	for (size_t i = MERGE_CTS; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return (enum merge_wait)i;
	return MERGE_OTHER;
}

/* The first rail of a stuck comm that is not up (sysfs says its port is
 * down, or the plugin took it out), in c->nic, c->port, c->rail_state. */
static void merge_bad_rail(struct merge_comm *c, const struct json_value *rails)
{
	for (int i = 0; rails && rails->type == JSON_ARRAY && i < rails->n; i++) {
		const struct json_value *rail = &rails->items[i];
		const char *state = merge_str(rail, "state");
		bool down = json_get(rail, "port_down") &&
			    json_get(rail, "port_down")->type == JSON_TRUE;

		if (!down && (!state || !strcmp(state, "up")))
			continue;
		c->nic = merge_str(rail, "nic");
		if (!merge_int(json_get(rail, "port"), 0, INT_MAX, &c->port))
			c->port = -1;
		c->rail_state = down ? "down" : state;
		return;
	}
}

/* Two reports claim alike what a job has once: said, and left out. */
static int merge_conflict(struct merge *m, enum merge_conflict_kind kind, const char *a,
			  const char *b, int pid, int first, int second)
{
	int ret = fleet_grow(&m->fl, &m->conflicts, &m->conflicts_cap, m->nconflicts,
			     sizeof(*m->conflicts));

	if (ret)
		return ret;
	m->conflicts[m->nconflicts++] = (struct merge_conflict){kind, a, b, pid, first, second};
	return 0;
}

/* A comm is found by its two ends, and by its own address alone (a peer's
 * listen address, when the pair is not there). A key held by comms of two
 * processes is a conflict (a connection's end is one process's), marked on
 * the first comm of the key. */
static int merge_index_comm(struct merge *m, int id)
{
	struct merge_comm *c = &m->comms[id];
	struct merge_lookup l = {.m = m, .a = c->address, .b = c->peer};
	uint32_t h;
	int first, ret;

	if (!c->address)
		return 0;
	h = fleet_hash(c->address);
	first = fleet_map_find(&m->addr_map, h, merge_same_addr, &l);
	if (first >= 0) {
		struct merge_comm *f = &m->comms[first];

		/* said when a comm's peer is found by it (most such claims
		 * claim a pair too, said as that) */
		if (f->owner != c->owner && !f->addr_conflict) {
			f->addr_conflict = true;
			f->addr_other = c->owner;
		}
		c->next_addr = f->next_addr;
		f->next_addr = id;
	} else if ((ret = fleet_map_add(&m->fl, &m->addr_map, h, (uint32_t)id))) {
		return ret;
	}
	if (!c->peer)
		return 0;
	h = merge_hash2(c->address, c->peer);
	first = fleet_map_find(&m->pair_map, h, merge_same_pair, &l);
	if (first >= 0) {
		struct merge_comm *f = &m->comms[first];

		if (f->owner != c->owner && !f->pair_conflict) {
			f->pair_conflict = true;
			ret = merge_conflict(m, MERGE_CONFLICT_PAIR, c->address, c->peer, 0,
					     f->owner, c->owner);
			if (ret)
				return ret;
		}
		c->next_pair = f->next_pair;
		f->next_pair = id;
		return 0;
	}
	return fleet_map_add(&m->fl, &m->pair_map, h, (uint32_t)id);
}

/* One comm of process p. A member of the wrong type counts as missing: the
 * comm is not matched by it, or does not wait. */
static int merge_add_comm(struct merge *m, int p, const struct json_value *cv)
{
	struct merge_comm *c;
	int ret;

	if (cv->type != JSON_OBJECT)
		return 0;
	ret = fleet_grow(&m->fl, &m->comms, &m->comms_cap, m->ncomms, sizeof(*m->comms));
	if (ret)
		return ret;
	c = &m->comms[m->ncomms];
	*c = (struct merge_comm){
		.role = merge_str(cv, "comm"),
		.address = merge_str(cv, "address"),
		.peer = merge_str(cv, "peer"),
		.owner = p,
		.port = -1,
		.wait = merge_wait_of(merge_str(cv, "wait")),
		.root = -1,
		.target = -1,
		.next_pair = -1,
		.next_addr = -1,
		.next_direct = -1,
	};
	c->stuck = c->wait != MERGE_OTHER && json_get(cv, "stuck") &&
		   json_get(cv, "stuck")->type == JSON_TRUE;
	if (c->stuck) {
		merge_bad_rail(c, json_get(cv, "rails"));
		m->procs[p].nstuck++;
		m->nstuck++;
	}
	m->procs[p].ncomms++;
	return merge_index_comm(m, m->ncomms++);
}

/* One process of a report; source, ordinal and index say where it is. */
static int merge_add_proc(struct merge *m, int node, const char *source, int ordinal, int index,
			  const struct json_value *pv)
{
	const struct json_value *comms = json_get(pv, "comms");
	struct merge_lookup l = {.m = m};
	struct merge_proc *p;
	uint32_t h;
	int ret, dup;

	if (pv->type != JSON_OBJECT)
		return fleet_fail(&m->fl, "%s, report %d, process %d: not an object", source,
				  ordinal, index);
	l.a = merge_str(pv, "host") ? merge_str(pv, "host") : m->nodes[node].name;
	if (!merge_int(json_get(pv, "pid"), 1, INT_MAX, &l.pid))
		return fleet_fail(&m->fl,
				  "%s, report %d, process %d: \"pid\" is not a process id (an "
				  "integer from 1 to %d)",
				  source, ordinal, index, INT_MAX);
	h = merge_hash_proc(l.a, l.pid);
	dup = fleet_map_find(&m->proc_map, h, merge_same_proc, &l);
	/* A process twice: a conflict (both left out), not the end of the
	 * merge: one report must not decide the verdict for all. */
	ret = dup >= 0 ? merge_conflict(m, MERGE_CONFLICT_PROC, l.a, NULL, l.pid,
					m->procs[dup].node, node)
		       : 0;
	if (dup >= 0)
		m->procs[dup].conflict = true;
	if (!ret)
		ret = fleet_grow(&m->fl, &m->procs, &m->procs_cap, m->nprocs, sizeof(*m->procs));
	if (!ret && dup < 0)
		ret = fleet_map_add(&m->fl, &m->proc_map, h, (uint32_t)m->nprocs);
	if (ret)
		return fleet_status(&m->fl, ret, source);
	p = &m->procs[m->nprocs];
	*p = (struct merge_proc){.host = l.a,
				 .cmd = merge_str(pv, "cmd"),
				 .pid = l.pid,
				 .node = node,
				 .first = m->ncomms,
				 .root = -1,
				 .conflict = dup >= 0};
	if (!merge_int(json_get(pv, "rank"), 0, INT_MAX, &p->rank))
		p->rank = -1;
	p->stopped = json_get(pv, "stopped") && json_get(pv, "stopped")->type == JSON_TRUE;
	m->nprocs++;
	for (int i = 0; comms && comms->type == JSON_ARRAY && i < comms->n; i++) {
		ret = merge_add_comm(m, m->nprocs - 1, &comms->items[i]);
		if (ret)
			return fleet_status(&m->fl, ret, source);
	}
	return DOCTOR_OK;
}

/* One report, fleet's reader's callback: a node's hang --json, of
 * HANG_FORMAT. */
static int merge_add_report(struct fleet *fl, void *ctx, const char *source, int ordinal,
			    const struct json_value *doc)
{
	struct merge *m = ctx;
	const char *cmd = json_string(json_get(doc, "command"));
	const struct json_value *format = json_get(doc, "format");
	const struct json_value *procs = json_get(doc, "processes");
	struct merge_lookup l = {.m = m, .a = merge_str(doc, "hostname")};
	int node, ret;
	uint32_t h;

	if (doc->type != JSON_OBJECT)
		return fleet_fail(fl, "%s, report %d: not a report (a JSON object)", source,
				  ordinal);
	if (!cmd)
		return fleet_fail(fl,
				  "%s, report %d: not gdx-doctor hang --json output (no "
				  "\"command\" member)",
				  source, ordinal);
	if (strcmp(cmd, "hang"))
		return fleet_fail(fl,
				  "%s, report %d: gdx-doctor %s output; hang --merge reads hang "
				  "--json",
				  source, ordinal, cmd);
	if (!merge_int(format, HANG_FORMAT, HANG_FORMAT, &(int){0}))
		return fleet_fail(fl,
				  "%s, report %d: %s%s%s; hang --merge reads format %d (this "
				  "gdx-doctor's hang --json, run on each node)",
				  source, ordinal, format ? "hang report format " : "no \"format\"",
				  format && format->type == JSON_NUMBER ? format->text : "",
				  format && format->type != JSON_NUMBER ? "not a number" : "",
				  HANG_FORMAT);
	if (!procs || procs->type != JSON_ARRAY)
		return fleet_fail(fl, "%s, report %d: no \"processes\" list", source, ordinal);
	if (!l.a)
		l.a = source;
	h = fleet_hash(l.a);
	node = fleet_map_find(&m->node_map, h, merge_same_node, &l);
	/* A node twice: both reports' processes left out, the conflict said */
	ret = node >= 0 ? merge_conflict(m, MERGE_CONFLICT_NODE, l.a, NULL, 0, node, m->nnodes) : 0;
	if (node >= 0)
		m->nodes[node].conflict = true;
	if (!ret)
		ret = fleet_grow(fl, &m->nodes, &m->nodes_cap, m->nnodes, sizeof(*m->nodes));
	if (!ret && node < 0)
		ret = fleet_map_add(fl, &m->node_map, h, (uint32_t)m->nnodes);
	if (ret)
		return fleet_status(fl, ret, source);
	m->nodes[m->nnodes] = (struct merge_node){l.a, {source, ordinal}, node >= 0};
	node = m->nnodes++;
	for (int i = 0; i < procs->n; i++) {
		ret = merge_add_proc(m, node, source, ordinal, i + 1, &procs->items[i]);
		if (ret != DOCTOR_OK)
			return ret;
	}
	return DOCTOR_OK;
}

/* The process that owns the other end of c: the comm whose address is c's
 * peer and whose peer is c's address, else one whose address is c's peer
 * (its listen address); -1 when no report has it, MERGE_CONTESTED when two
 * processes claim it, or the one that does is claimed twice itself. */
#define MERGE_CONTESTED (-2)

static int merge_peer_owner(const struct merge *m, int owner)
{
	return merge_proc_conflict(m, owner) ? MERGE_CONTESTED : owner;
}

static int merge_peer_of(struct merge *m, int id)
{
	const struct merge_comm *c = &m->comms[id];
	struct merge_lookup l = {.m = m, .a = c->peer, .b = c->address};
	int y;

	if (!c->peer)
		return -1;
	y = c->address ? fleet_map_find(&m->pair_map, merge_hash2(c->peer, c->address),
					merge_same_pair, &l)
		       : -1;
	if (y >= 0 && m->comms[y].pair_conflict)
		return MERGE_CONTESTED;
	for (; y >= 0; y = m->comms[y].next_pair)
		if (y != id)
			return merge_peer_owner(m, m->comms[y].owner);
	y = fleet_map_find(&m->addr_map, fleet_hash(c->peer), merge_same_addr, &l);
	if (y >= 0 && m->comms[y].addr_conflict) {
		struct merge_comm *f = &m->comms[y];

		if (!f->addr_said) {
			f->addr_said = true;
			if (merge_conflict(m, MERGE_CONFLICT_ADDR, f->address, NULL, 0, f->owner,
					   f->addr_other))
				return -ENOMEM;
		}
		return MERGE_CONTESTED;
	}
	for (; y >= 0; y = m->comms[y].next_addr)
		if (y != id)
			return merge_peer_owner(m, m->comms[y].owner);
	return -1;
}

/* The root of a process waited for that waits for nothing itself: stopped,
 * or none of its comms stuck. */
static int merge_proc_root(struct merge *m, int p)
{
	struct merge_proc *q = &m->procs[p];

	if (q->root >= 0)
		return 0;
	return merge_root_of(m, q->stopped ? MERGE_STOPPED : MERGE_NOT_WAITING, NULL, p, -1,
			     &q->root);
}

/* Comm id is one of those its root is found from. */
static void merge_link_direct(struct merge *m, int id)
{
	struct merge_comm *c = &m->comms[id];

	c->next_direct = m->roots[c->root].first_direct;
	m->roots[c->root].first_direct = id;
}

/* A root whose key is made of several names, joined with a separator no
 * name has ("\x1f"), the key kept to the end. */
static int merge_keyed_root(struct merge *m, enum merge_kind kind, int proc, int comm, int *out,
			    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static int merge_keyed_root(struct merge *m, enum merge_kind kind, int proc, int comm, int *out,
			    const char *fmt, ...)
{
	char *key = NULL;
	const char *kept;
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&key, fmt, ap);
	va_end(ap);
	if (ret < 0)
		return -ENOMEM;
	ret = fleet_keep(&m->fl, key, &kept);
	free(key);
	return ret ? ret : merge_root_of(m, kind, kept, proc, comm, out);
}

static const char *merge_or_empty(const char *s)
{
	return s ? s : "";
}

/* What stuck comm id waits for: a root, or the process at the other end
 * (itself a root when it waits for nothing). A process stopped drives none
 * of its comms: it is their cause. A rail not up comes before the peer,
 * which may be waiting for this very comm. */
static int merge_join_comm(struct merge *m, int id)
{
	struct merge_comm *c = &m->comms[id];
	const struct merge_proc *p = &m->procs[c->owner];
	const char *peer = merge_or_empty(c->peer);
	int ret, owner;

	/* its own process, or the one it waits for, claimed twice: no cause
	 * is taken from either report (the conflict is said) */
	if (merge_proc_conflict(m, c->owner)) {
		c->contested = true;
		m->left_out++;
		return 0;
	}
	if (p->stopped) {
		ret = merge_proc_root(m, c->owner);
		c->root = p->root;
	} else if (c->rail_state) {
		/* A port is its host's: the processes and comms on it share it. */
		ret = merge_keyed_root(m, MERGE_PORT, -1, id, &c->root, "%s\x1f%s\x1f%d", p->host,
				       merge_or_empty(c->nic), c->port);
	} else if (c->wait == MERGE_COMPLETION) {
		ret = merge_keyed_root(m, MERGE_PATH, c->owner, id, &c->root, "%d\x1f%s", c->owner,
				       peer);
	} else if (c->wait == MERGE_PEER_CLOSED) {
		owner = merge_peer_of(m, id);
		if (owner == -ENOMEM)
			return owner;
		ret = merge_root_of(m, MERGE_GONE, peer, owner < 0 ? -1 : owner, id, &c->root);
	} else if (c->wait == MERGE_FAILED) {
		ret = merge_root_of(m, MERGE_FAILED_COMM, NULL, c->owner, id, &c->root);
	} else if ((owner = merge_peer_of(m, id)) == -ENOMEM) {
		return -ENOMEM;
	} else if (owner == MERGE_CONTESTED) {
		c->contested = true;
		m->left_out++;
		return 0;
	} else if ((c->target = owner) < 0) {
		ret = merge_root_of(m, MERGE_UNKNOWN_PEER, peer, -1, id, &c->root);
	} else {
		const struct merge_proc *q = &m->procs[c->target];

		return q->stopped || !q->nstuck ? merge_proc_root(m, c->target) : 0;
	}
	if (!ret)
		merge_link_direct(m, id);
	return ret;
}

static void merge_free(struct merge *m)
{
	fleet_free_read(&m->fl);
	free(m->nodes);
	free(m->procs);
	free(m->comms);
	free(m->roots);
	free(m->scc_start);
	free(m->scc_members);
	free(m->scc_root);
	free(m->scc_entered);
	free(m->node_map.slots);
	free(m->proc_map.slots);
	free(m->pair_map.slots);
	free(m->addr_map.slots);
	free(m->root_map.slots);
	free(m->conflicts);
}

int hang_merge(int nsrc, char *const *srcs, enum hang_merge_fmt fmt, FILE *out, FILE *err)
{
	struct merge m = {.fmt = fmt};
	int ret = DOCTOR_OK;

	m.fl = (struct fleet){.out = out,
			      .err = err,
			      .on_report = merge_add_report,
			      .on_report_ctx = &m,
			      .name = "gdx-doctor hang --merge"};
	m.fl.budget.limit = JSON_BUDGET_BASE;
	for (int i = 0; i < (nsrc ? nsrc : 1) && ret == DOCTOR_OK; i++)
		ret = fleet_read_file(&m.fl, nsrc ? srcs[i] : "-");
	for (int i = 0; i < m.ncomms && ret == DOCTOR_OK; i++) {
		if (!m.comms[i].stuck)
			continue;
		ret = merge_join_comm(&m, i);
		if (ret)
			ret = fleet_status(&m.fl, ret, "the wait-for graph");
	}
	if (ret == DOCTOR_OK)
		ret = merge_report(&m);
	merge_free(&m);
	if (ret != DOCTOR_ERROR && (fflush(out) || ferror(out)))
		ret = DOCTOR_ERROR;
	return ret;
}
