/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor fleet: the odd ones out of an allocation. Reads the check --json
 * and topo --json reports of many nodes (files, or one stream as srun
 * collects it), tells the nodes apart by the hostname each report carries,
 * turns each node into attributes (rail groups, plugin, wire and NCCL
 * versions, each port's GID type, MTU and fabric features, memlock, peer memory, DMA-BUF, GDR
 * verdicts, the NCCL_GDX_* and NCCL_IB_* values) and names, for every
 * attribute that is not the same everywhere, the majority value and each
 * node that differs. The exit status says whether the allocation agrees.
 *
 * The reports may come from other users and other nodes. Everything fleet
 * keeps that grows with them is counted in one budget, 6 bytes for each
 * byte read and 1 MiB (the JSON reader's trees, the nodes, the attributes,
 * srun's tasks), and an input past it is refused; names are found by hash,
 * not by walking lists, and a value is compared by sorting, so that no
 * input costs time quadratic in its size; and every string printed is
 * escaped (gdx_escape.h).
 *
 * This file is the command: the reports read, the attributes compared, the
 * ones that differ said; gdx_doctor_fleet_records.h names the files it is made of.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/gdx_escape.h"

#include "tools/doctor/gdx_doctor_fleet_records.h"

static const char *const fleet_kind_names[] = {"check", "topo", "any"};

struct fleet_opts {
	bool json;
};

/* An attribute that is not the same on every node that has its report. */
struct fleet_diff {
	int key;
	const char *majority; /* the value most nodes hold; NULL: most have none */
	int count;	      /* how many nodes hold it */
	int compared;	      /* how many nodes have the report */
	bool tie;	      /* another value is held by as many */
};

static int fleet_on_opt(void *ctx, int key, const char *arg)
{
	struct fleet_opts *o = ctx;

	(void)arg;
	if (key == 'j')
		o->json = true;
	return DOCTOR_OK;
}

/* How many nodes have key's report: fl->with[kind] lists them. */
static int fleet_ncompared(const struct fleet *fl, enum fleet_kind kind)
{
	return kind == FLEET_ALL ? fl->nnodes : fl->nreports[kind];
}

static bool fleet_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* A value a key takes, and the first node (in order) that holds it. */
struct fleet_run {
	const char *value;
	int first;
};

static int fleet_cmp_run(const void *a, const void *b)
{
	const struct fleet_run *x = a, *y = b;
	int c = strcmp(x->value, y->value);

	return c ? c : (x->first > y->first) - (x->first < y->first);
}

/* The first node, in order, that has key k's report but no value of it. */
static int fleet_first_absent(const struct fleet *fl, int k)
{
	const struct fleet_key *key = &fl->keys[k];
	int v = key->head;

	for (int i = 0; i < fleet_ncompared(fl, key->kind); i++) {
		int n = fl->with[key->kind][i];

		if (v < 0 || fl->vals[v].node != n)
			return n;
		v = fl->vals[v].next;
	}
	return INT_MAX;
}

/* One value of a key, held by count nodes the first of which is first, as
 * a candidate for the majority; *nmax: how many values have the most. */
static void fleet_consider(struct fleet_diff *d, const char *value, int count, int first,
			   int *best_first, int *nmax)
{
	if (count > d->count) {
		d->count = count;
		d->majority = value;
		*best_first = first;
		*nmax = 1;
	} else if (count == d->count) {
		(*nmax)++;
		if (first < *best_first) {
			d->majority = value;
			*best_first = first;
		}
	}
}

/* Fills d when key k is not the same on every node that has its report:
 * the values sorted (in scratch, room for every node), counted by runs. The
 * majority is the value most nodes hold, the one seen first of those that
 * tie. */
static bool fleet_differs(const struct fleet *fl, int k, struct fleet_diff *d,
			  struct fleet_run *scratch)
{
	const struct fleet_key *key = &fl->keys[k];
	int present = 0, absent, distinct = 0, best_first = INT_MAX, nmax = 0;

	*d = (struct fleet_diff){.key = k, .compared = fleet_ncompared(fl, key->kind)};
	for (int v = key->head; v >= 0; v = fl->vals[v].next)
		scratch[present++] = (struct fleet_run){fl->vals[v].value, fl->vals[v].node};
	qsort(scratch, (size_t)present, sizeof(*scratch), fleet_cmp_run);
	for (int i = 0, j; i < present; i = j) {
		for (j = i + 1; j < present && !strcmp(scratch[j].value, scratch[i].value); j++)
			;
		distinct++;
		fleet_consider(d, scratch[i].value, j - i, scratch[i].first, &best_first, &nmax);
	}
	absent = d->compared - present;
	if (absent > 0) {
		distinct++;
		/* Only a count that can win needs its first node found. */
		if (absent >= d->count)
			fleet_consider(d, NULL, absent, fleet_first_absent(fl, k), &best_first,
				       &nmax);
	}
	d->tie = nmax > 1;
	return distinct > 1;
}

/* The nodes that differ from the majority, in order: a walk over the nodes
 * that have the report beside the key's values, or, when most nodes have no
 * value, over the values alone, so that it costs what it prints. */
struct fleet_odd {
	const struct fleet *fl;
	const struct fleet_diff *d;
	int i, v;
};

static bool fleet_odd_next(struct fleet_odd *o, int *node, const char **value)
{
	const struct fleet *fl = o->fl;
	const struct fleet_key *key = &fl->keys[o->d->key];

	if (!o->d->majority) {
		if (o->v < 0)
			return false;
		*node = fl->vals[o->v].node;
		*value = fl->vals[o->v].value;
		o->v = fl->vals[o->v].next;
		return true;
	}
	while (o->i < fleet_ncompared(fl, key->kind)) {
		int n = fl->with[key->kind][o->i++];
		const char *v = NULL;

		if (o->v >= 0 && fl->vals[o->v].node == n) {
			v = fl->vals[o->v].value;
			o->v = fl->vals[o->v].next;
		}
		if (!fleet_same(v, o->d->majority)) {
			*node = n;
			*value = v;
			return true;
		}
	}
	return false;
}

static struct fleet_odd fleet_odd(const struct fleet *fl, const struct fleet_diff *d)
{
	return (struct fleet_odd){.fl = fl, .d = d, .v = fl->keys[d->key].head};
}

static const char *fleet_shown(const struct fleet *fl, int k, const char *v)
{
	return v ? v : fl->keys[k].absent;
}

static void fleet_human(const struct fleet *fl, const struct fleet_diff *diffs, int ndiffs)
{
	FILE *f = fl->out;
	int k;

	fprintf(f,
		"gdx-doctor fleet: %d node(s), %d check and %d topo report(s), %d attributes "
		"compared\n",
		fl->nnodes, fl->nreports[FLEET_CHECK], fl->nreports[FLEET_TOPO], fl->nkeys);
	if (ndiffs)
		fprintf(f,
			"\n%d attribute(s) differ (the majority value and its node count, then "
			"each node that differs):\n",
			ndiffs);
	for (int i = 0; i < ndiffs; i++) {
		const struct fleet_diff *d = &diffs[i];
		struct fleet_odd o = fleet_odd(fl, d);
		const char *v;
		int n;

		fputs("  ", f);
		gdx_esc_text(f, fl->keys[d->key].name);
		fputs(": ", f);
		gdx_esc_text(f, fleet_shown(fl, d->key, d->majority));
		fprintf(f, " on %d of %d nodes%s", d->count, d->compared,
			d->tie ? " (a tie: no majority)" : "");
		while (fleet_odd_next(&o, &n, &v)) {
			fputs("; ", f);
			gdx_esc_text(f, fl->nodes[n].name);
			fputs(": ", f);
			gdx_esc_text(f, fleet_shown(fl, d->key, v));
		}
		fputc('\n', f);
	}
	if (!ndiffs)
		fprintf(f, "\nEvery attribute is the same on %s.\n",
			fl->nnodes == 1 ? "the one node (nothing to compare it with)"
					: "all nodes");
	k = fleet_key_find(fl, "check status");
	if (fl->nnodes > 1 && !ndiffs && k >= 0 && fl->keys[k].head >= 0 &&
	    fl->vals[fl->keys[k].head].node == 0) {
		/* Consistent: the first node's status is every node's. */
		const char *status = fl->vals[fl->keys[k].head].value;

		if (strcmp(status, "healthy")) {
			fputs("note: every node's check says ", f);
			gdx_esc_text(f, status);
			fputs(": see gdx-doctor check on any of them\n", f);
		}
	}
	if (ndiffs)
		fprintf(f, "\nResult: inconsistent, %d attribute(s) differ (exit %d)\n", ndiffs,
			DOCTOR_FLEET_DIFFERS);
	else
		fprintf(f, "\nResult: consistent (exit %d)\n", DOCTOR_OK);
}

static void fleet_json_from(FILE *f, const char *key, const struct fleet_from *from)
{
	char buf[PATH_MAX + 64];

	if (from->source)
		snprintf(buf, sizeof(buf), "%s, report %d", from->source, from->ordinal);
	json_key_str(f, key, from->source ? buf : NULL);
}

static void fleet_json(const struct fleet *fl, const struct fleet_diff *diffs, int ndiffs)
{
	FILE *f = fl->out;

	fputs("{\"command\": \"fleet\",\n \"nodes\": [", f);
	for (int i = 0; i < fl->nnodes; i++) {
		const struct fleet_node *n = &fl->nodes[i];

		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "name", n->name);
		fputs(", ", f);
		fleet_json_from(f, "check", &n->from[FLEET_CHECK]);
		fputs(", ", f);
		fleet_json_from(f, "topo", &n->from[FLEET_TOPO]);
		fputs("}", f);
	}
	fprintf(f, "],\n \"attributes\": %d,\n \"differ\": [", fl->nkeys);
	for (int i = 0; i < ndiffs; i++) {
		const struct fleet_diff *d = &diffs[i];
		const struct fleet_key *key = &fl->keys[d->key];
		struct fleet_odd o = fleet_odd(fl, d);
		const char *v;
		int odd = 0, n;

		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "attribute", key->name);
		fprintf(f, ", \"report\": \"%s\", \"majority\": ", fleet_kind_names[key->kind]);
		if (d->majority)
			json_str(f, d->majority);
		else
			fputs("null", f);
		fprintf(f, ", \"majority_nodes\": %d, \"nodes\": %d, \"tie\": %s,\n   \"odd\": [",
			d->count, d->compared, d->tie ? "true" : "false");
		while (fleet_odd_next(&o, &n, &v)) {
			fprintf(f, "%s{", odd++ ? ", " : "");
			json_key_str(f, "node", fl->nodes[n].name);
			fputs(", \"value\": ", f);
			if (v)
				json_str(f, v);
			else
				fputs("null", f);
			fputs("}", f);
		}
		fputs("]}", f);
	}
	fprintf(f, "],\n \"consistent\": %s, \"exit\": %d}\n", ndiffs ? "false" : "true",
		ndiffs ? DOCTOR_FLEET_DIFFERS : DOCTOR_OK);
}

static int fleet_cmp_node(const void *a, const void *b)
{
	return strverscmp(((const struct fleet_node *)a)->name,
			  ((const struct fleet_node *)b)->name);
}

/* Once every report is read: the nodes in order, their attributes, the
 * ones that differ, said. Returns the exit status. */
static int fleet_report(struct fleet *fl)
{
	struct fleet_diff *diffs = NULL;
	struct fleet_run *scratch = NULL;
	int ret = 0, ndiffs = 0, have[3] = {0};

	/* Nodes by name, node2 before node10: the report's order, whatever the files'. */
	fleet_map_free(fl, &fl->node_map);
	qsort(fl->nodes, (size_t)fl->nnodes, sizeof(*fl->nodes), fleet_cmp_node);
	for (int kind = 0; kind < 3 && !ret; kind++)
		fl->with[kind] = fleet_alloc(fl, (size_t)fl->nnodes, sizeof(int), &ret);
	for (int i = 0; i < fl->nnodes && !ret; i++)
		for (int kind = 0; kind < 3; kind++)
			if (fleet_compares(&fl->nodes[i], (enum fleet_kind)kind))
				fl->with[kind][have[kind]++] = i;
	if (!ret)
		fl->scratch = fleet_alloc(fl, FLEET_MAX_VALUE + 1, 1, &ret);
	for (int i = 0; i < fl->nnodes && !ret; i++) {
		ret = fleet_attrs(fl, i);
		if (ret)
			return fleet_status(fl, ret, fl->nodes[i].name);
	}
	if (!ret)
		diffs = fleet_alloc(fl, (size_t)fl->nkeys, sizeof(*diffs), &ret);
	if (!ret)
		scratch = fleet_alloc(fl, (size_t)fl->nnodes, sizeof(*scratch), &ret);
	if (ret) {
		ret = fleet_status(fl, ret, "the nodes' attributes");
		goto out;
	}
	for (int k = 0; k < fl->nkeys; k++)
		ndiffs += fleet_differs(fl, k, &diffs[ndiffs], scratch);
	if (fl->json)
		fleet_json(fl, diffs, ndiffs);
	else
		fleet_human(fl, diffs, ndiffs);
	ret = ndiffs ? DOCTOR_FLEET_DIFFERS : DOCTOR_OK;
out:
	free(scratch);
	free(diffs);
	return ret;
}

static void fleet_free(struct fleet *fl)
{
	fleet_free_read(fl);
	free(fl->nodes);
	free(fl->keys);
	free(fl->vals);
	free(fl->node_map.slots);
	free(fl->key_map.slots);
	for (int kind = 0; kind < 3; kind++)
		free(fl->with[kind]);
	free(fl->scratch);
}

static void fleet_init(struct fleet *fl, FILE *out, FILE *err, bool json)
{
	*fl = (struct fleet){.out = out, .err = err, .json = json};
	fl->budget.limit = JSON_BUDGET_BASE;
}

int doctor_fleet_texts(int n, const char *const *names, const char *const *texts,
		       const size_t *lens, bool json, FILE *out, FILE *err)
{
	struct fleet fl;
	int ret = DOCTOR_OK;

	fleet_init(&fl, out, err, json);
	for (int i = 0; i < n && ret == DOCTOR_OK; i++)
		ret = fleet_read_buffer(&fl, names[i], texts[i], lens[i]);
	if (ret == DOCTOR_OK)
		ret = fleet_report(&fl);
	fleet_free(&fl);
	return ret;
}

static int doctor_fleet(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct fleet_opts o = {0};
	struct fleet fl;
	int ret;

	ret = doctor_args(cmd, argc, argv, fleet_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	/* No file: the reports come on standard input, but not typed at a terminal. */
	if (optind == argc && isatty(STDIN_FILENO)) {
		fprintf(stderr,
			"gdx-doctor fleet: no FILE given, and standard input is a terminal: "
			"give the nodes' report files, or pipe the reports in\n");
		return DOCTOR_USAGE;
	}
	fleet_init(&fl, stdout, stderr, o.json);
	ret = optind == argc ? fleet_read_file(&fl, "-") : DOCTOR_OK;
	for (int i = optind; i < argc && ret == DOCTOR_OK; i++)
		ret = fleet_read_file(&fl, argv[i]);
	if (ret == DOCTOR_OK)
		ret = fleet_report(&fl);
	fleet_free(&fl);
	return ret;
}

static const struct doctor_opt fleet_opts[] = {
	{"json", 'j', NULL, "print JSON instead of the lines"},
	{0},
};

const struct doctor_cmd doctor_cmd_fleet = {
	.name = "fleet",
	.summary = "the nodes that differ, from every node's check --json and topo --json",
	.opts = fleet_opts,
	.run = doctor_fleet,
	.min_operands = 0,
	.max_operands = INT_MAX,
};
