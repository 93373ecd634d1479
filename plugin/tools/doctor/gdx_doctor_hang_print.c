/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor hang --merge's report (gdx_doctor_hang_waits.h): the root causes and
 * the chains gdx_doctor_hang_graph.c found, and the conflicts between the
 * reports, as text, JSON or Graphviz dot; every name from a report printed
 * escaped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/gdx_escape.h"

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_hang_waits.h"

/* The chains printed, the shortest first; how many more is said. */
#define MERGE_CHAINS_SHOWN 50
/* The conflicts said, in the report's order; how many more is said. */
#define MERGE_CONFLICTS_SHOWN 1000
/* A chain longer than this is printed with its middle left out. */
#define MERGE_CHAIN_ENDS 10

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

static const char *const merge_conflict_names[] = {
	[MERGE_CONFLICT_NODE] = "node",
	[MERGE_CONFLICT_PROC] = "process",
	[MERGE_CONFLICT_PAIR] = "connection",
	[MERGE_CONFLICT_ADDR] = "address",
};

static void merge_put_from(FILE *f, const struct merge *m, int node)
{
	gdx_esc_text(f, m->nodes[node].from.source);
	fprintf(f, ", report %d", m->nodes[node].from.ordinal);
}

/* One conflict, for a person: what is claimed twice, and by whom. */
static void merge_put_conflict(FILE *f, const struct merge *m, const struct merge_conflict *x)
{
	switch (x->kind) {
	case MERGE_CONFLICT_NODE:
		fputs("node ", f);
		gdx_esc_text(f, x->a);
		fputs(" reported twice: ", f);
		merge_put_from(f, m, x->first);
		fputs(" and ", f);
		merge_put_from(f, m, x->second);
		break;
	case MERGE_CONFLICT_PROC:
		fputs("process ", f);
		gdx_esc_text(f, x->a);
		fprintf(f, ":%d twice: ", x->pid);
		merge_put_from(f, m, x->first);
		fputs(" and ", f);
		merge_put_from(f, m, x->second);
		break;
	case MERGE_CONFLICT_PAIR:
	case MERGE_CONFLICT_ADDR:
		fputs(x->kind == MERGE_CONFLICT_PAIR ? "connection end " : "address ", f);
		gdx_esc_text(f, x->a);
		if (x->kind == MERGE_CONFLICT_PAIR) {
			fputs(" (peer ", f);
			gdx_esc_text(f, x->b);
			fputc(')', f);
		}
		fputs(" claimed by ", f);
		merge_put_proc(f, &m->procs[x->first]);
		fputs(" and ", f);
		merge_put_proc(f, &m->procs[x->second]);
		fputs(" (", f);
		merge_put_from(f, m, m->procs[x->second].node);
		fputc(')', f);
		break;
	}
}

static void merge_conflicts_text(FILE *f, const struct merge *m)
{
	if (!m->nconflicts)
		return;
	fprintf(f, "\nconflicts (two reports claim what a job has once: one is forged or stale; "
		   "what either claims is left out of the root causes):\n");
	for (int i = 0; i < m->nconflicts && i < MERGE_CONFLICTS_SHOWN; i++) {
		fputs("  ", f);
		merge_put_conflict(f, m, &m->conflicts[i]);
		fputc('\n', f);
	}
	if (m->nconflicts > MERGE_CONFLICTS_SHOWN)
		fprintf(f, "  ... and %d more\n", m->nconflicts - MERGE_CONFLICTS_SHOWN);
	fprintf(f,
		"%ld stuck comm(s) left out: their process, or the peer they wait for, is claimed "
		"twice\n",
		m->left_out);
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
		merge_conflicts_text(f, m);
		return;
	}
	merge_conflicts_text(f, m);
	fputs("\nroot causes:\n", f);
	if (!m->nroots)
		fputs("  none but the conflicts above\n", f);
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

static void merge_json_from(FILE *f, const struct merge *m, int node)
{
	fputs("{", f);
	json_key_str(f, "source", m->nodes[node].from.source);
	fprintf(f, ", \"report\": %d}", m->nodes[node].from.ordinal);
}

static void merge_json_conflicts(FILE *f, const struct merge *m)
{
	fputs(",\n \"conflicts\": [", f);
	for (int i = 0; i < m->nconflicts && i < MERGE_CONFLICTS_SHOWN; i++) {
		const struct merge_conflict *x = &m->conflicts[i];
		bool procs = x->kind == MERGE_CONFLICT_PAIR || x->kind == MERGE_CONFLICT_ADDR;

		fprintf(f, "%s{\"kind\": \"%s\", ", i ? ",\n  " : "\n  ",
			merge_conflict_names[x->kind]);
		json_key_str(f,
			     x->kind == MERGE_CONFLICT_NODE   ? "node"
			     : x->kind == MERGE_CONFLICT_PROC ? "host"
							      : "address",
			     x->a);
		if (x->kind == MERGE_CONFLICT_PROC)
			fprintf(f, ", \"pid\": %d", x->pid);
		if (x->kind == MERGE_CONFLICT_PAIR) {
			fputs(", ", f);
			json_key_str(f, "peer", x->b);
		}
		fprintf(f, ", \"%s\": [", procs ? "claimed_by" : "reports");
		if (procs) {
			merge_json_proc(f, &m->procs[x->first]);
			fputs(", ", f);
			merge_json_proc(f, &m->procs[x->second]);
		} else {
			merge_json_from(f, m, x->first);
			fputs(", ", f);
			merge_json_from(f, m, x->second);
		}
		fputs("]}", f);
	}
	fprintf(f, "],\n \"conflicts_total\": %d, \"left_out\": %ld", m->nconflicts, m->left_out);
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
	fprintf(f, "],\n \"chains_total\": %d", w->nchains);
	merge_json_conflicts(f, m);
	fprintf(f, ", \"exit\": %d}\n", m->nstuck ? DOCTOR_HANG : DOCTOR_OK);
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

		if (!c->stuck || c->contested || m->procs[c->owner].stopped)
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

void merge_print(const struct merge *m, const struct merge_work *w)
{
	if (m->fmt == HANG_MERGE_JSON)
		merge_json(m->fl.out, m, w);
	else if (m->fmt == HANG_MERGE_DOT)
		merge_dot(m->fl.out, m);
	else
		merge_text(m->fl.out, m, w);
}
