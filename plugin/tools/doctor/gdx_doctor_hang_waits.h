/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor hang --merge: every node's hang --json report read together,
 * the processes' waits joined across the nodes into one wait-for graph, and
 * what the graph ends at named: the root causes of a job's hang, and the
 * chains of waits that lead to each.
 *
 * gdx_doctor_hang.c is the command; gdx_doctor_hang_merge.c reads the
 * reports (with fleet's reader, gdx_doctor_fleet_records.h), says what two of them
 * claim alike (conflicts) and joins each stuck comm to what it waits for;
 * gdx_doctor_hang_graph.c finds the cycles, counts what each root explains
 * and walks the chains; gdx_doctor_hang_print.c prints them. The second
 * part of this header is what those three share.
 */
#ifndef GDX_DOCTOR_HANG_WAITS_H
#define GDX_DOCTOR_HANG_WAITS_H

#include <stdbool.h>
#include <stdio.h>

#include "tools/doctor/gdx_doctor_fleet_records.h"

/* The shape of hang --json that hang --merge reads: one more when a member
 * it reads changes, so that a merge refuses the reports of another. */
#define HANG_FORMAT 2

enum hang_merge_fmt { HANG_MERGE_TEXT, HANG_MERGE_JSON, HANG_MERGE_DOT };

/*
 * The reports in srcs (files; "-" standard input), each a file or srun -l
 * output of one or more hang --json reports (format 2), merged: the root
 * causes and chains onto out as fmt says, what is wrong with the input onto
 * err. Returns DOCTOR_HANG when a comm is stuck, DOCTOR_OK when none is,
 * DOCTOR_NO_INPUT for a report it cannot read, DOCTOR_ERROR when out of
 * memory or the output fails.
 */
int hang_merge(int nsrc, char *const *srcs, enum hang_merge_fmt fmt, FILE *out, FILE *err);

/* What a stuck comm waits for, as the report names it. */
enum merge_wait {
	MERGE_OTHER, /* idle, or a name this version does not know: no wait */
	MERGE_CTS,
	MERGE_DATA,
	MERGE_COMPLETION,
	MERGE_PEER_CLOSED,
	MERGE_FAILED,
};

/* The kinds of root cause: what a chain of waits ends at. */
enum merge_kind {
	MERGE_STOPPED,	   /* a process stopped (SIGSTOP, a debugger) */
	MERGE_NOT_WAITING, /* a process none of whose comms waits */
	MERGE_CYCLE,	   /* processes each waiting for the next */
	MERGE_UNKNOWN_PEER,
	MERGE_PORT, /* a NIC port down, or a rail not up */
	MERGE_PATH, /* the NIC had no answer from the peer */
	MERGE_GONE, /* the peer closed or exited */
	MERGE_FAILED_COMM,
};

/* One report: a node. */
struct merge_node {
	const char *name;
	struct fleet_from from;
	bool conflict; /* another report says it is this node too */
};

/*
 * What two reports claim alike, which no real job has twice: a node, a
 * process (host:pid), or one end of a connection (an address pair, or a
 * listen address) held by two processes. One of them is forged or stale,
 * and which cannot be told: what either claims is left out of the root
 * causes (a process claimed twice is no cause, a comm that waits for a peer
 * claimed twice waits for no one known), said as a conflict, and the rest
 * merged.
 */
enum merge_conflict_kind {
	MERGE_CONFLICT_NODE,
	MERGE_CONFLICT_PROC,
	MERGE_CONFLICT_PAIR,
	MERGE_CONFLICT_ADDR,
};

struct merge_conflict {
	enum merge_conflict_kind kind;
	const char *a, *b; /* node or host; pair: address, peer; address */
	int pid;	   /* MERGE_CONFLICT_PROC */
	int first, second; /* the claimants: nodes (NODE, PROC) or processes */
};

struct merge_proc {
	const char *host, *cmd;
	int pid, rank; /* rank -1: none */
	int node;
	int first, ncomms; /* its comms in merge.comms */
	int nstuck;
	bool stopped;
	int root;      /* stopped or not waiting and waited for: its root; else -1 */
	int scc;       /* its strongly connected set in the wait-for graph */
	bool conflict; /* another report claims it too: left out of the causes */
};

struct merge_comm {
	const char *role, *address, *peer;
	const char *nic, *rail_state; /* the first rail not up, when stuck */
	int owner, port;	      /* port: the rail's, -1 when unknown */
	enum merge_wait wait;
	bool stuck;
	/* stuck, but its process or its peer is claimed twice: no root, no
	 * target (left out of the graph, counted in merge.left_out) */
	bool contested;
	/* the first comm of its key in the maps: two processes claim the key
	 * (addr_other the second; the address's conflict said once found) */
	bool pair_conflict, addr_conflict, addr_said;
	int addr_other;
	/* What a stuck comm waits for: a root (a cause in the comm itself or
	 * no one to wait for), else the process target; both -1 otherwise. */
	int root, target;
	int next_pair, next_addr; /* the next comm with the same key in the maps */
	int next_direct;	  /* the next comm whose root is the same */
};

struct merge_root {
	enum merge_kind kind;
	const char *key;
	int proc;	  /* the process named (stopped, not waiting, failed, path) or -1 */
	int comm;	  /* the comm it was found on, -1 for a process root */
	int scc;	  /* a cycle's set */
	int first_direct; /* the comms whose root it is, linked by next_direct */
	long explains, chains;
};

struct merge {
	struct fleet fl;
	enum hang_merge_fmt fmt;
	struct merge_node *nodes;
	int nnodes, nodes_cap;
	struct fleet_map node_map;
	struct merge_proc *procs;
	int nprocs, procs_cap;
	struct fleet_map proc_map;
	struct merge_comm *comms;
	int ncomms, comms_cap;
	struct fleet_map pair_map, addr_map; /* comms by (address, peer), by address */
	struct merge_root *roots;
	int nroots, roots_cap;
	struct fleet_map root_map;
	long nstuck;
	/* The strongly connected sets: the members of set s are
	 * scc_members[scc_start[s]] to scc_members[scc_start[s + 1] - 1]. */
	int nscc, *scc_start, *scc_members, *scc_root;
	bool *scc_entered; /* a stuck comm from outside waits for it */
	bool cut;	   /* the work bound was reached: counts are lower bounds */
	struct merge_conflict *conflicts;
	int nconflicts, conflicts_cap;
	long left_out; /* stuck comms contested */
};

/* Whether process p is left out of the causes: it, or its node, is claimed
 * twice. */
static inline bool merge_proc_conflict(const struct merge *m, int p)
{
	return m->procs[p].conflict || m->nodes[m->procs[p].node].conflict;
}

/* The steps the walks may take in all (a comm met, a process reached, a
 * chain recorded): far more than a real job needs. */
#define MERGE_MAX_STEPS (1L << 24)

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
	long *up;   /* the stuck comms a walk up from one process meets; -1 not yet */
	long budget;
};

/* The report (gdx_doctor_hang_print.c): the roots in w->order, the chains
 * (sorted), the conflicts, onto m->fl.out as m->fmt says. */
void merge_print(const struct merge *m, const struct merge_work *w);

/* The graph (gdx_doctor_hang_graph.c). The root of that kind and key, made
 * when new (key NULL: a new one), in *out: 0 or an error of fleet's helpers. */
int merge_root_of(struct merge *m, enum merge_kind kind, const char *key, int proc, int comm,
		  int *out);

/* Once every stuck comm is joined: the cycles,
 * what each root explains, the chains, printed as m->fmt says. Returns the
 * exit status. */
int merge_report(struct merge *m);

#endif
