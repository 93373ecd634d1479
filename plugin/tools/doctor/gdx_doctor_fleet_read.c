/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor fleet's input: files or standard input read whole, srun -l's
 * interleaved lines put back together per task, every JSON value read as a
 * report (or a list of them), each report given to its node by the hostname
 * it carries.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/gdx_file.h"

#include "tools/doctor/gdx_doctor_fleet_records.h"

/* A report is a few KiB; this only stops a wrong file from taking the
 * machine's memory. */
#define FLEET_MAX_INPUT (256L << 20)

static const char *fleet_type_name(enum json_type t)
{
	static const char *const names[] = {"null",	"false",    "true",	"a number",
					    "a string", "an array", "an object"};

	return names[t];
}

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

/* Every JSON value in text: a report, or a list of reports (jq -s), each
 * given to fl->on_report when set, else to its node. source lives to the
 * end. */
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
			const struct json_value *report =
				doc->type == JSON_ARRAY ? &doc->items[i] : doc;

			if (ordinal == INT_MAX)
				return fleet_fail(fl, "%s: more than %d reports", source, INT_MAX);
			ordinal++;
			ret = fl->on_report ? fl->on_report(fl, fl->on_report_ctx, source, ordinal,
							    report)
					    : fleet_add_report(fl, source, ordinal, report);
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
int fleet_read_buffer(struct fleet *fl, const char *source, const char *text, size_t len)
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

/* Standard input, read whole: text and len, or an errno. */
static int fleet_read_stdin(char **text_p, size_t *len_p)
{
	size_t len = 0, cap = 0;
	char *text = NULL;

	for (;;) {
		size_t got;

		if (len == cap) {
			char *p = cap < (size_t)FLEET_MAX_INPUT
					  ? realloc(text, cap ? 2 * cap : 65536)
					  : NULL;

			if (!p) {
				free(text);
				return cap < (size_t)FLEET_MAX_INPUT ? ENOMEM : EFBIG;
			}
			text = p;
			cap = cap ? 2 * cap : 65536;
		}
		got = fread(text + len, 1, cap - len, stdin);
		len += got;
		if (got == 0) {
			if (ferror(stdin)) {
				free(text);
				return errno ? errno : EIO;
			}
			break;
		}
	}
	*text_p = text;
	*len_p = len;
	return 0;
}

/* A file, or standard input for "-": read whole, then fleet_read_buffer. A
 * file is another node's report, maybe another user's: read as a hostile
 * input (a FIFO, a device or a directory refused, never waited on). */
int fleet_read_file(struct fleet *fl, const char *path)
{
	bool is_stdin = !strcmp(path, "-");
	const char *source = is_stdin ? "standard input" : path;
	char *text = NULL, why[PATH_MAX + 128];
	size_t len = 0;
	int ret, err;

	if (is_stdin) {
		err = fleet_read_stdin(&text, &len);
	} else {
		err = -gdx_file_read(AT_FDCWD, path, 0, (size_t)FLEET_MAX_INPUT, 0, &text, &len,
				     why, sizeof(why));
		if (err && err != ENOMEM && err != EFBIG)
			return fleet_fail(fl, "%s", why);
	}
	if (err)
		return err == ENOMEM  ? fleet_status(fl, -ENOMEM, source)
		       : err == EFBIG ? fleet_fail(fl, "%s: larger than %ld MiB: not a report",
						   source, FLEET_MAX_INPUT >> 20)
				      : fleet_fail(fl, "%s: %s", source, strerror(err));
	ret = fleet_read_buffer(fl, source, text, len);
	free(text);
	return ret;
}
