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
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gdx_doctor.h"

/* A report is a few KiB; this only stops a wrong file from taking the
 * machine's memory. */
#define FLEET_MAX_INPUT (256L << 20)

/* An attribute's name: a device, a port and what of it. */
#define FLEET_NAME_LEN 192

/* Which report an attribute comes from: it is compared only between the
 * nodes that sent that report ("reports" itself between all). */
enum fleet_kind { FLEET_CHECK, FLEET_TOPO, FLEET_ALL };

static const char *const fleet_kind_names[] = {"check", "topo", "any"};

struct fleet_opts {
	bool json;
};

struct fleet_value {
	int key;
	char *value;
};

struct fleet_node {
	char *name;			    /* the reports' hostname, else where they came from */
	const struct json_value *report[2]; /* check, topo; NULL when none came */
	char *from[2];			    /* "FILE, report N", for messages */
	struct fleet_value *vals;
	int nvals, vals_cap;
};

struct fleet_key {
	char *name;
	enum fleet_kind kind;
	const char *absent; /* what a node that has the report but not this shows */
};

struct fleet {
	struct json_value **docs; /* every document read, freed at the end */
	int ndocs, docs_cap;
	struct fleet_node *nodes;
	int nnodes, nodes_cap;
	struct fleet_key *keys;
	int nkeys, keys_cap;
	int nreports[2];
};

/* An attribute that is not the same on every node that has its report. */
struct fleet_diff {
	int key;
	int majority; /* a node holding the majority value */
	int count;    /* how many nodes hold it */
	int compared; /* how many nodes have the report */
	bool tie;     /* another value is held by as many */
};

static int fleet_on_opt(void *ctx, int key, const char *arg)
{
	struct fleet_opts *o = ctx;

	(void)arg;
	if (key == 'j')
		o->json = true;
	return DOCTOR_OK;
}

/* Room for one more element of size size in *arr (n used of *cap). */
static int fleet_grow(void *arr, int *cap, int n, size_t size)
{
	void **a = arr, *p;
	int ncap;

	if (n < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 16;
	p = realloc(*a, (size_t)ncap * size);
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = ncap;
	return 0;
}

static int fleet_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fleet_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("gdx-doctor fleet: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return DOCTOR_NO_INPUT;
}

static int fleet_nomem(void)
{
	fprintf(stderr, "gdx-doctor fleet: out of memory\n");
	return DOCTOR_ERROR;
}

/* ---- reading the reports ---- */

static const char *fleet_type_name(enum json_type t)
{
	static const char *const names[] = {"null",	"false",    "true",	"a number",
					    "a string", "an array", "an object"};

	return names[t];
}

static struct fleet_node *fleet_node(struct fleet *fl, const char *name)
{
	struct fleet_node *n;

	for (int i = 0; i < fl->nnodes; i++)
		if (!strcmp(fl->nodes[i].name, name))
			return &fl->nodes[i];
	if (fleet_grow(&fl->nodes, &fl->nodes_cap, fl->nnodes, sizeof(*fl->nodes)))
		return NULL;
	n = &fl->nodes[fl->nnodes];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	if (!n->name)
		return NULL;
	fl->nnodes++;
	return n;
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
	struct fleet_node *n;
	char from[PATH_MAX + 64];
	int kind;

	snprintf(from, sizeof(from), "%s, report %d", source, ordinal);
	if (doc->type != JSON_OBJECT)
		return fleet_fail("%s: %s, not a report (a JSON object)", from,
				  fleet_type_name(doc->type));
	if (!cmd && json_get(doc, "groups") && json_get(doc, "gpus"))
		cmd = "topo";
	else if (!cmd && json_get(doc, "ports") && json_get(doc, "host"))
		cmd = "check";
	if (!cmd)
		return fleet_fail("%s: neither gdx-doctor check --json nor topo --json output "
				  "(no \"command\" member)",
				  from);
	kind = !strcmp(cmd, "check") ? FLEET_CHECK : !strcmp(cmd, "topo") ? FLEET_TOPO : -1;
	if (kind < 0)
		return fleet_fail("%s: gdx-doctor %s output; fleet reads check --json and "
				  "topo --json",
				  from, cmd);
	n = fleet_node(fl, host && host[0] ? host : source);
	if (!n)
		return fleet_nomem();
	if (n->report[kind])
		return fleet_fail("%s: a second %s report for node %s (the first: %s)", from, cmd,
				  n->name, n->from[kind]);
	n->report[kind] = doc;
	n->from[kind] = strdup(from);
	if (!n->from[kind])
		return fleet_nomem();
	fl->nreports[kind]++;
	return DOCTOR_OK;
}

/* Every JSON value in text: a report, or a list of reports (jq -s). */
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
		ret = json_parse(text, len, &pos, NULL, &doc, why, sizeof(why));
		if (ret == -ENOMEM)
			return fleet_nomem();
		if (ret)
			return fleet_fail("%s: not a gdx-doctor report: %s", source, why);
		if (fleet_grow(&fl->docs, &fl->docs_cap, fl->ndocs, sizeof(*fl->docs))) {
			json_free(doc);
			return fleet_nomem();
		}
		fl->docs[fl->ndocs++] = doc;
		if (doc->type == JSON_ARRAY && !doc->n)
			return fleet_fail("%s: an empty list: no report in it", source);
		for (int i = 0; i < (doc->type == JSON_ARRAY ? doc->n : 1); i++) {
			ret = fleet_add_report(fl, source, ++ordinal,
					       doc->type == JSON_ARRAY ? &doc->items[i] : doc);
			if (ret != DOCTOR_OK)
				return ret;
		}
	}
	if (!ordinal)
		return fleet_fail("%s: no report in it (empty)", source);
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

struct fleet_task {
	int id;
	char *text;
	size_t len, cap;
};

/*
 * srun -l output: the lines of several nodes' reports interleaved, each
 * under its task's label. Each task's lines, put back together, are read as
 * that task's text ("FILE (srun task N)"; lines counted within it).
 */
static int fleet_read_labelled(struct fleet *fl, const char *source, const char *text, size_t len)
{
	struct fleet_task *tasks = NULL;
	int ntasks = 0, cap = 0, ret = DOCTOR_OK, lineno = 0;

	for (size_t pos = 0; pos < len && ret == DOCTOR_OK;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, skip = 0, add;
		int id = fleet_srun_label(text + pos, end - pos, &skip), t;

		lineno++;
		if (end == pos) { /* an empty line between labelled ones */
			pos = end + 1;
			continue;
		}
		if (id < 0) {
			ret = fleet_fail(
				"%s: line %d has no srun task label, the first line has one "
				"(srun -l output: every line needs its label)",
				source, lineno);
			break;
		}
		for (t = 0; t < ntasks && tasks[t].id != id; t++)
			;
		if (t == ntasks) {
			if (fleet_grow(&tasks, &cap, ntasks, sizeof(*tasks))) {
				ret = fleet_nomem();
				break;
			}
			tasks[ntasks++] = (struct fleet_task){.id = id};
		}
		add = end - pos - skip + 1;
		if (tasks[t].len + add > tasks[t].cap) {
			size_t ncap = (tasks[t].len + add) * 2;
			char *p = realloc(tasks[t].text, ncap);

			if (!p) {
				ret = fleet_nomem();
				break;
			}
			tasks[t].text = p;
			tasks[t].cap = ncap;
		}
		memcpy(tasks[t].text + tasks[t].len, text + pos + skip, add - 1);
		tasks[t].len += add;
		tasks[t].text[tasks[t].len - 1] = '\n';
		pos = end + 1;
	}
	for (int t = 0; t < ntasks && ret == DOCTOR_OK; t++) {
		char name[PATH_MAX + 32];

		snprintf(name, sizeof(name), "%s (srun task %d)", source, tasks[t].id);
		ret = fleet_read_text(fl, name, tasks[t].text, tasks[t].len);
	}
	for (int t = 0; t < ntasks; t++)
		free(tasks[t].text);
	free(tasks);
	return ret;
}

/* A file, or standard input for "-": read whole, then told srun -l output
 * (its first line has a task label) from plain reports. */
static int fleet_read_file(struct fleet *fl, const char *path)
{
	bool is_stdin = !strcmp(path, "-");
	const char *source = is_stdin ? "standard input" : path;
	FILE *f = is_stdin ? stdin : fopen(path, "r");
	size_t len = 0, cap = 0, first = 0, skip;
	char *text = NULL;
	int ret, err = 0;

	if (!f)
		return fleet_fail("%s: %s", path, strerror(errno));
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
	if (err == ENOMEM) {
		free(text);
		return fleet_nomem();
	}
	if (err) {
		free(text);
		return err == EFBIG ? fleet_fail("%s: larger than %ld MiB: not a report", source,
						 FLEET_MAX_INPUT >> 20)
				    : fleet_fail("%s: %s", source, strerror(err));
	}
	while (first < len && isspace((unsigned char)text[first]))
		first++;
	if (first < len && fleet_srun_label(text + first, len - first, &skip) >= 0)
		ret = fleet_read_labelled(fl, source, text, len);
	else
		ret = fleet_read_text(fl, source, text, len);
	free(text);
	return ret;
}

/* ---- each node's attributes ---- */

static int fleet_put(struct fleet *fl, struct fleet_node *n, enum fleet_kind kind,
		     const char *absent, const char *name, const char *value)
{
	int k;

	for (k = 0; k < fl->nkeys && strcmp(fl->keys[k].name, name); k++)
		;
	if (k == fl->nkeys) {
		if (fleet_grow(&fl->keys, &fl->keys_cap, fl->nkeys, sizeof(*fl->keys)))
			return -ENOMEM;
		fl->keys[k] =
			(struct fleet_key){.name = strdup(name), .kind = kind, .absent = absent};
		if (!fl->keys[k].name)
			return -ENOMEM;
		fl->nkeys++;
	}
	/* A report listing one port twice: the first stands. */
	for (int i = 0; i < n->nvals; i++)
		if (n->vals[i].key == k)
			return 0;
	if (fleet_grow(&n->vals, &n->vals_cap, n->nvals, sizeof(*n->vals)))
		return -ENOMEM;
	n->vals[n->nvals].key = k;
	n->vals[n->nvals].value = strdup(value);
	if (!n->vals[n->nvals].value)
		return -ENOMEM;
	n->nvals++;
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

#define FLEET_PUT(kind, absent, name, value)                     \
	do {                                                     \
		if (fleet_put(fl, n, kind, absent, name, value)) \
			return -ENOMEM;                          \
	} while (0)

static int fleet_check_nccl(struct fleet *fl, struct fleet_node *n, const struct json_value *nccl)
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
	FLEET_PUT(FLEET_CHECK, "(not checked)", "NCCL version", buf);
	FLEET_PUT(FLEET_CHECK, "(not checked)", "NCCL_NET_PLUGIN",
		  fleet_or(json_get(nccl, "nccl_net_plugin"), "(unset)"));
	FLEET_PUT(FLEET_CHECK, "(not checked)", "plugin file", path ? path : "not found");
	FLEET_PUT(FLEET_CHECK, "(not checked)", "plugin version",
		  fleet_or(json_get(nccl, "plugin_version"), path ? "older than 0.2.0" : "none"));
	FLEET_PUT(FLEET_CHECK, "(not checked)", "wire protocol",
		  fleet_or(json_get(nccl, "plugin_wire"), "unknown"));
	return 0;
}

static int fleet_check_host(struct fleet *fl, struct fleet_node *n, const struct json_value *c)
{
	const struct json_value *host = json_get(c, "host");
	const struct json_value *peermem = json_get(host, "peermem"),
				*cuda = json_get(host, "cuda");
	const char *state = json_string(json_get(cuda, "state"));
	char buf[64];

	FLEET_PUT(FLEET_CHECK, "(none)", "check status",
		  fleet_or(json_get(c, "status"), "unknown"));
	FLEET_PUT(FLEET_CHECK, "(none)", "GDR policy", fleet_or(json_get(c, "policy"), "unknown"));
	FLEET_PUT(FLEET_CHECK, "(none)", "GDR level",
		  fleet_or(json_get(host, "gdr_level"), "unknown"));
	FLEET_PUT(FLEET_CHECK, "(none)", "kernel", fleet_or(json_get(host, "kernel"), "unknown"));
	fleet_bytes(json_get(host, "memlock"), buf, sizeof(buf));
	FLEET_PUT(FLEET_CHECK, "(none)", "memlock", buf);
	FLEET_PUT(FLEET_CHECK, "(none)", "peer memory",
		  json_get(peermem, "loaded") && json_get(peermem, "loaded")->type == JSON_TRUE
			  ? fleet_or(json_get(peermem, "module"), "loaded")
			  : "not loaded");
	if (state && !strcmp(state, "ok")) {
		long v = fleet_number(json_get(cuda, "version"));

		snprintf(buf, sizeof(buf), "%ld.%ld", v / 1000, v % 1000 / 10);
	} else {
		snprintf(buf, sizeof(buf), "%s", state ? state : "unknown");
	}
	FLEET_PUT(FLEET_CHECK, "(none)", "CUDA driver", buf);
	return fleet_check_nccl(fl, n, json_get(c, "nccl"));
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
static int fleet_check_fabric(struct fleet *fl, struct fleet_node *n, const struct json_value *f)
{
	const struct json_value *ports = fleet_list(f, "ports");
	char name[FLEET_NAME_LEN];

	if (!f)
		return 0; /* a report written before the fabric part */
	FLEET_PUT(FLEET_CHECK, "(none)", "QPs per connection",
		  fleet_or(json_get(f, "qps_per_connection"), "unknown"));
	FLEET_PUT(FLEET_CHECK, "(none)", "failover", fleet_or(json_get(f, "failover"), "unknown"));
	for (int i = 0; ports && i < ports->n; i++) {
		const struct json_value *p = &ports->items[i];
		char port[96];

		fleet_port_name(p, port, sizeof(port));
		snprintf(name, sizeof(name), "%s adaptive routing", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "adaptive_routing"), "unknown"));
		snprintf(name, sizeof(name), "%s relaxed ordering", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "relaxed_ordering"), "unknown"));
		snprintf(name, sizeof(name), "%s ECE", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "ece"), "unknown"));
	}
	return 0;
}

static int fleet_check_attrs(struct fleet *fl, struct fleet_node *n, const struct json_value *c)
{
	const struct json_value *ports = fleet_list(c, "ports"), *nics = fleet_list(c, "nics");
	const struct json_value *gpus = fleet_list(c, "gpus"), *env = json_get(c, "environment");
	char name[FLEET_NAME_LEN], buf[512];
	size_t len = 0;

	if (fleet_check_host(fl, n, c))
		return -ENOMEM;
	buf[0] = '\0';
	for (int i = 0; nics && i < nics->n && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? " " : "",
					fleet_or(json_get(&nics->items[i], "name"), "?"));
	FLEET_PUT(FLEET_CHECK, "(none)", "RDMA devices", buf[0] ? buf : "none");
	snprintf(buf, sizeof(buf), "%d", gpus ? gpus->n : 0);
	FLEET_PUT(FLEET_CHECK, "(none)", "GPUs", buf);
	for (int i = 0; ports && i < ports->n; i++) {
		const struct json_value *p = &ports->items[i];
		char port[96];

		fleet_port_name(p, port, sizeof(port));
		snprintf(name, sizeof(name), "%s state", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "state"), "unknown"));
		snprintf(name, sizeof(name), "%s link layer", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "link_layer"), "unknown"));
		snprintf(name, sizeof(name), "%s rate", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "rate"), "unknown"));
		snprintf(name, sizeof(name), "%s GID type", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "gid_type"), "none"));
		snprintf(name, sizeof(name), "%s MTU", port);
		FLEET_PUT(FLEET_CHECK, "(no such port)", name,
			  fleet_or(json_get(p, "active_mtu"), "unknown"));
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
		FLEET_PUT(FLEET_CHECK, "(no such NIC)", name, buf);
		fleet_verdict(nic, buf, sizeof(buf));
		snprintf(name, sizeof(name), "%.63s GDR", dev);
		FLEET_PUT(FLEET_CHECK, "(no such NIC)", name, buf);
	}
	for (int i = 0; env && env->type == JSON_OBJECT && i < env->n; i++)
		FLEET_PUT(FLEET_CHECK, "(unset)", env->items[i].key, fleet_or(&env->items[i], ""));
	return fleet_check_fabric(fl, n, json_get(c, "fabric"));
}

/* The class a GPU reaches a NIC at, from the GPU's nearest-first list. */
static const char *fleet_topo_path(const struct json_value *gpus, const char *pci, const char *nic)
{
	for (int g = 0; gpus && g < gpus->n; g++) {
		const struct json_value *list = fleet_list(&gpus->items[g], "nics");
		const char *p = json_string(json_get(&gpus->items[g], "pci"));

		if (!p || strcmp(p, pci))
			continue;
		for (int i = 0; list && i < list->n; i++) {
			const char *name = json_string(json_get(&list->items[i], "name"));

			if (name && !strcmp(name, nic))
				return fleet_or(json_get(&list->items[i], "path"), "?");
		}
	}
	return "?";
}

/* "mlx5_0 <- 0000:1b:00.0 PIX | mlx5_0+mlx5_1 <- 0000:07:00.0 PXB, ... | mlx5_4",
 * as topo prints the groups. */
static int fleet_topo_attrs(struct fleet *fl, struct fleet_node *n, const struct json_value *t)
{
	const struct json_value *groups = fleet_list(t, "groups"), *gpus = fleet_list(t, "gpus");
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int ret;

	if (!f)
		return -ENOMEM;
	for (int i = 0; groups && i < groups->n; i++) {
		const struct json_value *gn = fleet_list(&groups->items[i], "nics");
		const struct json_value *gg = fleet_list(&groups->items[i], "gpus");
		const char *first = gn && gn->n ? fleet_or(&gn->items[0], "?") : "?";

		fputs(i ? " | " : "", f);
		for (int k = 0; gn && k < gn->n; k++)
			fprintf(f, "%s%s", k ? "+" : "", fleet_or(&gn->items[k], "?"));
		for (int k = 0; gg && k < gg->n; k++) {
			const char *pci = fleet_or(&gg->items[k], "?");

			fprintf(f, "%s%s %s", k ? ", " : " <- ", pci,
				fleet_topo_path(gpus, pci, first));
		}
	}
	if (fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	ret = fleet_put(fl, n, FLEET_TOPO, "(none)", "rail groups", len ? text : "none");
	free(text);
	return ret;
}

static int fleet_attrs(struct fleet *fl, struct fleet_node *n)
{
	FLEET_PUT(FLEET_ALL, "(none)", "reports",
		  n->report[FLEET_CHECK] && n->report[FLEET_TOPO] ? "check and topo"
		  : n->report[FLEET_CHECK]			  ? "check only"
								  : "topo only");
	if (n->report[FLEET_TOPO] && fleet_topo_attrs(fl, n, n->report[FLEET_TOPO]))
		return -ENOMEM;
	if (n->report[FLEET_CHECK] && fleet_check_attrs(fl, n, n->report[FLEET_CHECK]))
		return -ENOMEM;
	return 0;
}

/* ---- comparing ---- */

/* A node's value of key k: NULL when it has the report but not the value. */
static const char *fleet_value(const struct fleet_node *n, int k)
{
	for (int i = 0; i < n->nvals; i++)
		if (n->vals[i].key == k)
			return n->vals[i].value;
	return NULL;
}

static bool fleet_compares(const struct fleet_node *n, enum fleet_kind kind)
{
	return kind == FLEET_ALL || n->report[kind];
}

static bool fleet_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Fills d when key k is not the same on every node that has its report. */
static bool fleet_differs(const struct fleet *fl, int k, struct fleet_diff *d)
{
	enum fleet_kind kind = fl->keys[k].kind;
	int distinct = 0;

	*d = (struct fleet_diff){.key = k, .majority = -1};
	for (int i = 0; i < fl->nnodes; i++) {
		const char *v = fleet_value(&fl->nodes[i], k);
		bool seen = false;
		int count = 0;

		if (!fleet_compares(&fl->nodes[i], kind))
			continue;
		d->compared++;
		for (int j = 0; j < i && !seen; j++)
			seen = fleet_compares(&fl->nodes[j], kind) &&
			       fleet_same(fleet_value(&fl->nodes[j], k), v);
		if (seen)
			continue;
		distinct++;
		for (int j = i; j < fl->nnodes; j++)
			count += fleet_compares(&fl->nodes[j], kind) &&
				 fleet_same(fleet_value(&fl->nodes[j], k), v);
		if (count > d->count) {
			d->count = count;
			d->majority = i;
			d->tie = false;
		} else if (count == d->count) {
			d->tie = true;
		}
	}
	return distinct > 1;
}

static const char *fleet_shown(const struct fleet *fl, int k, const char *v)
{
	return v ? v : fl->keys[k].absent;
}

static void fleet_human(const struct fleet *fl, const struct fleet_diff *diffs, int ndiffs, FILE *f)
{
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
		const struct fleet_key *key = &fl->keys[d->key];
		const char *maj = fleet_value(&fl->nodes[d->majority], d->key);

		fprintf(f, "  %s: %s on %d of %d nodes%s", key->name, fleet_shown(fl, d->key, maj),
			d->count, d->compared, d->tie ? " (a tie: no majority)" : "");
		for (int n = 0; n < fl->nnodes; n++) {
			const char *v = fleet_value(&fl->nodes[n], d->key);

			if (fleet_compares(&fl->nodes[n], key->kind) && !fleet_same(v, maj))
				fprintf(f, "; %s: %s", fl->nodes[n].name,
					fleet_shown(fl, d->key, v));
		}
		fputc('\n', f);
	}
	if (!ndiffs)
		fprintf(f, "\nEvery attribute is the same on %s.\n",
			fl->nnodes == 1 ? "the one node (nothing to compare it with)"
					: "all nodes");
	if (fl->nnodes > 1 && !ndiffs && fl->nreports[FLEET_CHECK]) {
		const char *status = NULL;

		/* Consistent: the first node's status is every node's. */
		for (int k = 0; k < fl->nkeys; k++)
			if (!strcmp(fl->keys[k].name, "check status"))
				status = fleet_value(&fl->nodes[0], k);
		if (status && strcmp(status, "healthy"))
			fprintf(f,
				"note: every node's check says %s: see gdx-doctor check on any of "
				"them\n",
				status);
	}
	if (ndiffs)
		fprintf(f, "\nResult: inconsistent, %d attribute(s) differ (exit %d)\n", ndiffs,
			DOCTOR_FLEET_DIFFERS);
	else
		fprintf(f, "\nResult: consistent (exit %d)\n", DOCTOR_OK);
}

static void fleet_json(const struct fleet *fl, const struct fleet_diff *diffs, int ndiffs, FILE *f)
{
	fputs("{\"command\": \"fleet\",\n \"nodes\": [", f);
	for (int i = 0; i < fl->nnodes; i++) {
		const struct fleet_node *n = &fl->nodes[i];

		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "name", n->name);
		fputs(", ", f);
		json_key_str(f, "check", n->from[FLEET_CHECK]);
		fputs(", ", f);
		json_key_str(f, "topo", n->from[FLEET_TOPO]);
		fputs("}", f);
	}
	fprintf(f, "],\n \"attributes\": %d,\n \"differ\": [", fl->nkeys);
	for (int i = 0; i < ndiffs; i++) {
		const struct fleet_diff *d = &diffs[i];
		const struct fleet_key *key = &fl->keys[d->key];
		const char *maj = fleet_value(&fl->nodes[d->majority], d->key);
		int odd = 0;

		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "attribute", key->name);
		fprintf(f, ", \"report\": \"%s\", \"majority\": ", fleet_kind_names[key->kind]);
		if (maj)
			json_str(f, maj);
		else
			fputs("null", f);
		fprintf(f, ", \"majority_nodes\": %d, \"nodes\": %d, \"tie\": %s,\n   \"odd\": [",
			d->count, d->compared, d->tie ? "true" : "false");
		for (int n = 0; n < fl->nnodes; n++) {
			const char *v = fleet_value(&fl->nodes[n], d->key);

			if (!fleet_compares(&fl->nodes[n], key->kind) || fleet_same(v, maj))
				continue;
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

static void fleet_free(struct fleet *fl)
{
	for (int i = 0; i < fl->nnodes; i++) {
		struct fleet_node *n = &fl->nodes[i];

		for (int k = 0; k < n->nvals; k++)
			free(n->vals[k].value);
		free(n->vals);
		free(n->name);
		free(n->from[0]);
		free(n->from[1]);
	}
	free(fl->nodes);
	for (int k = 0; k < fl->nkeys; k++)
		free(fl->keys[k].name);
	free(fl->keys);
	for (int i = 0; i < fl->ndocs; i++)
		json_free(fl->docs[i]);
	free(fl->docs);
}

static int doctor_fleet(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct fleet_opts o = {0};
	struct fleet fl = {0};
	struct fleet_diff *diffs = NULL;
	int ret, ndiffs = 0;

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
	ret = optind == argc ? fleet_read_file(&fl, "-") : DOCTOR_OK;
	for (int i = optind; i < argc && ret == DOCTOR_OK; i++)
		ret = fleet_read_file(&fl, argv[i]);
	if (ret != DOCTOR_OK)
		goto out;
	/* Nodes by name, node2 before node10: the report's order, whatever the files'. */
	qsort(fl.nodes, (size_t)fl.nnodes, sizeof(*fl.nodes), fleet_cmp_node);
	for (int i = 0; i < fl.nnodes && ret == DOCTOR_OK; i++)
		if (fleet_attrs(&fl, &fl.nodes[i]))
			ret = DOCTOR_ERROR;
	diffs = calloc((size_t)fl.nkeys + 1, sizeof(*diffs));
	if (ret != DOCTOR_OK || !diffs) {
		ret = fleet_nomem();
		goto out;
	}
	for (int k = 0; k < fl.nkeys; k++)
		ndiffs += fleet_differs(&fl, k, &diffs[ndiffs]);
	if (o.json)
		fleet_json(&fl, diffs, ndiffs, stdout);
	else
		fleet_human(&fl, diffs, ndiffs, stdout);
	ret = ndiffs ? DOCTOR_FLEET_DIFFERS : DOCTOR_OK;
out:
	free(diffs);
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
