/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check (the default): judges GPUDirect RDMA end to end, and
 * whether NCCL would load the plugin, as each release's loader does
 * (gdx_doctor_nccl.c); its exit status is the verdict: 0 healthy, 1
 * degraded (0 with --allow-degraded), 2 broken (gdx_doctor.h's table). NCCL
 * that will not load the plugin is broken: the job runs on another
 * transport, or stops.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <gdx/gdx_env.h>
#include <gdx/gdx_gdr.h>
#include <gdx/gdx_gdr_facts.h>
#include <gdx/gdx_gdr_verdict.h>
#include <gdx/gdx_gid.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>
#include <gdx/gdx_sysfs.h>
#include <gdx/gdx_topo.h>
#include <gdx/gdx_wire.h>
#include <nccl/net_common.h>

#include "gdx_doctor.h"

/*
 * One pass over everything GPUDirect RDMA needs, from the plugin's own
 * probes (gdx_gdr.h): RDMA ports, memlock, peer memory, DMA-BUF, the CUDA
 * driver and GPUs, every GPU-NIC path, and the NCCL that would load the
 * plugin. The status is the worst problem found: healthy, degraded, broken.
 * Tests point --sysfs-root and --xml at fixtures, and GDX_GDR_FACTS at a
 * facts file standing in for CUDA, uname, getrlimit and the DMA-BUF probe.
 */

#define CHECK_MAX_PORTS	   256
#define CHECK_MAX_PROBLEMS 256

struct check_opts {
	const char *sysfs_root;
	const char *xml;
	const char *hostname; /* --hostname */
	bool json;
	bool allow_degraded; /* a degraded node exits 0 */
};

struct check_port {
	char dev[GDX_TOPO_NAME_LEN];
	int port;
	char state[32]; /* "ACTIVE", "DOWN" */
	bool active;
	char link[24]; /* "InfiniBand", "Ethernet" */
	char rate[64];
	int ngids, nv2; /* configured GIDs, and of them RoCE v2 */
	char gid[64];	/* the one the plugin would choose, "" when none */
	int gid_roce;	/* its RoCE version (1 also for InfiniBand's), 0 when none */
	int mtu;	/* the active MTU in bytes; 0 when not queried (a fixture tree) */
};

struct check_problem {
	enum gdx_gdr_level level; /* OK: a note */
	char text[GDX_GDR_LINE_LEN];
};

struct check_nccl {
	bool found, in_path;
	char path[PATH_MAX];
	int version;			  /* NCCL_VERSION_CODE, 0 when unknown */
	const struct nccl_loader *loader; /* how it loads plugins; NULL: no NCCL, no version */
	const struct nccl_loader *judged; /* the row judged by: loader, else the newest */
	const char *plugin_env;		  /* NCCL_NET_PLUGIN, NULL when unset or empty */
	const char *net_env;		  /* NCCL_NET, NULL when unset or empty */
	/* The library NCCL would open for NCCL_NET_PLUGIN, whichever it is. */
	char lib_path[PATH_MAX];       /* "" when none opens */
	char lib_net[64];	       /* the name in its table, "GDX" for this plugin */
	unsigned lib_exported;	       /* its ncclNetPlugin_vN, bit N */
	char tried[2 * NCCL_NAME_MAX]; /* the names NCCL tries, "gdx, then libnccl-net-gdx.so" */
	char load_error[512];	       /* a file found that dlopen refuses, and why */
	char first_other[PATH_MAX];    /* 2.27+ lists: another plugin listed before this one */
	bool ours;		       /* lib_path is this plugin */
	int api;		       /* the ncclNetPlugin_vN NCCL loads of this plugin, 0 none */
	char plugin_path[PATH_MAX];    /* lib_path when ours, else "" */
	char plugin_version[32];       /* from its INIT line's text, "" when it has none */
	int plugin_wire;	       /* its wire protocol version, 0 when unknown */
};

struct check {
	const char *source;
	enum gdx_gdr_policy policy;
	const char *policy_env;
	struct gdx_gdr_probe *p;
	struct check_port ports[CHECK_MAX_PORTS];
	int nports;
	struct gdx_gdr_verdict *nic_v;	/* per NIC */
	struct gdx_gdr_verdict *pair_v; /* [gpu * nnics + nic] */
	struct check_nccl nccl;
	bool nccl_checked;
	struct check_problem problems[CHECK_MAX_PROBLEMS];
	int nproblems;
	enum gdx_gdr_level status;
	int exit; /* the exit status: status's, 0 for degraded with --allow-degraded */
	/* This machine, live: its devices probed, its NCCL judged. A saved
	 * tree (--sysfs-root) or a facts file stands for another node. */
	bool live;
	const char *hostname; /* the node's name, NULL when unknown */
	char host_buf[256];
};

static void check_problem(struct check *c, enum gdx_gdr_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void check_problem(struct check *c, enum gdx_gdr_level level, const char *fmt, ...)
{
	struct check_problem *pr;
	va_list ap;

	if (level > c->status)
		c->status = level;
	if (c->nproblems == CHECK_MAX_PROBLEMS)
		return;
	pr = &c->problems[c->nproblems++];
	pr->level = level;
	va_start(ap, fmt);
	vsnprintf(pr->text, sizeof(pr->text), fmt, ap);
	va_end(ap);
}

static int check_on_opt(void *ctx, int key, const char *arg)
{
	struct check_opts *o = ctx;

	switch (key) {
	case 's': o->sysfs_root = arg; break;
	case 'x': o->xml = arg; break;
	case 'j': o->json = true; break;
	case 'a': o->allow_degraded = true; break;
	case 'H': o->hostname = arg; break;
	}
	return DOCTOR_OK;
}

static int check_cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* One port from <root>/class/infiniband/<dev>/ports/<port>/. */
static void check_read_port(struct check *c, const char *dev, int port)
{
	struct gdx_gid_entry *gids = calloc(GDX_GID_TABLE_MAX, sizeof(*gids));
	struct check_port *cp = &c->ports[c->nports++];
	char dir[PATH_MAX], path[PATH_MAX + 32], line[128];
	const char *colon;
	int n, best;

	memset(cp, 0, sizeof(*cp));
	snprintf(cp->dev, sizeof(cp->dev), "%s", dev);
	cp->port = port;
	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/ports/%d", c->p->sysfs_root, dev, port);
	snprintf(path, sizeof(path), "%s/state", dir);
	gdx_sysfs_read_line(path, line, sizeof(line)); /* "4: ACTIVE" */
	colon = strchr(line, ':');
	snprintf(cp->state, sizeof(cp->state), "%.31s", colon ? colon + 2 : line[0] ? line : "?");
	cp->active = atoi(line) == IBV_PORT_ACTIVE;
	snprintf(path, sizeof(path), "%s/link_layer", dir);
	if (gdx_sysfs_read_line(path, cp->link, sizeof(cp->link)))
		snprintf(cp->link, sizeof(cp->link), "?");
	snprintf(path, sizeof(path), "%s/rate", dir);
	if (gdx_sysfs_read_line(path, cp->rate, sizeof(cp->rate)))
		snprintf(cp->rate, sizeof(cp->rate), "?");
	if (!gids)
		return;
	n = gdx_gid_read_table(c->p->sysfs_root, dev, port, gids, GDX_GID_TABLE_MAX);
	for (int i = 0; i < n; i++) {
		if (gdx_gid_is_zero(gids[i].raw))
			continue;
		cp->ngids++;
		cp->nv2 += gids[i].roce_version == 2;
	}
	best = n > 0 ? gdx_gid_choose(gids, n, 4, 2, NULL) : -1;
	if (best >= 0) {
		gdx_gid_str(gids[best].raw, cp->gid, sizeof(cp->gid));
		cp->gid_roce = gids[best].roce_version;
	}
	free(gids);
}

static void check_ports(struct check *c)
{
	for (int i = 0; i < c->p->nnics && c->nports < CHECK_MAX_PORTS; i++) {
		const char *dev = c->p->nics[i].name;
		char path[PATH_MAX];
		int ports[32], n = 0;
		struct dirent *e;
		DIR *d;

		snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports", c->p->sysfs_root, dev);
		d = opendir(path);
		if (!d)
			continue;
		while ((e = readdir(d)) && n < 32)
			if (isdigit((unsigned char)e->d_name[0]))
				ports[n++] = atoi(e->d_name);
		closedir(d);
		qsort(ports, (size_t)n, sizeof(ports[0]), check_cmp_int);
		for (int k = 0; k < n && c->nports < CHECK_MAX_PORTS; k++)
			check_read_port(c, dev, ports[k]);
	}
}

/* The fabric part (gdx_doctor_fabric.c), for the active ports; its probes
 * need the devices, so a fixture tree gets the parameters only. */
static void check_fabric(const struct check *c, FILE *f, bool json)
{
	struct doctor_fabric_port fp[CHECK_MAX_PORTS];
	int n = 0;

	for (int i = 0; i < c->nports; i++) {
		if (!c->ports[i].active)
			continue;
		fp[n].dev = c->ports[i].dev;
		fp[n].port = c->ports[i].port;
		fp[n].ib = !strcmp(c->ports[i].link, "InfiniBand");
		n++;
	}
	doctor_fabric_report(f, json, fp, n, c->live);
}

/* The active MTU the plugin's QPs start from (its path MTU is the smaller of
 * both ends'); sysfs does not have it, only the device does. */
static void check_query_mtu(struct check *c, const char *name, struct ibv_context *ctx)
{
	for (int i = 0; i < c->nports; i++) {
		struct ibv_port_attr pa;

		if (strcmp(c->ports[i].dev, name) ||
		    ibv_query_port(ctx, (uint8_t)c->ports[i].port, &pa))
			continue;
		if (pa.active_mtu >= IBV_MTU_256 && pa.active_mtu <= IBV_MTU_4096)
			c->ports[i].mtu = 128 << pa.active_mtu;
	}
}

/* The DMA-BUF probe needs each device's protection domain, the MTU the
 * device itself: live only. */
static void check_probe_devices(struct check *c)
{
	struct ibv_device **list;
	int n = 0;

	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);
		struct ibv_context *ctx;
		struct ibv_pd *pd;

		if (gdx_gdr_find_nic(c->p, name) < 0)
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			continue;
		check_query_mtu(c, name, ctx);
		pd = ibv_alloc_pd(ctx);
		if (pd) {
			gdx_gdr_probe_nic(c->p, name, pd);
			ibv_dealloc_pd(pd);
		}
		ibv_close_device(ctx);
	}
	if (list)
		ibv_free_device_list(list);
}

/* Opens a library only to read it: NCCL's constructors do not initialize it. */
static void *check_dlopen(const char *name, char *path, size_t len)
{
	void *h = dlopen(name, RTLD_LAZY | RTLD_LOCAL);
	struct link_map *lm;

	if (h && path && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm->l_name)
		snprintf(path, len, "%s", lm->l_name);
	return h;
}

/*
 * The version and wire protocol of a plugin file, read from the text of its
 * INIT line ("NET/GDX plugin: libnccl-net-gdx 0.3.2, wire protocol 4, ..."),
 * which the plugin's format string holds verbatim: nothing of the library
 * runs. Up to 0.3.2 the line began "NET/GDX : " (GDX_LOG_PREFIX_OLD); a
 * plugin older than 0.2.0 has no wire protocol in it.
 */
static void check_plugin_version(struct check_nccl *n)
{
	static const char *const markers[] = {GDX_LOG_PREFIX "libnccl-net-gdx ",
					      GDX_LOG_PREFIX_OLD "libnccl-net-gdx "};
	char buf[1 << 16];
	size_t keep = 0, got;
	FILE *f = fopen(n->plugin_path, "rb");

	if (!f)
		return;
	/* Chunks overlap by a marker's length plus the version's, so that a
	 * line split between two reads is still found. */
	while ((got = fread(buf + keep, 1, sizeof(buf) - 1 - keep, f)) > 0) {
		size_t len = keep + got;

		for (size_t m = 0; m < sizeof(markers) / sizeof(markers[0]); m++) {
			size_t mlen = strlen(markers[m]);
			const char *hit = memmem(buf, len, markers[m], mlen);
			char line[128];

			if (!hit || (size_t)(buf + len - hit) <= mlen + 64)
				continue;
			snprintf(line, sizeof(line), "%.*s", (int)sizeof(line) - 1, hit + mlen);
			if (sscanf(line, "%31[^,], wire protocol %d,", n->plugin_version,
				   &n->plugin_wire) < 1)
				n->plugin_version[0] = '\0';
			goto out;
		}
		keep = len < 160 ? len : 160;
		memmove(buf, buf + len - keep, keep);
	}
out:
	fclose(f);
}

/* src into dst, cut to fit. */
static void check_copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The name of this plugin's network, its tables' first member: what
 * NCCL_NET selects it by. */
#define CHECK_NET_NAME "GDX"

/*
 * The library NCCL opens for one NCCL_NET_PLUGIN entry (NULL: the variable
 * unset), as release l opens it: the first name that dlopen takes, with
 * RTLD_NOW as NCCL; a file found that does not load is recorded, as NCCL
 * logs it. Fills n->lib_*; returns whether a library opened.
 */
static bool check_resolve(struct check_nccl *n, const struct nccl_loader *l, const char *entry,
			  size_t len)
{
	char names[2][NCCL_NAME_MAX];
	int k = nccl_loader_names(l, entry, len, names, 2);

	n->lib_path[0] = n->lib_net[0] = n->load_error[0] = n->tried[0] = '\0';
	n->lib_exported = 0;
	for (int i = 0; i < k; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		const char *e = h ? NULL : dlerror();
		size_t used = strlen(n->tried);
		struct link_map *lm;
		int newest = 0;

		snprintf(n->tried + used, sizeof(n->tried) - used, "%s%s", i ? ", then " : "",
			 names[i]);
		if (!h) {
			/* NCCL's own test: the error names the file and says it is
			 * not there; anything else (a dependency missing, not an
			 * ELF object) is a file that does not load. */
			if (e && !(strstr(e, names[i]) && strstr(e, "No such file")) &&
			    !n->load_error[0])
				snprintf(n->load_error, sizeof(n->load_error), "%s", e);
			continue;
		}
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm->l_name && lm->l_name[0])
			snprintf(n->lib_path, sizeof(n->lib_path), "%s", lm->l_name);
		else
			check_copy(n->lib_path, sizeof(n->lib_path), names[i]);
		for (int v = 2; v <= 30; v++) {
			char sym[32];

			snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
			if (dlsym(h, sym)) {
				n->lib_exported |= 1u << v;
				newest = v;
			}
		}
		if (newest) {
			char sym[32];
			int v = nccl_loader_pick(l, n->lib_exported);
			const char *const *name;

			snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v ? v : newest);
			/* Every version's table starts with its name: data, read
			 * as NCCL reads it for NCCL_NET; nothing of it runs. */
			name = dlsym(h, sym);
			if (name && *name)
				snprintf(n->lib_net, sizeof(n->lib_net), "%.63s", *name);
		}
		/* Never dlclose: a library may not unload cleanly. */
		return true;
	}
	return false;
}

/* NCCL_NET_PLUGIN as release l reads it: one plugin, or from 2.27 a list
 * whose first entry that is this plugin is the one judged. */
static void check_resolve_env(struct check_nccl *n, const struct nccl_loader *l)
{
	const char *v = n->plugin_env;

	n->first_other[0] = '\0';
	if (!v || !l->list || !strchr(v, ',')) {
		check_resolve(n, l, v, v ? strlen(v) : 0);
		n->ours = n->lib_path[0] && !strcmp(n->lib_net, CHECK_NET_NAME);
		return;
	}
	for (const char *e = v;;) {
		size_t len = strcspn(e, ",");

		if (len && check_resolve(n, l, e, len)) {
			n->ours = !strcmp(n->lib_net, CHECK_NET_NAME);
			if (n->ours)
				return;
			if (!n->first_other[0] && nccl_loader_pick(l, n->lib_exported))
				snprintf(n->first_other, sizeof(n->first_other), "%.3900s (%s)",
					 n->lib_path, n->lib_net[0] ? n->lib_net : "?");
		}
		if (!e[len])
			break;
		e += len + 1;
	}
	/* None is this plugin: judge by the first entry. */
	check_resolve(n, l, v, strcspn(v, ","));
	n->ours = false;
}

static void check_nccl(struct check *c)
{
	static const char *const dirs[] = {"/usr/local/cuda/lib64",
					   "/usr/local/cuda/lib",
					   "/usr/lib/x86_64-linux-gnu",
					   "/usr/lib64",
					   "/usr/local/lib",
					   "/opt/nccl/lib"};
	struct check_nccl *n = &c->nccl;
	int (*get_version)(int *);
	char name[PATH_MAX];
	void *h;

	c->nccl_checked = true;
	h = check_dlopen("libnccl.so.2", n->path, sizeof(n->path));
	n->in_path = h != NULL;
	for (size_t i = 0; !h && i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(name, sizeof(name), "%s/libnccl.so.2", dirs[i]);
		if (access(name, F_OK) == 0)
			h = check_dlopen(name, n->path, sizeof(n->path));
	}
	n->found = h != NULL;
	if (h) {
		*(void **)&get_version = dlsym(h, "ncclGetVersion");
		if (get_version && get_version(&n->version) != 0)
			n->version = 0;
		/* Never dlclose: a C++ library may not unload cleanly. */
	}
	n->loader = nccl_loader_of(n->version);
	n->judged = n->loader ? n->loader : nccl_loader_newest();
	n->plugin_env = gdx_env(GDX_ENV_NET_PLUGIN);
	if (n->plugin_env && !n->plugin_env[0])
		n->plugin_env = NULL; /* NCCL takes an empty value as unset */
	n->net_env = getenv("NCCL_NET");
	if (n->net_env && !n->net_env[0])
		n->net_env = NULL;
	if (n->plugin_env && n->judged->none && !strcmp(n->plugin_env, "none"))
		return; /* no external plugin at all */
	check_resolve_env(n, n->judged);
	if (n->ours) {
		n->api = nccl_loader_pick(n->judged, n->lib_exported);
		snprintf(n->plugin_path, sizeof(n->plugin_path), "%s", n->lib_path);
		check_plugin_version(n);
	}
}

/* "2.28.9", or "of unknown version" */
static void check_nccl_name(const struct check_nccl *n, char *buf, size_t len)
{
	int major, minor, patch;

	if (!n->found) {
		snprintf(buf, len, "(none found here: judged as NCCL %s)", n->judged->releases);
		return;
	}
	if (!n->version) {
		snprintf(buf, len, "of unknown version (%s, judged as %s)", n->path,
			 n->judged->releases);
		return;
	}
	nccl_version_split(n->version, &major, &minor, &patch);
	snprintf(buf, len, "%d.%d.%d (%s)", major, minor, patch, n->path);
}

/* Why the library NCCL opens for NCCL_NET_PLUGIN is not this plugin. */
static void check_not_ours(const struct check_nccl *n, char *buf, size_t len)
{
	if (n->load_error[0])
		snprintf(buf, len, "a file there does not load: %s", n->load_error);
	else if (!n->lib_path[0])
		snprintf(buf, len, "and finds no such file in the library path");
	else if (!nccl_loader_pick(n->judged, n->lib_exported))
		snprintf(buf, len, "%s, which has no table NCCL takes", n->lib_path);
	else
		snprintf(buf, len, "%s, another plugin (its network is %s)", n->lib_path,
			 n->lib_net[0] ? n->lib_net : "unnamed");
}

/*
 * NCCL loads this plugin, or will not: every way it will not is broken (the
 * job falls back to NCCL's own transport, or fails with NCCL_NET=GDX), and
 * each says how to fix it.
 */
static void check_nccl_problems(struct check *c)
{
	const struct check_nccl *n = &c->nccl;
	const struct nccl_loader *l = n->judged;
	char nccl[PATH_MAX + 64], why[PATH_MAX + 600], tries[128], has[64];

	check_nccl_name(n, nccl, sizeof(nccl));
	/* The plugin first: whichever NCCL the job brings opens it the same way. */
	if (n->ours && strcmp(n->plugin_version, GDX_VERSION))
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "the plugin NCCL would load (%s) is %s%s, this gdx-doctor %s: its "
			      "checks are this version's",
			      n->plugin_path, n->plugin_version[0] ? "version " : "",
			      n->plugin_version[0] ? n->plugin_version : "older than 0.2.0",
			      GDX_VERSION);
	if (n->plugin_env && l->none && !strcmp(n->plugin_env, "none")) {
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "NCCL_NET_PLUGIN=none: NCCL %s loads no external plugin, so not this "
			      "one; fix: export NCCL_NET_PLUGIN=gdx",
			      nccl);
	} else if (!n->ours && !n->plugin_env) {
		check_not_ours(n, why, sizeof(why));
		check_problem(
			c, GDX_GDR_LEVEL_BROKEN,
			"NCCL_NET_PLUGIN is not set: NCCL %s opens libnccl-net.so %s: it will "
			"not load this plugin; fix: export NCCL_NET_PLUGIN=gdx",
			nccl, why);
	} else if (!n->ours && strchr(n->plugin_env, '/') && !l->as_given) {
		check_problem(
			c, GDX_GDR_LEVEL_BROKEN,
			"NCCL_NET_PLUGIN=%s: NCCL %s takes no path there (NCCL 2.21 and later "
			"do): it opens %s, so it will not load this plugin; fix: "
			"NCCL_NET_PLUGIN=gdx with the plugin's directory in LD_LIBRARY_PATH, "
			"or NCCL 2.21 or later",
			n->plugin_env, nccl, n->tried);
	} else if (!n->ours) {
		check_not_ours(n, why, sizeof(why));
		check_problem(
			c, GDX_GDR_LEVEL_BROKEN,
			"NCCL_NET_PLUGIN=%s does not lead to this plugin: NCCL %s opens %s %s; "
			"fix: %s",
			n->plugin_env, nccl, n->tried, why,
			n->load_error[0] ? "install what it needs (ldd shows what is missing)"
			: n->lib_path[0]
				? "NCCL_NET_PLUGIN=gdx, or the full path of libnccl-net-gdx.so"
				: "add the plugin's directory to LD_LIBRARY_PATH (or give its "
				  "full path, NCCL 2.21 or later)");
	} else if (!n->api) {
		const struct nccl_loader *first =
			nccl_loader_at(nccl_loader_first_taking(n->lib_exported));
		int fmaj = 0, fmin = 0, fpatch;

		if (first)
			nccl_version_split(first->from, &fmaj, &fmin, &fpatch);
		nccl_loader_tries(l, tries, sizeof(tries));
		nccl_exported_range(n->lib_exported, has, sizeof(has));
		check_problem(
			c, GDX_GDR_LEVEL_BROKEN,
			"NCCL %s tries %s, and this plugin (%s) exports %s: NCCL will not load "
			"it; fix: NCCL %d.%d or later",
			nccl, tries, n->plugin_path, has, fmaj, fmin);
	} else if (n->net_env && strcasecmp(n->net_env, n->lib_net)) {
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "NCCL_NET=%s: NCCL uses the network of that name and no other, and "
			      "this plugin's is %s: it will not use it; fix: NCCL_NET=%s, or unset "
			      "NCCL_NET",
			      n->net_env, n->lib_net, n->lib_net);
	}
	if (n->ours && n->first_other[0])
		check_problem(
			c, GDX_GDR_LEVEL_OK,
			"NCCL_NET_PLUGIN lists another plugin first, %s: NCCL takes the first "
			"whose init succeeds and finds devices",
			n->first_other);
	if (n->ours && !n->loader && strchr(n->plugin_env ? n->plugin_env : "", '/'))
		check_problem(
			c, GDX_GDR_LEVEL_OK,
			"NCCL_NET_PLUGIN holds a path, which NCCL takes from 2.21 on (2.20 and "
			"older open libnccl-net-<value>.so only)");
	if (!n->found) {
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "no libnccl.so.2 in the library path or the usual directories (a "
			      "job may bring its own, e.g. in a Python wheel): NCCL judged as %s",
			      l->releases);
		return;
	}
	if (n->version && nccl_loader_newer_than_known(n->version))
		check_problem(
			c, GDX_GDR_LEVEL_OK,
			"NCCL %s is newer than this gdx-doctor knows: judged as NCCL %s loads "
			"plugins",
			nccl, l->releases);
	if (!n->in_path)
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "%s is not in the library path; the job's NCCL may be another one",
			      n->path);
}

static bool check_pair_ok(const struct gdx_gdr_verdict *v)
{
	return v->mode == GDX_GDR_DIRECT && !v->degraded;
}

/* Every GPU should reach its nearest NIC directly and cleanly. */
static void check_gpu_problems(struct check *c)
{
	const struct gdx_gdr_probe *p = c->p;

	for (int g = 0; g < p->ngpus; g++) {
		enum gdx_path best = GDX_PATH_UNKNOWN;
		const struct gdx_gdr_verdict *worst = NULL;
		char text[GDX_GDR_TEXT_LEN];
		int worst_nic = -1;
		bool ok = false;

		if (gdx_gdr_bar1_check(p, g, text, sizeof(text)) != GDX_GDR_LEVEL_OK)
			check_problem(c, GDX_GDR_LEVEL_DEGRADED, "%s", text);
		for (int n = 0; n < p->nnics; n++)
			if (gdx_gdr_path(p, g, n)->cls < best)
				best = gdx_gdr_path(p, g, n)->cls;
		for (int n = 0; n < p->nnics; n++) {
			const struct gdx_gdr_verdict *v = &c->pair_v[g * p->nnics + n];

			if (gdx_gdr_path(p, g, n)->cls != best)
				continue;
			if (check_pair_ok(v))
				ok = true;
			else if (!worst)
				worst = v, worst_nic = n;
			if (gdx_gdr_path(p, g, n)->acs == GDX_GDR_ACS_UNKNOWN)
				check_problem(
					c, GDX_GDR_LEVEL_OK,
					"ACS between GPU %s and %s unknown: bridge %s's config "
					"space beyond 64 bytes is unreadable; run as root",
					p->gpus[g].pci, p->nics[n].name,
					gdx_gdr_path(p, g, n)->acs_bridge);
		}
		if (ok || !worst || c->policy == GDX_GDR_POLICY_OFF)
			continue;
		if (worst->mode == GDX_GDR_DIRECT)
			check_problem(c, GDX_GDR_LEVEL_DEGRADED,
				      "GPU %s and %s (%s): degraded: %s; fix: %s", p->gpus[g].pci,
				      p->nics[worst_nic].name, gdx_path_name(worst->path),
				      worst->degraded_why, worst->fix);
		else
			check_problem(c, GDX_GDR_LEVEL_DEGRADED,
				      "GPU %s is staged through host memory on its nearest NIC %s "
				      "(%s): %s%s%s%s%s",
				      p->gpus[g].pci, p->nics[worst_nic].name,
				      gdx_path_name(worst->path), worst->reason,
				      worst->degraded ? "; " : "", worst->degraded_why,
				      worst->fix[0] ? "; fix: " : "", worst->fix);
	}
}

static void check_port_problems(struct check *c)
{
	int active = 0;

	if (!c->p->nnics) {
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "no RDMA device in %s/class/infiniband; fix: load the NIC's driver "
			      "(mlx5_ib), or create a Soft-RoCE device (rdma link add)",
			      c->p->sysfs_root);
		return;
	}
	for (int i = 0; i < c->nports; i++) {
		const struct check_port *cp = &c->ports[i];

		active += cp->active;
		if (cp->active && !strcmp(cp->link, "Ethernet") && !cp->nv2)
			check_problem(
				c, GDX_GDR_LEVEL_BROKEN,
				"%s port %d: RoCE port without a RoCE v2 GID; fix: give its "
				"netdev an IP address (RoCE v2 GIDs follow the addresses) and "
				"check that RoCE v2 is enabled",
				cp->dev, cp->port);
	}
	if (!active)
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "no active RDMA port; fix: check the cable and the subnet manager "
			      "(InfiniBand) or the netdev's link (RoCE)");
}

static int check_run(struct check *c)
{
	struct gdx_gdr_probe *p = c->p;
	char text[GDX_GDR_TEXT_LEN];

	c->nic_v = calloc((size_t)p->nnics + 1, sizeof(*c->nic_v));
	c->pair_v = calloc((size_t)p->ngpus * (size_t)p->nnics + 1, sizeof(*c->pair_v));
	if (!c->nic_v || !c->pair_v)
		return -ENOMEM;
	check_ports(c);
	check_port_problems(c);
	if (gdx_gdr_memlock_check(p, text, sizeof(text)) != GDX_GDR_LEVEL_OK)
		check_problem(c, GDX_GDR_LEVEL_BROKEN, "%s", text);
	for (int n = 0; n < p->nnics; n++) {
		gdx_gdr_nic_verdict(p, p->nics[n].name, c->policy, &c->nic_v[n]);
		if (c->nic_v[n].mode == GDX_GDR_BROKEN)
			check_problem(c, GDX_GDR_LEVEL_BROKEN, "%s", c->nic_v[n].line);
		for (int g = 0; g < p->ngpus; g++)
			gdx_gdr_pair_verdict(p, g, n, c->policy, &c->pair_v[g * p->nnics + n]);
	}
	check_gpu_problems(c);
	/* The library NCCL would load is this machine's, never a saved tree's
	 * (but a test's, whose facts file says "nccl this-machine"). */
	if (c->live || p->nccl_here) {
		check_nccl(c);
		check_nccl_problems(c);
	}
	return 0;
}

/* ---- output ---- */

static const char *const check_status_names[] = {"healthy", "degraded", "broken"};
static const char *const check_level_names[] = {"note", "degraded", "broken"};

static void check_ptr(int ptr, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", ptr & NCCL_PTR_HOST ? "HOST" : "",
		 ptr & NCCL_PTR_CUDA ? ",CUDA" : "", ptr & NCCL_PTR_DMABUF ? ",DMABUF" : "");
}

static void check_attr(int v, char *buf, size_t len)
{
	snprintf(buf, len, "%s", v < 0 ? "?" : v ? "yes" : "no");
}

static void check_bytes(uint64_t b, char *buf, size_t len)
{
	if (!b)
		snprintf(buf, len, "?");
	else if (b == GDX_GDR_MEMLOCK_INFINITY)
		snprintf(buf, len, "unlimited");
	else if (b >= (1ULL << 30))
		snprintf(buf, len, "%llu GiB", (unsigned long long)(b >> 30));
	else
		snprintf(buf, len, "%llu MiB", (unsigned long long)(b >> 20));
}

static void check_dmabuf_probe(const struct gdx_gdr_nic *nic, char *buf, size_t len)
{
	const char *e = gdx_gdr_errno_name(nic->dmabuf_errno);

	if (nic->dmabuf < 0)
		snprintf(buf, len, "not probed");
	else if (e)
		snprintf(buf, len, "%s (%s)", nic->dmabuf ? "ok" : "refused", e);
	else
		snprintf(buf, len, "%s (errno %d)", nic->dmabuf ? "ok" : "refused",
			 nic->dmabuf_errno);
}

/* The IOMMU of a pair: the translating side if any, else the GPU's mode. */
static const char *check_pair_iommu(const struct gdx_gdr_gpu *g, const struct gdx_gdr_nic *n)
{
	if (g->iommu == GDX_GDR_IOMMU_TRANSLATING)
		return g->iommu_type;
	if (n->iommu == GDX_GDR_IOMMU_TRANSLATING)
		return n->iommu_type;
	return gdx_gdr_iommu_name(g->iommu);
}

static void check_degraded(unsigned d, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", d & GDX_GDR_DEG_ACS ? " ACS" : "",
		 d & GDX_GDR_DEG_IOMMU ? " IOMMU" : "", d & GDX_GDR_DEG_SYS ? " SYS" : "");
}

static void check_human_nccl(const struct check_nccl *n, FILE *f)
{
	char nccl[PATH_MAX + 64], tries[128], has[64];

	check_nccl_name(n, nccl, sizeof(nccl));
	nccl_loader_tries(n->judged, tries, sizeof(tries));
	nccl_exported_range(n->lib_exported, has, sizeof(has));
	if (!n->found)
		fprintf(f, "  %-13s not found; NCCL %s tries %s\n", "NCCL", n->judged->releases,
			tries);
	else
		fprintf(f, "  %-13s %s: tries %s\n", "NCCL", nccl, tries);
	fprintf(f, "  %-13s NCCL_NET_PLUGIN=%s, NCCL_NET=%s: NCCL opens %s\n", "plugin",
		n->plugin_env ? n->plugin_env : "(unset)", n->net_env ? n->net_env : "(unset)",
		n->tried[0] ? n->tried : "no external plugin");
	if (n->ours && n->api)
		fprintf(f, "  %-13s %s (%s): NCCL loads ncclNetPlugin_v%d\n", "", n->plugin_path,
			has, n->api);
	else if (n->ours)
		fprintf(f, "  %-13s %s (%s): NCCL loads none of them\n", "", n->plugin_path, has);
	else if (n->lib_path[0])
		fprintf(f, "  %-13s %s: not this plugin (network %s, %s)\n", "", n->lib_path,
			n->lib_net[0] ? n->lib_net : "unnamed", has);
	else
		fprintf(f, "  %-13s not this plugin: %s\n", "",
			n->load_error[0] ? n->load_error : "no such file in the library path");
	if (n->ours && n->plugin_version[0])
		fprintf(f,
			"  %-13s libnccl-net-gdx %s, wire protocol %d (this gdx-doctor: %s, %d)\n",
			"plugin version", n->plugin_version, n->plugin_wire, GDX_VERSION,
			GDX_WIRE_VERSION);
	else if (n->ours)
		fprintf(f, "  %-13s unknown: no version in its INIT line (older than 0.2.0)\n",
			"plugin version");
}

static void check_human_host(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;
	char text[GDX_GDR_TEXT_LEN], have[32];

	fputs("\nHost\n", f);
	check_bytes(p->memlock, have, sizeof(have));
	fprintf(f, "  %-13s %s%s\n", "memlock", p->memlock_unknown ? "unknown" : have,
		gdx_gdr_memlock_check(p, text, sizeof(text)) == GDX_GDR_LEVEL_OK
			? ""
			: ": too low (64 MiB or more needed)");
	if (p->peermem)
		fprintf(f, "  %-13s %s loaded (%s)\n", "peer memory", p->peermem_name,
			p->peermem_marker);
	else
		fprintf(f, "  %-13s not loaded (no nvidia_peermem or nv_peer_mem marker)\n",
			"peer memory");
	if (!p->kernel_major)
		fprintf(f, "  %-13s kernel version unknown (each NIC's probe: below)\n", "dma-buf");
	else
		fprintf(f, "  %-13s kernel %d.%d %s 5.12 or later (each NIC's probe: below)\n",
			"dma-buf", p->kernel_major, p->kernel_minor,
			p->kernel_major > 5 || (p->kernel_major == 5 && p->kernel_minor >= 12)
				? "is"
				: "is not");
	if (p->cuda == GDX_GDR_CUDA_OK)
		fprintf(f, "  %-13s %d.%d\n", "CUDA driver", p->cuda_version / 1000,
			p->cuda_version % 1000 / 10);
	else if (p->cuda == GDX_GDR_CUDA_UNKNOWN)
		fprintf(f, "  %-13s unknown (%s)\n", "CUDA driver", p->cuda_why);
	else
		fprintf(f, "  %-13s %s (%s)\n", "CUDA driver",
			p->cuda == GDX_GDR_CUDA_NONE ? "none" : "not working", p->cuda_why);
	fprintf(f, "  %-13s NCCL_NET_GDR_LEVEL=%s\n", "GDR level",
		p->gdr_level == GDX_PATH_NODE ? "PHB" : gdx_path_name(p->gdr_level));
	if (!c->nccl_checked) {
		fprintf(f, "  %-13s not checked: a saved tree holds no NCCL or plugin files\n",
			"NCCL");
		return;
	}
	check_human_nccl(&c->nccl, f);
}

static void check_human(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;
	char a[32], b[32], d[48];

	fprintf(f, "gdx-doctor check: %s (kernel %s, NCCL_GDX_GDR=%s)\n", c->source,
		p->kernel[0] ? p->kernel : "?", gdx_gdr_policy_name(c->policy));
	fputs("\nRDMA ports\n", f);
	if (!c->nports)
		fputs("  none\n", f);
	else
		fprintf(f, "  %-10s %-4s %-8s %-10s %-22s %-5s %-7s %s\n", "DEVICE", "PORT",
			"STATE", "LINK", "RATE", "GIDS", "ROCEv2", "GID");
	for (int i = 0; i < c->nports; i++) {
		const struct check_port *cp = &c->ports[i];
		bool roce = !strcmp(cp->link, "Ethernet");

		snprintf(a, sizeof(a), "%d", cp->nv2);
		fprintf(f, "  %-10s %-4d %-8s %-10s %-22s %-5d %-7s %s\n", cp->dev, cp->port,
			cp->state, cp->link, cp->rate, cp->ngids, roce ? a : "-",
			cp->gid[0] ? cp->gid : "-");
	}
	check_human_host(c, f);
	check_fabric(c, f, false);

	fputs("\nGPUs\n", f);
	if (!p->ngpus)
		fputs("  none\n", f);
	else
		fprintf(f, "  %-13s %-5s %-4s %-7s %-9s %s\n", "GPU", "CUDA", "GDR", "DMA-BUF",
			"BAR1", "IOMMU");
	for (int g = 0; g < p->ngpus; g++) {
		const struct gdx_gdr_gpu *gpu = &p->gpus[g];
		char idx[16], bar1[32];

		snprintf(idx, sizeof(idx), "%d", gpu->cuda_index);
		check_attr(gpu->gdr_attr, a, sizeof(a));
		check_attr(gpu->dmabuf_attr, b, sizeof(b));
		check_bytes(gpu->bar1, bar1, sizeof(bar1));
		fprintf(f, "  %-13s %-5s %-4s %-7s %-9s %s\n", gpu->pci,
			gpu->cuda_index >= 0 ? idx : "-", a, b, bar1,
			gpu->iommu == GDX_GDR_IOMMU_TRANSLATING ? gpu->iommu_type
								: gdx_gdr_iommu_name(gpu->iommu));
	}

	fprintf(f, "\nNICs (what the plugin advertises with NCCL_GDX_GDR=%s)\n",
		gdx_gdr_policy_name(c->policy));
	if (!p->nnics)
		fputs("  none\n", f);
	else
		fprintf(f, "  %-10s %-13s %-8s %-16s %-21s %s\n", "NIC", "PCI", "VERDICT", "PTR",
			"DMA-BUF PROBE", "WHY");
	for (int n = 0; n < p->nnics; n++) {
		const struct gdx_gdr_verdict *v = &c->nic_v[n];
		const char *why = v->line + strlen(p->nics[n].name) + 2;

		check_ptr(v->ptr_support, a, sizeof(a));
		check_dmabuf_probe(&p->nics[n], d, sizeof(d));
		fprintf(f, "  %-10s %-13s %-8s %-16s %-21s %s\n", p->nics[n].name,
			p->nics[n].pci[0] ? p->nics[n].pci : "(none)", gdx_gdr_mode_name(v->mode),
			a, d, why);
	}

	if (p->ngpus && p->nnics) {
		fputs("\nGPU-NIC pairs\n", f);
		fprintf(f, "  %-13s %-10s %-7s %-8s %-12s %s\n", "GPU", "NIC", "PATH", "ACS",
			"IOMMU", "VERDICT");
	}
	for (int g = 0; g < p->ngpus && p->nnics; g++) {
		for (int n = 0; n < p->nnics; n++) {
			const struct gdx_gdr_verdict *v = &c->pair_v[g * p->nnics + n];
			const struct gdx_gdr_path *path = gdx_gdr_path(p, g, n);

			check_degraded(v->degraded, d, sizeof(d));
			fprintf(f, "  %-13s %-10s %-7s %-8s %-12s %s%s%s%s\n", p->gpus[g].pci,
				p->nics[n].name, gdx_path_name(path->cls),
				gdx_gdr_acs_name(path->acs),
				check_pair_iommu(&p->gpus[g], &p->nics[n]),
				gdx_gdr_mode_name(v->mode),
				v->mode == GDX_GDR_STAGED && v->ptr_support != NCCL_PTR_HOST
					? " (beyond NCCL_NET_GDR_LEVEL)"
					: "",
				v->degraded ? ", degraded:" : "", d);
		}
	}

	fputs("\nProblems\n", f);
	for (int i = 0; i < c->nproblems; i++)
		fprintf(f, "  [%s] %s\n", check_level_names[c->problems[i].level],
			c->problems[i].text);
	if (!c->nproblems)
		fputs("  none\n", f);
	fprintf(f, "\nResult: %s (exit %d%s)\n", check_status_names[c->status], c->exit,
		c->exit != (int)c->status ? ", --allow-degraded" : "");
}

static void check_json_host(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;
	static const char *const cuda[] = {"none", "error", "ok", "unknown"};

	fputs(",\n \"host\": {", f);
	json_key_str(f, "kernel", p->kernel);
	if (p->memlock_unknown)
		fputs(", \"memlock\": null", f);
	else if (p->memlock == GDX_GDR_MEMLOCK_INFINITY)
		fputs(", \"memlock\": \"unlimited\"", f);
	else
		fprintf(f, ", \"memlock\": %llu", (unsigned long long)p->memlock);
	fprintf(f, ",\n  \"peermem\": {\"loaded\": %s, ", p->peermem ? "true" : "false");
	json_key_str(f, "module", p->peermem ? p->peermem_name : NULL);
	fputs(", ", f);
	json_key_str(f, "marker", p->peermem ? p->peermem_marker : NULL);
	fprintf(f, "},\n  \"cuda\": {\"state\": \"%s\", \"version\": %d, ", cuda[p->cuda],
		p->cuda_version);
	json_key_str(f, "why", p->cuda == GDX_GDR_CUDA_OK ? NULL : p->cuda_why);
	fprintf(f, "},\n  \"gdr_level\": \"%s\"}",
		p->gdr_level == GDX_PATH_NODE ? "PHB" : gdx_path_name(p->gdr_level));
	if (!c->nccl_checked) {
		fputs(",\n \"nccl\": null", f);
		return;
	}
	fprintf(f, ",\n \"nccl\": {\"found\": %s, ", c->nccl.found ? "true" : "false");
	json_key_str(f, "path", c->nccl.found ? c->nccl.path : NULL);
	fprintf(f, ", \"in_library_path\": %s, \"version_code\": %d, ",
		c->nccl.in_path ? "true" : "false", c->nccl.version);
	json_key_str(f, "judged_as", c->nccl.judged->releases);
	fputs(", \"tries\": [", f);
	for (int i = 0; c->nccl.judged->tries[i]; i++)
		fprintf(f, "%s%d", i ? ", " : "", c->nccl.judged->tries[i]);
	fprintf(f, "], \"net_api\": %d, \"loads_plugin\": %s,\n  ", c->nccl.api,
		c->nccl.ours && c->nccl.api ? "true" : "false");
	json_key_str(f, "nccl_net_plugin", c->nccl.plugin_env);
	fputs(", ", f);
	json_key_str(f, "nccl_net", c->nccl.net_env);
	fputs(", ", f);
	json_key_str(f, "opens", c->nccl.tried);
	fputs(", ", f);
	json_key_str(f, "library", c->nccl.lib_path);
	fputs(", ", f);
	json_key_str(f, "library_network", c->nccl.lib_net);
	fputs(", \"library_tables\": [", f);
	for (int v = 0, k = 0; v < 32; v++)
		if (c->nccl.lib_exported & (1u << v))
			fprintf(f, "%s%d", k++ ? ", " : "", v);
	fputs("],\n  ", f);
	json_key_str(f, "plugin_path", c->nccl.plugin_path);
	fputs(", ", f);
	json_key_str(f, "plugin_version", c->nccl.plugin_version);
	fputs(", \"plugin_wire\": ", f);
	if (c->nccl.plugin_wire)
		fprintf(f, "%d", c->nccl.plugin_wire);
	else
		fputs("null", f);
	fputs("}", f);
}

static void check_json_verdict(FILE *f, const struct gdx_gdr_verdict *v)
{
	fprintf(f, "\"verdict\": \"%s\", \"ptr_support\": [\"HOST\"%s%s], ",
		gdx_gdr_mode_name(v->mode), v->ptr_support & NCCL_PTR_CUDA ? ", \"CUDA\"" : "",
		v->ptr_support & NCCL_PTR_DMABUF ? ", \"DMABUF\"" : "");
	json_key_str(f, "via", v->via);
	fputs(", \"degraded\": [", f);
	for (unsigned bit = GDX_GDR_DEG_ACS, k = 0; bit <= GDX_GDR_DEG_SYS; bit <<= 1) {
		if (!(v->degraded & bit))
			continue;
		fprintf(f, "%s\"%s\"", k++ ? ", " : "",
			bit == GDX_GDR_DEG_ACS	   ? "ACS"
			: bit == GDX_GDR_DEG_IOMMU ? "IOMMU"
						   : "SYS");
	}
	fputs("], ", f);
	json_key_str(f, "reason", v->reason);
	fputs(", ", f);
	json_key_str(f, "fix", v->fix);
	fputs(", ", f);
	json_key_str(f, "degraded_why", v->degraded_why);
}

/* "RoCE v2", "RoCE v1", "IB" (an InfiniBand port's GIDs are "IB/RoCE v1"). */
static void check_json_gid_type(FILE *f, const struct check_port *cp)
{
	if (!cp->gid[0] || !cp->gid_roce)
		fputs("null", f);
	else if (strcmp(cp->link, "Ethernet"))
		fputs("\"IB\"", f);
	else
		fprintf(f, "\"RoCE v%d\"", cp->gid_roce);
}

static int check_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every NCCL_GDX_* and NCCL_IB_* variable set here, by name: what fleet
 * compares between nodes (a launcher that drops one on some nodes is a
 * classic). */
static void check_json_environment(FILE *f)
{
	extern char **environ;
	const char **vars;
	size_t n = 0;

	for (char **e = environ; *e; e++)
		n++;
	vars = calloc(n + 1, sizeof(*vars));
	fputs(",\n \"environment\": {", f);
	n = 0;
	for (char **e = environ; vars && *e; e++)
		if ((!strncmp(*e, "NCCL_GDX_", 9) || !strncmp(*e, "NCCL_IB_", 8)) &&
		    strchr(*e, '='))
			vars[n++] = *e;
	if (vars)
		qsort(vars, n, sizeof(*vars), check_cmp_str);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(vars[i], '=');
		char name[128];

		snprintf(name, sizeof(name), "%.*s", (int)(eq - vars[i]), vars[i]);
		fputs(i ? ", " : "", f);
		json_str(f, name);
		fputs(": ", f);
		json_str(f, eq + 1);
	}
	fputs("}", f);
	free(vars);
}

static void check_json(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;

	fputs("{", f);
	json_report_origin_of(f, "check", c->hostname);
	fputs(", ", f);
	json_key_str(f, "source", c->source);
	fprintf(f, ", \"policy\": \"%s\", \"status\": \"%s\", \"exit\": %d,\n \"ports\": [",
		gdx_gdr_policy_name(c->policy), check_status_names[c->status], c->exit);
	for (int i = 0; i < c->nports; i++) {
		const struct check_port *cp = &c->ports[i];

		fprintf(f, "%s\n  {", i ? "," : "");
		json_key_str(f, "device", cp->dev);
		fprintf(f, ", \"port\": %d, ", cp->port);
		json_key_str(f, "state", cp->state);
		fprintf(f, ", \"active\": %s, ", cp->active ? "true" : "false");
		json_key_str(f, "link_layer", cp->link);
		fputs(", ", f);
		json_key_str(f, "rate", cp->rate);
		fprintf(f, ", \"gids\": %d, \"roce_v2_gids\": %d, ", cp->ngids, cp->nv2);
		json_key_str(f, "gid", cp->gid);
		fputs(", \"gid_type\": ", f);
		check_json_gid_type(f, cp);
		fputs(", \"active_mtu\": ", f);
		if (cp->mtu)
			fprintf(f, "%d", cp->mtu);
		else
			fputs("null", f);
		fputs("}", f);
	}
	fputs("]", f);
	check_json_host(c, f);
	check_fabric(c, f, true);
	check_json_environment(f);
	fputs(",\n \"gpus\": [", f);
	for (int g = 0; g < p->ngpus; g++) {
		const struct gdx_gdr_gpu *gpu = &p->gpus[g];

		fprintf(f, "%s\n  {", g ? "," : "");
		json_key_str(f, "pci", gpu->pci);
		fputs(", \"cuda_index\": ", f);
		if (gpu->cuda_index >= 0)
			fprintf(f, "%d", gpu->cuda_index);
		else
			fputs("null", f);
		fputs(", \"gdr\": ", f);
		json_tri(f, gpu->gdr_attr);
		fputs(", \"dmabuf\": ", f);
		json_tri(f, gpu->dmabuf_attr);
		if (gpu->bar1)
			fprintf(f, ", \"bar1\": %llu", (unsigned long long)gpu->bar1);
		else
			fputs(", \"bar1\": null", f);
		fprintf(f, ", \"iommu\": \"%s\", ", gdx_gdr_iommu_name(gpu->iommu));
		json_key_str(f, "iommu_type", gpu->iommu_type);
		fputs("}", f);
	}
	fputs("],\n \"nics\": [", f);
	for (int n = 0; n < p->nnics; n++) {
		const struct gdx_gdr_nic *nic = &p->nics[n];
		const struct gdx_gdr_verdict *v = &c->nic_v[n];

		fprintf(f, "%s\n  {", n ? "," : "");
		json_key_str(f, "name", nic->name);
		fputs(", ", f);
		json_key_str(f, "pci", nic->pci);
		fputs(", \"dmabuf_probe\": ", f);
		json_tri(f, nic->dmabuf);
		fputs(", ", f);
		json_key_str(f, "dmabuf_errno",
			     nic->dmabuf < 0 ? NULL : gdx_gdr_errno_name(nic->dmabuf_errno));
		fprintf(f, ", \"iommu\": \"%s\", ", gdx_gdr_iommu_name(nic->iommu));
		json_key_str(f, "gpu", v->gpu >= 0 ? p->gpus[v->gpu].pci : NULL);
		fprintf(f, ", \"path\": \"%s\",\n   ", gdx_path_name(v->path));
		check_json_verdict(f, v);
		fprintf(f, ",\n   \"warn\": %s, ", v->warn ? "true" : "false");
		json_key_str(f, "line", v->line);
		fputs("}", f);
	}
	fputs("],\n \"pairs\": [", f);
	for (int g = 0; g < p->ngpus; g++) {
		for (int n = 0; n < p->nnics; n++) {
			const struct gdx_gdr_path *path = gdx_gdr_path(p, g, n);

			fprintf(f, "%s\n  {", g || n ? "," : "");
			json_key_str(f, "gpu", p->gpus[g].pci);
			fputs(", ", f);
			json_key_str(f, "nic", p->nics[n].name);
			fprintf(f, ", \"path\": \"%s\", \"acs\": \"%s\", ",
				gdx_path_name(path->cls), gdx_gdr_acs_name(path->acs));
			json_key_str(f, "acs_bridge", path->acs_bridge);
			fprintf(f, ", \"bridges\": %d, \"iommu\": ", path->nbridges);
			json_str(f, check_pair_iommu(&p->gpus[g], &p->nics[n]));
			fputs(",\n   ", f);
			check_json_verdict(f, &c->pair_v[g * p->nnics + n]);
			fputs("}", f);
		}
	}
	fputs("],\n \"problems\": [", f);
	for (int i = 0; i < c->nproblems; i++) {
		fprintf(f, "%s\n  {\"level\": \"%s\", ", i ? "," : "",
			check_level_names[c->problems[i].level]);
		json_key_str(f, "text", c->problems[i].text);
		fputs("}", f);
	}
	fputs("]}\n", f);
}

#define CHECK_MAX_REFUSALS 32
#define CHECK_MAX_UNKNOWN  32

static int doctor_check(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct doctor_refusal refused[CHECK_MAX_REFUSALS];
	struct doctor_unknown unknown[CHECK_MAX_UNKNOWN];
	struct check_opts o = {0};
	int nunknown;
	struct stat st = {0};
	int nrefused;
	struct gdx_gdr_opts go = {0};
	struct gdx_topo *t = NULL;
	char tree_xml[PATH_MAX], tree_facts[PATH_MAX];
	struct check *c;
	char why[512];
	int ret;

	ret = doctor_args(cmd, argc, argv, check_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	c = calloc(1, sizeof(*c));
	if (!c)
		return DOCTOR_ERROR;
	c->policy_env = gdx_param_env("GDR");
	gdx_gdr_policy_parse(c->policy_env, &c->policy); /* refused below if malformed */
	/* Every value init refuses, as gdx-doctor env finds them. */
	nrefused = doctor_env_refusals(refused, CHECK_MAX_REFUSALS);
	for (int i = 0; i < nrefused && i < CHECK_MAX_REFUSALS; i++)
		check_problem(c, GDX_GDR_LEVEL_BROKEN, "%s: the plugin's init fails",
			      refused[i].text);
	/* A name the plugin does not have: a setting the user meant, ignored
	 * (degraded); a near miss of an NCCL_IB_ twin is a guess (a note). */
	nunknown = doctor_env_unknown(unknown, CHECK_MAX_UNKNOWN);
	for (int i = 0; i < nunknown && i < CHECK_MAX_UNKNOWN; i++) {
		char text[512];

		doctor_unknown_text(&unknown[i], text, sizeof(text));
		check_problem(c, unknown[i].ours ? GDX_GDR_LEVEL_DEGRADED : GDX_GDR_LEVEL_OK,
			      "%s; fix: %s", text,
			      unknown[i].ours ? "correct the name, or unset it"
					      : "check the name against NCCL's documentation");
	}
	/* A tree that is not there is an error, not a machine without devices. */
	if (o.sysfs_root && (stat(o.sysfs_root, &st) ? (ret = errno) : !S_ISDIR(st.st_mode))) {
		fprintf(stderr, "gdx-doctor check: --sysfs-root %s: %s\n", o.sysfs_root,
			ret ? strerror(ret) : "not a directory");
		free(c);
		return DOCTOR_NO_INPUT;
	}
	/* A saved tree is another node: every fact comes from it, its topo.xml
	 * and its facts file when it has them, and what it does not hold is
	 * unknown, never this machine's. */
	if (o.sysfs_root && !o.xml) {
		snprintf(tree_xml, sizeof(tree_xml), "%s/topo.xml", o.sysfs_root);
		if (access(tree_xml, F_OK) == 0)
			o.xml = tree_xml;
	}
	go.facts = gdx_env(GDX_ENV_GDR_FACTS); /* tests: a node of their own */
	if (!go.facts && o.sysfs_root) {
		snprintf(tree_facts, sizeof(tree_facts), "%s/facts", o.sysfs_root);
		if (access(tree_facts, F_OK) == 0)
			go.facts = tree_facts;
	}
	go.saved = o.sysfs_root != NULL;
	c->live = !go.saved && !go.facts;
	/* An explicit topology must load; this machine's may be missing (a note). */
	if (o.xml) {
		ret = gdx_topo_load(o.xml, &t, why, sizeof(why));
		if (ret) {
			fprintf(stderr, "gdx-doctor check: %s\n", why);
			free(c);
			return ret == -ENOMEM ? DOCTOR_ERROR : DOCTOR_NO_INPUT;
		}
	}
	go.sysfs_root = o.sysfs_root ? o.sysfs_root : "/sys";
	go.topo = t;
	ret = gdx_gdr_probe_init(&go, &c->p, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "gdx-doctor check: %s\n", why);
		gdx_topo_free(t);
		free(c);
		return ret == -ENOMEM ? DOCTOR_ERROR : DOCTOR_NO_INPUT;
	}
	c->source = o.sysfs_root ? o.sysfs_root : "this machine";
	if (!c->p->have_topo)
		check_problem(c, GDX_GDR_LEVEL_OK, "no topology (%s): path classes unknown",
			      c->p->topo_why);
	if (o.hostname)
		c->hostname = o.hostname;
	else if (!go.saved)
		c->hostname = doctor_this_host(c->host_buf, sizeof(c->host_buf));
	else if (c->p->hostname[0])
		c->hostname = c->p->hostname;
	else
		c->hostname = gdx_topo_hostname(t);
	if (c->live)
		check_probe_devices(c);
	ret = check_run(c);
	c->exit = c->status == GDX_GDR_LEVEL_DEGRADED && o.allow_degraded ? DOCTOR_OK
									  : (int)c->status;
	if (ret) {
		fprintf(stderr, "gdx-doctor check: out of memory\n");
		ret = DOCTOR_ERROR;
	} else {
		if (o.json)
			check_json(c, stdout);
		else
			check_human(c, stdout);
		ret = c->exit;
	}
	free(c->nic_v);
	free(c->pair_v);
	gdx_gdr_probe_free(c->p);
	gdx_topo_free(t);
	free(c);
	return ret;
}

static const struct doctor_opt check_opts[] = {
	{"sysfs-root", 's', "DIR",
	 "judge a saved node: sysfs under DIR, its DIR/topo.xml and DIR/facts when there, "
	 "nothing of this machine"},
	{"xml", 'x', "FILE",
	 "read an hwloc XML topology (lstopo --of xml) instead of this machine"},
	{"json", 'j', NULL, "print JSON instead of the tables"},
	{"hostname", 'H', "NAME",
	 "the node's name in --json (default: a saved tree's, from its facts or topo.xml; "
	 "else this machine's)"},
	{"allow-degraded", 'a', NULL,
	 "exit 0 for a degraded node too (it works, slower), not 1: a site's gate that "
	 "accepts one"},
	{0},
};

const struct doctor_cmd doctor_cmd_check = {
	.name = "check",
	.summary = "the node before a job: ports, memlock, peer memory, DMA-BUF, CUDA, paths, NCCL",
	.opts = check_opts,
	.run = doctor_check,
};
