/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor fleet's attributes: each node's check and topo reports turned
 * into named values (rail groups, plugin, wire and NCCL versions, each
 * port's GID type, MTU and fabric features, memlock, peer memory, DMA-BUF,
 * GDR verdicts, the NCCL_GDX_* and NCCL_IB_* values), which the command
 * compares between the nodes.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/doctor/gdx_doctor_fleet_records.h"

/* An attribute's name: a device, a port and what of it. */
#define FLEET_NAME_LEN 192

/* fleet_put's copy: a name or value built in a buffer is copied; one from
 * a report's tree or a constant lives to the end as it is. */
#define FLEET_COPY_NAME	 1
#define FLEET_COPY_VALUE 2

bool fleet_compares(const struct fleet_node *n, enum fleet_kind kind)
{
	return kind == FLEET_ALL || n->report[kind];
}

static bool fleet_same_key(const void *ctx, uint32_t id)
{
	const struct fleet_lookup *l = ctx;

	return !strcmp(l->fl->keys[id].name, l->name);
}

/* The key of that name; -1 when there is none. */
int fleet_key_find(const struct fleet *fl, const char *name)
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

int fleet_attrs(struct fleet *fl, int node)
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
