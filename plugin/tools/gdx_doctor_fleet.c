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
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdx_doctor.h"
#include <gdx/gdx_escape.h>

/* A report is a few KiB; this only stops a wrong file from taking the
 * machine's memory. */
#define FLEET_MAX_INPUT (256L << 20)

/* An attribute's name: a device, a port and what of it. */
#define FLEET_NAME_LEN 192

/* The rail groups of a node as one value: a real node's are a few hundred
 * bytes. */
#define FLEET_MAX_VALUE (64 << 10)

/* Strings fleet builds are kept in chunks of this size. */
#define FLEET_CHUNK (64 << 10)

/* What malloc adds to an allocation, counted in the budget. */
#define FLEET_ALLOC_OVERHEAD 32

/* Which report an attribute comes from: it is compared only between the
 * nodes that sent that report ("reports" itself between all). */
enum fleet_kind { FLEET_CHECK, FLEET_TOPO, FLEET_ALL };

static const char *const fleet_kind_names[] = {"check", "topo", "any"};

struct fleet_opts {
	bool json;
};

/* Where a report came from: "SOURCE, report N". */
struct fleet_from {
	const char *source; /* NULL: no such report */
	int ordinal;
};

struct fleet_node {
	const char *name;		    /* the reports' hostname, else where they came from */
	const struct json_value *report[2]; /* check, topo; NULL when none came */
	struct fleet_from from[2];
};

struct fleet_key {
	const char *name;
	enum fleet_kind kind;
	const char *absent; /* what a node that has the report but not this shows */
	int head, tail;	    /* its values in fleet.vals, in node order; -1: none */
};

/* A node's value of a key; next: the key's next value. */
struct fleet_val {
	int node, next;
	const char *value;
};

/* An open-addressing hash table of ids into an array its user keeps: each
 * slot holds an id + 1 (0: empty) and the id's hash. */
struct fleet_slot {
	uint32_t hash, id;
};

struct fleet_map {
	struct fleet_slot *slots;
	uint32_t cap, n;
};

/* Strings fleet made (names, values it formatted), kept to the end. */
struct fleet_chunk {
	struct fleet_chunk *next;
	size_t len, cap;
	char data[];
};

struct fleet {
	struct json_budget budget; /* everything below that grows with the input */
	FILE *out, *err;
	bool json;
	struct json_value **docs; /* every document read, freed at the end */
	int ndocs, docs_cap;
	struct fleet_node *nodes;
	int nnodes, nodes_cap;
	struct fleet_map node_map; /* by name, while the reports are read */
	struct fleet_key *keys;
	int nkeys, keys_cap;
	struct fleet_map key_map;
	struct fleet_val *vals;
	int nvals, vals_cap;
	struct fleet_chunk *strings;
	int *with[3]; /* the nodes that have a check report, a topo report, any: in order */
	int nreports[2];
	char *scratch; /* FLEET_MAX_VALUE + 1 bytes for a value being built */
};

/* An attribute that is not the same on every node that has its report. */
struct fleet_diff {
	int key;
	const char *majority; /* the value most nodes hold; NULL: most have none */
	int count;	      /* how many nodes hold it */
	int compared;	      /* how many nodes have the report */
	bool tie;	      /* another value is held by as many */
};

/* fleet_put's copy: a name or value built in a buffer is copied; one from
 * a report's tree or a constant lives to the end as it is. */
#define FLEET_COPY_NAME	 1
#define FLEET_COPY_VALUE 2

static int fleet_on_opt(void *ctx, int key, const char *arg)
{
	struct fleet_opts *o = ctx;

	(void)arg;
	if (key == 'j')
		o->json = true;
	return DOCTOR_OK;
}

/* ---- memory, counted ---- */

/* -E2BIG when bytes more would take the budget past its limit. */
static int fleet_charge(struct fleet *fl, size_t bytes)
{
	struct json_budget *b = &fl->budget;

	if (b->used > b->limit || bytes > b->limit - b->used)
		return -E2BIG;
	b->used += bytes;
	return 0;
}

static void fleet_uncharge(struct fleet *fl, size_t bytes)
{
	fl->budget.used -= bytes < fl->budget.used ? bytes : fl->budget.used;
}

/* Room for one more element of size size in *arr (n used of *cap):
 * 0, -E2BIG or -ENOMEM. */
static int fleet_grow(struct fleet *fl, void *arr, int *cap, int n, size_t size)
{
	void **a = arr, *p;
	int ncap;

	if (n < *cap)
		return 0;
	if (*cap > INT_MAX / 2)
		return -E2BIG;
	ncap = *cap ? 2 * *cap : 16;
	if (fleet_charge(fl, (size_t)(ncap - *cap) * size + (*cap ? 0 : FLEET_ALLOC_OVERHEAD)))
		return -E2BIG;
	p = realloc(*a, (size_t)ncap * size);
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = ncap;
	return 0;
}

/* A copy of s kept to the end, in *out. */
static int fleet_keep(struct fleet *fl, const char *s, const char **out)
{
	size_t n = strlen(s) + 1;
	struct fleet_chunk *c = fl->strings;

	if (!c || c->cap - c->len < n) {
		size_t cap = n > FLEET_CHUNK / 4 ? n : FLEET_CHUNK;

		if (fleet_charge(fl, sizeof(*c) + cap + FLEET_ALLOC_OVERHEAD))
			return -E2BIG;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return -ENOMEM;
		c->len = 0;
		c->cap = cap;
		/* A large string's own chunk goes behind the one still filling. */
		if (cap > FLEET_CHUNK && fl->strings) {
			c->next = fl->strings->next;
			fl->strings->next = c;
		} else {
			c->next = fl->strings;
			fl->strings = c;
		}
	}
	memcpy(c->data + c->len, s, n);
	*out = c->data + c->len;
	c->len += n;
	return 0;
}

static uint32_t fleet_hash(const char *s)
{
	return (uint32_t)json_hash(s, strlen(s));
}

/* The id in m with hash h for which same(ctx, id) holds; -1 when none. */
static int fleet_map_find(const struct fleet_map *m, uint32_t h,
			  bool (*same)(const void *ctx, uint32_t id), const void *ctx)
{
	uint32_t mask = m->cap - 1;

	if (!m->cap)
		return -1;
	for (uint32_t i = h & mask; m->slots[i].id; i = (i + 1) & mask)
		if (m->slots[i].hash == h && same(ctx, m->slots[i].id - 1))
			return (int)(m->slots[i].id - 1);
	return -1;
}

static int fleet_map_add(struct fleet *fl, struct fleet_map *m, uint32_t h, uint32_t id)
{
	uint32_t mask, i;

	if (2 * ((size_t)m->n + 1) > m->cap) {
		uint32_t ncap = m->cap ? 2 * m->cap : 64;
		struct fleet_slot *s;

		if (m->cap > UINT32_MAX / 4 ||
		    fleet_charge(fl, (size_t)ncap * sizeof(*s) + FLEET_ALLOC_OVERHEAD))
			return -E2BIG;
		s = calloc(ncap, sizeof(*s));
		if (!s)
			return -ENOMEM;
		for (i = 0; i < m->cap; i++) {
			uint32_t j = m->slots[i].hash & (ncap - 1);

			if (!m->slots[i].id)
				continue;
			while (s[j].id)
				j = (j + 1) & (ncap - 1);
			s[j] = m->slots[i];
		}
		free(m->slots);
		if (m->cap)
			fleet_uncharge(fl, (size_t)m->cap * sizeof(*s) + FLEET_ALLOC_OVERHEAD);
		m->slots = s;
		m->cap = ncap;
	}
	mask = m->cap - 1;
	for (i = h & mask; m->slots[i].id; i = (i + 1) & mask)
		;
	m->slots[i] = (struct fleet_slot){.hash = h, .id = id + 1};
	m->n++;
	return 0;
}

static void fleet_map_free(struct fleet *fl, struct fleet_map *m)
{
	if (m->cap)
		fleet_uncharge(fl, (size_t)m->cap * sizeof(*m->slots) + FLEET_ALLOC_OVERHEAD);
	free(m->slots);
	*m = (struct fleet_map){0};
}

/* ---- what is said ---- */

/* A message on the error stream, escaped whole: it holds names from the
 * reports and the files'. Returns DOCTOR_NO_INPUT. */
static int fleet_fail(struct fleet *fl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fleet_fail(struct fleet *fl, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	fputs("gdx-doctor fleet: ", fl->err);
	gdx_esc_text(fl->err, n < 0 ? "(out of memory saying what)" : msg);
	fputc('\n', fl->err);
	free(n < 0 ? NULL : msg);
	return DOCTOR_NO_INPUT;
}

/* The exit status for an error of the helpers, -ENOMEM (70) or -E2BIG (3),
 * said, where: what fleet was reading. */
static int fleet_status(struct fleet *fl, int err, const char *where)
{
	if (err == -ENOMEM) {
		fputs("gdx-doctor fleet: out of memory\n", fl->err);
		return DOCTOR_ERROR;
	}
	if (err == -EOVERFLOW)
		return fleet_fail(fl, "%s: rail groups longer than %d KiB: not a node's topology",
				  where, FLEET_MAX_VALUE >> 10);
	return fleet_fail(
		fl,
		"%s: the reports would take more than the %zu MiB of memory allowed for "
		"them (%d bytes for each byte read, and 1 MiB): not what gdx-doctor writes",
		where, fl->budget.limit >> 20, JSON_BUDGET_PER_BYTE);
}

/* ---- reading the reports ---- */

static const char *fleet_type_name(enum json_type t)
{
	static const char *const names[] = {"null",	"false",    "true",	"a number",
					    "a string", "an array", "an object"};

	return names[t];
}

struct fleet_lookup {
	const struct fleet *fl;
	const char *name;
};

static bool fleet_same_node(const void *ctx, uint32_t id)
{
	const struct fleet_lookup *l = ctx;

	return !strcmp(l->fl->nodes[id].name, l->name);
}

/* The node of that name, made when new; name lives to the end. */
static int fleet_node(struct fleet *fl, const char *name, struct fleet_node **out)
{
	struct fleet_lookup l = {fl, name};
	uint32_t h = fleet_hash(name);
	int i = fleet_map_find(&fl->node_map, h, fleet_same_node, &l), ret;

	if (i < 0) {
		ret = fleet_grow(fl, &fl->nodes, &fl->nodes_cap, fl->nnodes, sizeof(*fl->nodes));
		if (!ret)
			ret = fleet_map_add(fl, &fl->node_map, h, (uint32_t)fl->nnodes);
		if (ret)
			return ret;
		i = fl->nnodes++;
		fl->nodes[i] = (struct fleet_node){.name = name};
	}
	*out = &fl->nodes[i];
	return 0;
}

/*
 * One report: check or topo by its "command" (reports of a gdx-doctor before
 * fleet carry none: then by their shape), the node by its "hostname" (none:
 * the place it came from stands for the node).
 */
static int fleet_add_report(struct fleet *fl, const char *source, int ordinal,
			    const struct json_value *doc)
{
	const char *cmd = json_string(json_get(doc, "command"));
	const char *host = json_string(json_get(doc, "hostname"));
	const struct fleet_from *first;
	struct fleet_node *n;
	int kind, ret;

	if (doc->type != JSON_OBJECT)
		return fleet_fail(fl, "%s, report %d: %s, not a report (a JSON object)", source,
				  ordinal, fleet_type_name(doc->type));
	if (!cmd && json_get(doc, "groups") && json_get(doc, "gpus"))
		cmd = "topo";
	else if (!cmd && json_get(doc, "ports") && json_get(doc, "host"))
		cmd = "check";
	if (!cmd)
		return fleet_fail(fl,
				  "%s, report %d: neither gdx-doctor check --json nor topo --json "
				  "output (no \"command\" member)",
				  source, ordinal);
	kind = !strcmp(cmd, "check") ? FLEET_CHECK : !strcmp(cmd, "topo") ? FLEET_TOPO : -1;
	if (kind < 0)
		return fleet_fail(fl,
				  "%s, report %d: gdx-doctor %s output; fleet reads check --json "
				  "and topo --json",
				  source, ordinal, cmd);
	ret = fleet_node(fl, host && host[0] ? host : source, &n);
	if (ret)
		return fleet_status(fl, ret, source);
	first = &n->from[kind];
	if (n->report[kind])
		return fleet_fail(fl,
				  "%s, report %d: a second %s report for node %s (the first: %s, "
				  "report %d)",
				  source, ordinal, cmd, n->name, first->source, first->ordinal);
	n->report[kind] = doc;
	n->from[kind] = (struct fleet_from){source, ordinal};
	fl->nreports[kind]++;
	return DOCTOR_OK;
}

/* Every JSON value in text: a report, or a list of reports (jq -s). source
 * lives to the end. */
static int fleet_read_text(struct fleet *fl, const char *source, const char *text, size_t len)
{
	int ordinal = 0, ret;
	size_t pos = 0;

	for (;;) {
		struct json_value *doc;
		char why[512];

		while (pos < len && isspace((unsigned char)text[pos]))
			pos++;
		if (pos == len)
			break;
		ret = json_parse(text, len, &pos, &fl->budget, &doc, why, sizeof(why));
		if (ret == -ENOMEM)
			return fleet_status(fl, ret, source);
		if (ret)
			return fleet_fail(fl, "%s: not a gdx-doctor report: %s", source, why);
		ret = fleet_grow(fl, &fl->docs, &fl->docs_cap, fl->ndocs, sizeof(*fl->docs));
		if (ret) {
			json_free(doc);
			return fleet_status(fl, ret, source);
		}
		fl->docs[fl->ndocs++] = doc;
		if (doc->type == JSON_ARRAY && !doc->n)
			return fleet_fail(fl, "%s: an empty list: no report in it", source);
		for (int i = 0; i < (doc->type == JSON_ARRAY ? doc->n : 1); i++) {
			if (ordinal == INT_MAX)
				return fleet_fail(fl, "%s: more than %d reports", source, INT_MAX);
			ret = fleet_add_report(fl, source, ++ordinal,
					       doc->type == JSON_ARRAY ? &doc->items[i] : doc);
			if (ret != DOCTOR_OK)
				return ret;
		}
	}
	if (!ordinal)
		return fleet_fail(fl, "%s: no report in it (empty)", source);
	return DOCTOR_OK;
}

/* srun -l puts "N: " before each line of task N (padded: " 3: " when there
 * are ten tasks or more). Returns the task, with *skip the label's length;
 * -1 when the line has no label. */
static int fleet_srun_label(const char *line, size_t len, size_t *skip)
{
	size_t i = 0;
	long task = 0;

	while (i < len && line[i] == ' ')
		i++;
	if (i == len || !isdigit((unsigned char)line[i]))
		return -1;
	while (i < len && isdigit((unsigned char)line[i]) && task < INT_MAX / 10)
		task = task * 10 + (line[i++] - '0');
	if (i == len || line[i] != ':' || (i + 1 < len && line[i + 1] != ' '))
		return -1;
	*skip = i + 1 < len ? i + 2 : i + 1;
	return (int)task;
}

/* A task of srun -l output: its lines' bytes, and where they go. */
struct fleet_task {
	int id;
	size_t len, at;
};

struct fleet_task_lookup {
	const struct fleet_task *tasks;
	int id;
};

static bool fleet_same_task(const void *ctx, uint32_t t)
{
	const struct fleet_task_lookup *l = ctx;

	return l->tasks[t].id == l->id;
}

/* Each labelled line of text in turn: the task it belongs to (made when
 * new), its text after the label; with copy, appended to the task's text
 * in all. Returns 0, a helper's error, or 1 after saying which line has no
 * label. */
static int fleet_srun_lines(struct fleet *fl, const char *source, const char *text, size_t len,
			    struct fleet_task **tasks, int *ntasks, int *cap, struct fleet_map *map,
			    char *all)
{
	int lineno = 0, ret;

	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, skip = 0, add;
		int id = fleet_srun_label(text + pos, end - pos, &skip), t;
		struct fleet_task_lookup l;
		uint32_t h;

		lineno++;
		if (end == pos) { /* an empty line between labelled ones */
			pos = end + 1;
			continue;
		}
		if (id < 0) {
			fleet_fail(fl,
				   "%s: line %d has no srun task label, the first line has one "
				   "(srun -l output: every line needs its label)",
				   source, lineno);
			return 1;
		}
		l = (struct fleet_task_lookup){*tasks, id};
		h = (uint32_t)json_hash(&id, sizeof(id));
		t = fleet_map_find(map, h, fleet_same_task, &l);
		if (t < 0) {
			ret = fleet_grow(fl, tasks, cap, *ntasks, sizeof(**tasks));
			if (!ret)
				ret = fleet_map_add(fl, map, h, (uint32_t)*ntasks);
			if (ret)
				return ret;
			t = (*ntasks)++;
			(*tasks)[t] = (struct fleet_task){.id = id};
		}
		add = end - pos - skip;
		if (all) {
			memcpy(all + (*tasks)[t].at + (*tasks)[t].len, text + pos + skip, add);
			all[(*tasks)[t].at + (*tasks)[t].len + add] = '\n';
		}
		(*tasks)[t].len += add + 1;
		pos = end + 1;
	}
	return 0;
}

/*
 * srun -l output: the lines of several nodes' reports interleaved, each
 * under its task's label. Each task's lines, put back together in one
 * buffer, are read as that task's text ("FILE (srun task N)"; lines
 * counted within it).
 */
static int fleet_read_labelled(struct fleet *fl, const char *source, const char *text, size_t len)
{
	struct fleet_task *tasks = NULL;
	struct fleet_map map = {0};
	int ntasks = 0, cap = 0, ret;
	size_t at = 0;
	char *all = NULL;

	ret = fleet_srun_lines(fl, source, text, len, &tasks, &ntasks, &cap, &map, NULL);
	if (!ret) {
		for (int t = 0; t < ntasks; t++) {
			tasks[t].at = at;
			at += tasks[t].len;
			tasks[t].len = 0;
		}
		ret = fleet_charge(fl, at + FLEET_ALLOC_OVERHEAD);
	}
	if (!ret) {
		all = malloc(at ? at : 1);
		ret = all ? fleet_srun_lines(fl, source, text, len, &tasks, &ntasks, &cap, &map,
					     all)
			  : -ENOMEM;
	}
	fleet_map_free(fl, &map);
	ret = ret == 1 ? DOCTOR_NO_INPUT : ret ? fleet_status(fl, ret, source) : DOCTOR_OK;
	for (int t = 0; t < ntasks && ret == DOCTOR_OK; t++) {
		char name[PATH_MAX + 32];
		const char *kept;

		snprintf(name, sizeof(name), "%s (srun task %d)", source, tasks[t].id);
		ret = fleet_keep(fl, name, &kept);
		ret = ret ? fleet_status(fl, ret, source)
			  : fleet_read_text(fl, kept, all + tasks[t].at, tasks[t].len);
	}
	if (all)
		fleet_uncharge(fl, at + FLEET_ALLOC_OVERHEAD);
	free(all);
	if (cap)
		fleet_uncharge(fl, (size_t)cap * sizeof(*tasks) + FLEET_ALLOC_OVERHEAD);
	free(tasks);
	return ret;
}

/* A file's text: srun -l output (its first line has a task label), or
 * plain reports. source lives to the end. */
static int fleet_read_buffer(struct fleet *fl, const char *source, const char *text, size_t len)
{
	size_t first = 0, skip;

	/* What the reports may take grows with what was read. */
	fl->budget.limit += JSON_BUDGET_PER_BYTE * len;
	while (first < len && isspace((unsigned char)text[first]))
		first++;
	if (first < len && fleet_srun_label(text + first, len - first, &skip) >= 0)
		return fleet_read_labelled(fl, source, text, len);
	return fleet_read_text(fl, source, text, len);
}

/* A file, or standard input for "-": read whole, then fleet_read_buffer. */
static int fleet_read_file(struct fleet *fl, const char *path)
{
	bool is_stdin = !strcmp(path, "-");
	const char *source = is_stdin ? "standard input" : path;
	FILE *f = is_stdin ? stdin : fopen(path, "r");
	size_t len = 0, cap = 0;
	char *text = NULL;
	int ret, err = 0;

	if (!f)
		return fleet_fail(fl, "%s: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (len == cap) {
			char *p = cap < (size_t)FLEET_MAX_INPUT
					  ? realloc(text, cap ? 2 * cap : 65536)
					  : NULL;

			if (!p) {
				err = cap < (size_t)FLEET_MAX_INPUT ? ENOMEM : EFBIG;
				break;
			}
			text = p;
			cap = cap ? 2 * cap : 65536;
		}
		got = fread(text + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f))
				err = errno ? errno : EIO;
			break;
		}
	}
	if (!is_stdin)
		fclose(f);
	if (err) {
		free(text);
		return err == ENOMEM  ? fleet_status(fl, -ENOMEM, source)
		       : err == EFBIG ? fleet_fail(fl, "%s: larger than %ld MiB: not a report",
						   source, FLEET_MAX_INPUT >> 20)
				      : fleet_fail(fl, "%s: %s", source, strerror(err));
	}
	ret = fleet_read_buffer(fl, source, text, len);
	free(text);
	return ret;
}

/* ---- each node's attributes ---- */

static bool fleet_compares(const struct fleet_node *n, enum fleet_kind kind)
{
	return kind == FLEET_ALL || n->report[kind];
}

static bool fleet_same_key(const void *ctx, uint32_t id)
{
	const struct fleet_lookup *l = ctx;

	return !strcmp(l->fl->keys[id].name, l->name);
}

/* The key of that name; -1 when there is none. */
static int fleet_key_find(const struct fleet *fl, const char *name)
{
	struct fleet_lookup l = {fl, name};

	return fleet_map_find(&fl->key_map, fleet_hash(name), fleet_same_key, &l);
}

/* Node node's value of attribute name (copy: FLEET_COPY_*). The nodes put
 * theirs in node order, each all at once. */
static int fleet_put(struct fleet *fl, int node, enum fleet_kind kind, const char *absent,
		     const char *name, const char *value, int copy)
{
	struct fleet_lookup l = {fl, name};
	uint32_t h = fleet_hash(name);
	int k = fleet_map_find(&fl->key_map, h, fleet_same_key, &l), ret;
	struct fleet_key *key;
	struct fleet_val *v;

	if (k < 0) {
		ret = fleet_grow(fl, &fl->keys, &fl->keys_cap, fl->nkeys, sizeof(*fl->keys));
		if (!ret && (copy & FLEET_COPY_NAME))
			ret = fleet_keep(fl, name, &name);
		if (!ret)
			ret = fleet_map_add(fl, &fl->key_map, h, (uint32_t)fl->nkeys);
		if (ret)
			return ret;
		k = fl->nkeys++;
		fl->keys[k] = (struct fleet_key){
			.name = name, .kind = kind, .absent = absent, .head = -1, .tail = -1};
	}
	key = &fl->keys[k];
	/* Only between the nodes that have its report. A report listing one
	 * port twice: the first stands. */
	if (!fleet_compares(&fl->nodes[node], key->kind) ||
	    (key->tail >= 0 && fl->vals[key->tail].node == node))
		return 0;
	ret = fleet_grow(fl, &fl->vals, &fl->vals_cap, fl->nvals, sizeof(*fl->vals));
	if (!ret && (copy & FLEET_COPY_VALUE))
		ret = fleet_keep(fl, value, &value);
	if (ret)
		return ret;
	v = &fl->vals[fl->nvals];
	*v = (struct fleet_val){.node = node, .next = -1, .value = value};
	if (key->tail >= 0)
		fl->vals[key->tail].next = fl->nvals;
	else
		key->head = fl->nvals;
	key->tail = fl->nvals++;
	return 0;
}

/* A scalar as text; NULL when v is missing. */
static const char *fleet_text(const struct json_value *v)
{
	if (!v)
		return NULL;
	switch (v->type) {
	case JSON_STRING:
	case JSON_NUMBER: return v->text;
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	case JSON_NULL: return "null";
	case JSON_ARRAY: return "(a list)";
	default: return "(an object)";
	}
}

/* fleet_text(v), or fallback when v is missing or null. */
static const char *fleet_or(const struct json_value *v, const char *fallback)
{
	return v && v->type != JSON_NULL ? fleet_text(v) : fallback;
}

static const struct json_value *fleet_list(const struct json_value *obj, const char *key)
{
	const struct json_value *v = json_get(obj, key);

	return v && v->type == JSON_ARRAY ? v : NULL;
}

static long fleet_number(const struct json_value *v)
{
	return v && v->type == JSON_NUMBER ? strtol(v->text, NULL, 10) : 0;
}

static void fleet_bytes(const struct json_value *v, char *buf, size_t len)
{
	unsigned long long b;

	if (!v || v->type != JSON_NUMBER) {
		snprintf(buf, len, "%s", fleet_or(v, "unknown"));
		return;
	}
	if (v->text[0] == '-') { /* not a size: as written */
		snprintf(buf, len, "%s bytes", v->text);
		return;
	}
	b = strtoull(v->text, NULL, 10);
	if (b && !(b & ((1ULL << 30) - 1)))
		snprintf(buf, len, "%llu GiB", b >> 30);
	else if (b && !(b & ((1ULL << 20) - 1)))
		snprintf(buf, len, "%llu MiB", b >> 20);
	else
		snprintf(buf, len, "%llu bytes", b);
}

/* What "mlx5_0 GDR" holds: "direct", "staged", "direct, degraded: ACS IOMMU". */
static void fleet_verdict(const struct json_value *nic, char *buf, size_t len)
{
	const struct json_value *deg = fleet_list(nic, "degraded");
	size_t n = (size_t)snprintf(buf, len, "%s", fleet_or(json_get(nic, "verdict"), "unknown"));

	for (int i = 0; deg && i < deg->n && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s",
				      i ? " " : ", degraded: ", fleet_or(&deg->items[i], "?"));
}

static void fleet_nccl_version(long code, char *buf, size_t len)
{
	long base = code >= 10000 ? 10000 : 1000;

	if (code > 0)
		snprintf(buf, len, "%ld.%ld.%ld", code / base, code % base / 100, code % 100);
	else
		snprintf(buf, len, "unknown");
}

#define FLEET_PUT(kind, absent, name, value, copy)                                   \
	do {                                                                         \
		int put_ret_ = fleet_put(fl, node, kind, absent, name, value, copy); \
		if (put_ret_)                                                        \
			return put_ret_;                                             \
	} while (0)

static int fleet_check_nccl(struct fleet *fl, int node, const struct json_value *nccl)
{
	const char *path = json_string(json_get(nccl, "plugin_path"));
	char buf[64];

	/* null: check read a facts file, not this machine's NCCL. */
	if (!nccl || nccl->type != JSON_OBJECT)
		return 0;
	if (json_get(nccl, "found") && json_get(nccl, "found")->type == JSON_TRUE)
		fleet_nccl_version(fleet_number(json_get(nccl, "version_code")), buf, sizeof(buf));
	else
		snprintf(buf, sizeof(buf), "not found");
	FLEET_PUT(FLEET_CHECK, "(not checked)", "NCCL version", buf, FLEET_COPY_VALUE);
	FLEET_PUT(FLEET_CHECK, "(not checked)", "NCCL_NET_PLUGIN",
		  fleet_or(json_get(nccl, "nccl_net_plugin"), "(unset)"), 0);
	FLEET_PUT(FLEET_CHECK, "(not checked)", "plugin file", path ? path : "not found", 0);
	FLEET_PUT(FLEET_CHECK, "(not checked)", "plugin version",
		  fleet_or(json_get(nccl, "plugin_version"), path ? "older than 0.2.0" : "none"),
		  0);
	FLEET_PUT(FLEET_CHECK, "(not checked)", "wire protocol",
		  fleet_or(json_get(nccl, "plugin_wire"), "unknown"), 0);
	return 0;
}

static int fleet_check_host(struct fleet *fl, int node, const struct json_value *c)
{
	const struct json_value *host = json_get(c, "host");
	const struct json_value *peermem = json_get(host, "peermem"),
				*cuda = json_get(host, "cuda");
	const char *state = json_string(json_get(cuda, "state"));
	char buf[64];

	FLEET_PUT(FLEET_CHECK, "(none)", "check status", fleet_or(json_get(c, "status"), "unknown"),
		  0);
	FLEET_PUT(FLEET_CHECK, "(none)", "GDR policy", fleet_or(json_get(c, "policy"), "unknown"),
		  0);
	FLEET_PUT(FLEET_CHECK, "(none)", "GDR level",
		  fleet_or(json_get(host, "gdr_level"), "unknown"), 0);
	FLEET_PUT(FLEET_CHECK, "(none)", "kernel", fleet_or(json_get(host, "kernel"), "unknown"),
		  0);
	fleet_bytes(json_get(host, "memlock"), buf, sizeof(buf));
	FLEET_PUT(FLEET_CHECK, "(none)", "memlock", buf, FLEET_COPY_VALUE);
	FLEET_PUT(FLEET_CHECK, "(none)", "peer memory",
		  json_get(peermem, "loaded") && json_get(peermem, "loaded")->type == JSON_TRUE
			  ? fleet_or(json_get(peermem, "module"), "loaded")
			  : "not loaded",
		  0);
	if (state && !strcmp(state, "ok")) {
		long v = fleet_number(json_get(cuda, "version"));

		snprintf(buf, sizeof(buf), "%ld.%ld", v / 1000, v % 1000 / 10);
	} else {
		snprintf(buf, sizeof(buf), "%s", state ? state : "unknown");
	}
	FLEET_PUT(FLEET_CHECK, "(none)", "CUDA driver", buf, FLEET_COPY_VALUE);
	return fleet_check_nccl(fl, node, json_get(c, "nccl"));
}

/* "mlx5_0 port 1", the prefix of a port's attributes. */
static void fleet_port_name(const struct json_value *p, char *buf, size_t len)
{
	snprintf(buf, len, "%.63s port %.8s", fleet_or(json_get(p, "device"), "?"),
		 fleet_or(json_get(p, "port"), "?"));
}

/* What each port's connections get (check's fabric part): a node whose
 * firmware refuses relaxed ordering, or lacks ECE, is as odd as one with
 * another MTU. */
static int fleet_check_fabric(struct fleet *fl, int node, const struct json_value *f)
{
	const struct json_value *ports = fleet_list(f, "ports");
	char name[FLEET_NAME_LEN];

	if (!f)
		return 0; /* a report written before the fabric part */
	FLEET_PUT(FLEET_CHECK, "(none)", "QPs per connection",
		  fleet_or(json_get(f, "qps_per_connection"), "unknown"), 0);
	FLEET_PUT(FLEET_CHECK, "(none)", "failover", fleet_or(json_get(f, "failover"), "unknown"),
		  0);
	for (int i = 0; ports && i < ports->n; i++) {
		const struct json_value *p = &ports->items[i];
		char port[96];

		fleet_port_name(p, port, sizeof(port));
		snprintf(name, sizeof(name), "%s adaptive routing", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "adaptive_routing"), "unknown"), FLEET_COPY_NAME);
		snprintf(name, sizeof(name), "%s relaxed ordering", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "relaxed_ordering"), "unknown"), FLEET_COPY_NAME);
		snprintf(name, sizeof(name), "%s ECE", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "ece"), "unknown"), FLEET_COPY_NAME);
	}
	return 0;
}

static int fleet_check_attrs(struct fleet *fl, int node, const struct json_value *c)
{
	const struct json_value *ports = fleet_list(c, "ports"), *nics = fleet_list(c, "nics");
	const struct json_value *gpus = fleet_list(c, "gpus"), *env = json_get(c, "environment");
	char name[FLEET_NAME_LEN], buf[512];
	size_t len = 0;
	int ret;

	ret = fleet_check_host(fl, node, c);
	if (ret)
		return ret;
	buf[0] = '\0';
	for (int i = 0; nics && i < nics->n && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "",
					fleet_or(json_get(&nics->items[i], "name"), "?"));
	FLEET_PUT(FLEET_CHECK, "(none)", "RDMA devices", buf[0] ? buf : "none", FLEET_COPY_VALUE);
	snprintf(buf, sizeof(buf), "%d", gpus ? gpus->n : 0);
	FLEET_PUT(FLEET_CHECK, "(none)", "GPUs", buf, FLEET_COPY_VALUE);
	for (int i = 0; ports && i < ports->n; i++) {
		const struct json_value *p = &ports->items[i];
		char port[96];

		fleet_port_name(p, port, sizeof(port));
		snprintf(name, sizeof(name), "%s state", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "state"), "unknown"), FLEET_COPY_NAME);
		snprintf(name, sizeof(name), "%s link layer", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "link_layer"), "unknown"), FLEET_COPY_NAME);
		snprintf(name, sizeof(name), "%s rate", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "rate"), "unknown"), FLEET_COPY_NAME);
		snprintf(name, sizeof(name), "%s GID type", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "gid_type"), "none"), FLEET_COPY_NAME);
		snprintf(name, sizeof(name), "%s MTU", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "active_mtu"), "unknown"), FLEET_COPY_NAME);
	}
	for (int i = 0; nics && i < nics->n; i++) {
		const struct json_value *nic = &nics->items[i],
					*probe = json_get(nic, "dmabuf_probe");
		const char *dev = fleet_or(json_get(nic, "name"), "?");

		if (!probe || probe->type == JSON_NULL)
			snprintf(buf, sizeof(buf), "not probed");
		else
			snprintf(buf, sizeof(buf), "%s (%s)",
				 probe->type == JSON_TRUE ? "ok" : "refused",
				 fleet_or(json_get(nic, "dmabuf_errno"), "?"));
		snprintf(name, sizeof(name), "%.63s DMA-BUF", dev);
		FLEET_PUT(FLEET_CHECK, "(no such NIC)", name, buf,
			  FLEET_COPY_NAME | FLEET_COPY_VALUE);
		fleet_verdict(nic, buf, sizeof(buf));
		snprintf(name, sizeof(name), "%.63s GDR", dev);
		FLEET_PUT(FLEET_CHECK, "(no such NIC)", name, buf,
			  FLEET_COPY_NAME | FLEET_COPY_VALUE);
	}
	for (int i = 0; env && env->type == JSON_OBJECT && i < env->n; i++)
		FLEET_PUT(FLEET_CHECK, "(unset)", env->items[i].key, fleet_or(&env->items[i], ""),
			  0);
	return fleet_check_fabric(fl, node, json_get(c, "fabric"));
}

/* Each GPU's path class to each NIC, from the GPUs' nearest-first lists:
 * (pci, nic) to its class, the first that says. */
struct fleet_path {
	const char *pci, *nic, *path;
};

struct fleet_path_lookup {
	const struct fleet_path *paths;
	const char *pci, *nic;
};

static bool fleet_same_path(const void *ctx, uint32_t id)
{
	const struct fleet_path_lookup *l = ctx;

	return (l->paths[id].pci == l->pci || !strcmp(l->paths[id].pci, l->pci)) &&
	       !strcmp(l->paths[id].nic, l->nic);
}

/* A (pci, nic) pair's hash, from its two names' hashes. */
static uint32_t fleet_path_hash(uint32_t pci, uint32_t nic)
{
	return pci * 0x9e3779b1u ^ nic;
}

/* The class a GPU reaches a NIC at; nic_hash: fleet_hash(nic). */
static const char *fleet_topo_path(const struct fleet_map *map, const struct fleet_path *paths,
				   const char *pci, const char *nic, uint32_t nic_hash)
{
	struct fleet_path_lookup l = {paths, pci, nic};
	int i = fleet_map_find(map, fleet_path_hash(fleet_hash(pci), nic_hash), fleet_same_path,
			       &l);

	return i < 0 ? "?" : paths[i].path;
}

struct fleet_name_lookup {
	const char *const *names;
	const char *name;
};

static bool fleet_same_name(const void *ctx, uint32_t id)
{
	const struct fleet_name_lookup *l = ctx;

	return !strcmp(l->names[id], l->name);
}

/* The first of the GPUs' addresses equal to pci, for a pointer to compare
 * in the pairs: a long address written on many GPUs is compared once each. */
static int fleet_topo_pci(struct fleet *fl, const char **pci, const char ***names, int *n, int *cap,
			  struct fleet_map *map)
{
	struct fleet_name_lookup l = {*names, *pci};
	uint32_t h = fleet_hash(*pci);
	int i = fleet_map_find(map, h, fleet_same_name, &l), ret;

	if (i >= 0) {
		*pci = (*names)[i];
		return 0;
	}
	ret = fleet_grow(fl, names, cap, *n, sizeof(**names));
	if (!ret)
		ret = fleet_map_add(fl, map, h, (uint32_t)*n);
	if (!ret)
		(*names)[(*n)++] = *pci;
	return ret;
}

static int fleet_topo_paths(struct fleet *fl, const struct json_value *gpus,
			    struct fleet_path **paths, int *cap, struct fleet_map *map)
{
	struct fleet_map pci_map = {0};
	const char **pcis = NULL;
	int n = 0, npcis = 0, pcis_cap = 0, ret = 0;

	for (int g = 0; !ret && gpus && g < gpus->n; g++) {
		const struct json_value *list = fleet_list(&gpus->items[g], "nics");
		const char *pci = json_string(json_get(&gpus->items[g], "pci"));
		uint32_t pci_hash;

		if (!pci || !list)
			continue;
		ret = fleet_topo_pci(fl, &pci, &pcis, &npcis, &pcis_cap, &pci_map);
		pci_hash = fleet_hash(pci);
		for (int i = 0; !ret && i < list->n; i++) {
			const char *nic = json_string(json_get(&list->items[i], "name"));
			struct fleet_path_lookup l = {*paths, pci, nic};
			uint32_t h;

			if (!nic)
				continue;
			h = fleet_path_hash(pci_hash, fleet_hash(nic));
			if (fleet_map_find(map, h, fleet_same_path, &l) >= 0)
				continue;
			ret = fleet_grow(fl, paths, cap, n, sizeof(**paths));
			if (!ret)
				ret = fleet_map_add(fl, map, h, (uint32_t)n);
			if (!ret)
				(*paths)[n++] = (struct fleet_path){
					pci, nic, fleet_or(json_get(&list->items[i], "path"), "?")};
		}
	}
	fleet_map_free(fl, &pci_map);
	if (pcis_cap)
		fleet_uncharge(fl, (size_t)pcis_cap * sizeof(*pcis) + FLEET_ALLOC_OVERHEAD);
	free(pcis);
	return ret;
}

/* s at the end of the value being built in fl->scratch; false when it no
 * longer fits. */
static bool fleet_cat(struct fleet *fl, size_t *len, const char *s)
{
	size_t n = strlen(s);

	if (n > FLEET_MAX_VALUE - *len)
		return false;
	memcpy(fl->scratch + *len, s, n + 1);
	*len += n;
	return true;
}

/* "mlx5_0 <- 0000:1b:00.0 PIX | mlx5_0+mlx5_1 <- 0000:07:00.0 PXB, ... | mlx5_4",
 * as topo prints the groups. */
static int fleet_topo_attrs(struct fleet *fl, int node, const struct json_value *t)
{
	const struct json_value *groups = fleet_list(t, "groups"), *gpus = fleet_list(t, "gpus");
	struct fleet_path *paths = NULL;
	struct fleet_map map = {0};
	size_t len = 0;
	bool fits = true;
	int cap = 0, ret;

	ret = fleet_topo_paths(fl, gpus, &paths, &cap, &map);
	fl->scratch[0] = '\0';
	for (int i = 0; !ret && fits && groups && i < groups->n; i++) {
		const struct json_value *gn = fleet_list(&groups->items[i], "nics");
		const struct json_value *gg = fleet_list(&groups->items[i], "gpus");
		const char *first = gn && gn->n ? fleet_or(&gn->items[0], "?") : "?";
		uint32_t first_hash = fleet_hash(first);

		fits = fleet_cat(fl, &len, i ? " | " : "");
		for (int k = 0; fits && gn && k < gn->n; k++)
			fits = fleet_cat(fl, &len, k ? "+" : "") &&
			       fleet_cat(fl, &len, fleet_or(&gn->items[k], "?"));
		for (int k = 0; fits && gg && k < gg->n; k++) {
			const char *pci = fleet_or(&gg->items[k], "?");

			fits = fleet_cat(fl, &len, k ? ", " : " <- ") && fleet_cat(fl, &len, pci) &&
			       fleet_cat(fl, &len, " ") &&
			       fleet_cat(fl, &len,
					 fleet_topo_path(&map, paths, pci, first, first_hash));
		}
	}
	if (!ret && !fits)
		ret = -EOVERFLOW;
	if (!ret)
		ret = fleet_put(fl, node, FLEET_TOPO, "(none)", "rail groups",
				len ? fl->scratch : "none", len ? FLEET_COPY_VALUE : 0);
	fleet_map_free(fl, &map);
	if (cap)
		fleet_uncharge(fl, (size_t)cap * sizeof(*paths) + FLEET_ALLOC_OVERHEAD);
	free(paths);
	return ret;
}

static int fleet_attrs(struct fleet *fl, int node)
{
	const struct fleet_node *n = &fl->nodes[node];
	int ret;

	FLEET_PUT(FLEET_ALL, "(none)", "reports",
		  n->report[FLEET_CHECK] && n->report[FLEET_TOPO] ? "check and topo"
		  : n->report[FLEET_CHECK]			  ? "check only"
								  : "topo only",
		  0);
	if (n->report[FLEET_TOPO]) {
		ret = fleet_topo_attrs(fl, node, n->report[FLEET_TOPO]);
		if (ret)
			return ret;
	}
	if (n->report[FLEET_CHECK])
		return fleet_check_attrs(fl, node, n->report[FLEET_CHECK]);
	return 0;
}

/* ---- comparing ---- */

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

/* count zeroed elements of size size, counted: NULL with *ret set on failure. */
static void *fleet_alloc(struct fleet *fl, size_t count, size_t size, int *ret)
{
	void *p;

	*ret = fleet_charge(fl, (count ? count : 1) * size + FLEET_ALLOC_OVERHEAD);
	if (*ret)
		return NULL;
	p = calloc(count ? count : 1, size);
	if (!p)
		*ret = -ENOMEM;
	return p;
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
	while (fl->strings) {
		struct fleet_chunk *next = fl->strings->next;

		free(fl->strings);
		fl->strings = next;
	}
	free(fl->nodes);
	free(fl->keys);
	free(fl->vals);
	free(fl->node_map.slots);
	free(fl->key_map.slots);
	for (int kind = 0; kind < 3; kind++)
		free(fl->with[kind]);
	free(fl->scratch);
	for (int i = 0; i < fl->ndocs; i++)
		json_free(fl->docs[i]);
	free(fl->docs);
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
