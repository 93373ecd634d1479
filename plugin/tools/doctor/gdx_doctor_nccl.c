/* SPDX-License-Identifier: MIT */
/*
 * How each NCCL release loads a net plugin: the one table check judges
 * NCCL by (gdx_doctor.h, struct nccl_loader). Facts from NVIDIA/nccl's own
 * loaders at the release tags: src/net.cc up to 2.25, src/plugin/net.cc,
 * src/plugin/plugin_open.cc and src/plugin/net/net_vN.cc from 2.26.
 *  - 2.12 tries ncclNetPlugin_v5, then v4 (v4 through an adapter to v5);
 *  - 2.13 adds v6 (DMA-BUF) before them, and 2.13 to 2.18 try v6, v5, v4;
 *  - 2.19 tries v7, v6, v5: v4 is no longer taken;
 *  - 2.20 to 2.23 v8 first, 2.24 and 2.25 v9, 2.26 and 2.27 v10 (v5 no
 *    longer taken), 2.28 and 2.29 v11, 2.30 v12, each down to v6 (v5 until
 *    2.25);
 *  - up to 2.20 NCCL_NET_PLUGIN=X opens libnccl-net-X.so only; from 2.21 it
 *    opens X as given first (a path, a soname), then libnccl-net-X.so; from
 *    2.28 the second only when X has no '/' and is not itself lib*.so;
 *  - from 2.27 X may be a comma-separated list of plugins, from 2.28 "none"
 *    turns external plugins off;
 *  - unset, every release opens libnccl-net.so;
 *  - NCCL_NET=NAME makes NCCL use the network of that name (its table's
 *    name field, compared without case) and no other.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"

#define V(maj, min) ((maj)*10000 + (min)*100)

static const struct nccl_loader nccl_loaders[] = {
	{0, V(2, 12) - 1, "before 2.12", {0}, false, false, false, false},
	{V(2, 12), V(2, 13) - 1, "2.12", {5, 4}, false, false, false, false},
	{V(2, 13), V(2, 19) - 1, "2.13-2.18", {6, 5, 4}, false, false, false, false},
	{V(2, 19), V(2, 20) - 1, "2.19", {7, 6, 5}, false, false, false, false},
	{V(2, 20), V(2, 21) - 1, "2.20", {8, 7, 6, 5}, false, false, false, false},
	{V(2, 21), V(2, 24) - 1, "2.21-2.23", {8, 7, 6, 5}, true, false, false, false},
	{V(2, 24), V(2, 26) - 1, "2.24-2.25", {9, 8, 7, 6, 5}, true, false, false, false},
	{V(2, 26), V(2, 27) - 1, "2.26", {10, 9, 8, 7, 6}, true, false, false, false},
	{V(2, 27), V(2, 28) - 1, "2.27", {10, 9, 8, 7, 6}, true, false, true, false},
	{V(2, 28), V(2, 30) - 1, "2.28-2.29", {11, 10, 9, 8, 7, 6}, true, true, true, true},
	{V(2, 30), V(2, 30) + 6, "2.30.0-2.30.6", {12, 11, 10, 9, 8, 7, 6}, true, true, true, true},
	/* the RMA plugin loader: v14 and v13 in 2.30.7, v15 from 2.31, v16 from
	 * 2.32.3 (the first 2.32 release); net API unchanged since 2.30 */
	{V(2, 30) + 7,
	 V(2, 31) - 1,
	 "2.30.7-2.30.x",
	 {12, 11, 10, 9, 8, 7, 6},
	 true,
	 true,
	 true,
	 true,
	 {14, 13}},
	{V(2, 31),
	 V(2, 32) - 1,
	 "2.31",
	 {12, 11, 10, 9, 8, 7, 6},
	 true,
	 true,
	 true,
	 true,
	 {15, 14, 13}},
	{V(2, 32),
	 INT_MAX,
	 "2.32",
	 {12, 11, 10, 9, 8, 7, 6},
	 true,
	 true,
	 true,
	 true,
	 {16, 15, 14, 13}},
};

#define NCCL_NLOADERS ((int)(sizeof(nccl_loaders) / sizeof(nccl_loaders[0])))

void nccl_version_split(int code, int *major, int *minor, int *patch)
{
	/* NCCL_VERSION_CODE: 22809 for 2.28.9; before 2.9, 2803 for 2.8.3. */
	int base = code >= 10000 ? 10000 : 1000;

	*major = code / base;
	*minor = code % base / 100;
	*patch = code % 100;
}

const struct nccl_loader *nccl_loader_of(int code)
{
	int major, minor, patch;

	if (code <= 0)
		return NULL;
	nccl_version_split(code, &major, &minor, &patch);
	code = major > 2 ? INT_MAX : V(major, minor) + patch;
	for (int i = 0; i < NCCL_NLOADERS; i++)
		if (code >= nccl_loaders[i].from && code <= nccl_loaders[i].to)
			return &nccl_loaders[i];
	return NULL;
}

const struct nccl_loader *nccl_loader_newest(void)
{
	return &nccl_loaders[NCCL_NLOADERS - 1];
}

bool nccl_loader_newer_than_known(int code)
{
	int major, minor, patch;

	nccl_version_split(code, &major, &minor, &patch);
	return major > 2 || (major == 2 && V(2, minor) > nccl_loader_newest()->from);
}

int nccl_loader_pick(const struct nccl_loader *l, unsigned exported)
{
	for (int i = 0; l && l->tries[i]; i++)
		if (exported & (1u << l->tries[i]))
			return l->tries[i];
	return 0;
}

int nccl_loader_first_taking(unsigned exported)
{
	for (int i = 0; i < NCCL_NLOADERS; i++)
		if (nccl_loader_pick(&nccl_loaders[i], exported))
			return i;
	return -1;
}

const struct nccl_loader *nccl_loader_at(int i)
{
	return i >= 0 && i < NCCL_NLOADERS ? &nccl_loaders[i] : NULL;
}

int nccl_loader_rma_pick(const struct nccl_loader *l, unsigned exported)
{
	for (int i = 0; l && i < 6 && l->rma[i]; i++)
		if (exported & (1u << l->rma[i]))
			return l->rma[i];
	return 0;
}

void nccl_loader_rma_tries(const struct nccl_loader *l, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	if (!l->rma[0]) {
		snprintf(buf, len, "no RMA plugin");
		return;
	}
	for (int i = 0; i < 6 && l->rma[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%sv%d",
					 i ? ", " : "ncclRmaPlugin_", l->rma[i]);
}

/* "ncclNetPlugin_v6, v5, v4", or "ncclNetPlugin_v4 or older" before 2.12. */
void nccl_loader_tries(const struct nccl_loader *l, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	if (!l->tries[0]) {
		snprintf(buf, len, "ncclNetPlugin_v4 or older");
		return;
	}
	for (int i = 0; l->tries[i] && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%sv%d",
					 i ? ", " : "ncclNetPlugin_", l->tries[i]);
}

void nccl_exported_range(unsigned exported, char *buf, size_t len)
{
	int lo = 0, hi = 0;

	for (int v = 1; v < 32; v++)
		if (exported & (1u << v)) {
			lo = lo ? lo : v;
			hi = v;
		}
	if (!lo)
		snprintf(buf, len, "no ncclNetPlugin_vN table");
	else if (lo == hi)
		snprintf(buf, len, "ncclNetPlugin_v%d", lo);
	else
		snprintf(buf, len, "ncclNetPlugin_v%d to v%d", lo, hi);
}

/* A name NCCL 2.28+ also tries as libnccl-net-X.so: no '/', not lib*.so. */
static bool nccl_plain_name(const char *x, size_t len)
{
	if (memchr(x, '/', len))
		return false;
	return !(len > 6 && !strncmp(x, "lib", 3) && !strncmp(x + len - 3, ".so", 3));
}

int nccl_loader_names(const struct nccl_loader *l, const char *entry, size_t len,
		      char names[][NCCL_NAME_MAX], int max)
{
	int n = 0;

	if (!entry) {
		if (max > 0)
			snprintf(names[n++], NCCL_NAME_MAX, "libnccl-net.so");
		return n;
	}
	if (l->as_given && n < max)
		snprintf(names[n++], NCCL_NAME_MAX, "%.*s", (int)len, entry);
	if ((!l->suffix_if_plain || nccl_plain_name(entry, len)) && n < max)
		snprintf(names[n++], NCCL_NAME_MAX, "libnccl-net-%.*s.so", (int)len, entry);
	return n;
}
