/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor check (the default): judges GPUDirect RDMA end to end, and
 * whether NCCL would load the plugin, as each release's loader does
 * (gdx_doctor_nccl.c); its exit status is the verdict: 0 healthy, 1
 * degraded (0 with --allow-degraded), 2 broken (gdx_doctor.h's table). NCCL
 * that will not load the plugin is broken: the job runs on another
 * transport, or stops.
 *
 * This file is the command: its options, the node's ports and devices read,
 * and the run; gdx_doctor_check.h names the files that judge and report.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "sys/gdx_env.h"
#include "sys/gdx_file.h"
#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_verdict.h"
#include "dev/gdx_gid.h"
#include "sys/gdx_param.h"
#include "sys/gdx_sysfs.h"
#include "topo/gdx_topo.h"

#include "tools/doctor/gdx_doctor_check.h"
#include "tools/doctor/gdx_doctor_check_prom.h"

struct check_opts {
	const char *sysfs_root;
	const char *xml;
	const char *hostname; /* --hostname */
	const char *nccl;     /* --nccl */
	bool json;
	bool quiet;	      /* the problems alone, on stderr: a gate's */
	bool allow_degraded;  /* a degraded node exits 0 */
	bool prometheus;      /* the verdict as metrics (gdx_doctor_check_prom.c) */
	const char *textfile; /* --textfile: and to this file, in one step */
};

static int check_on_opt(void *ctx, int key, const char *arg)
{
	struct check_opts *o = ctx;

	switch (key) {
	case 's': o->sysfs_root = arg; break;
	case 'x': o->xml = arg; break;
	case 'j': o->json = true; break;
	case 'q': o->quiet = true; break;
	case 'a': o->allow_degraded = true; break;
	case 'H': o->hostname = arg; break;
	case 'P': o->prometheus = true; break;
	case 'T': o->textfile = arg; break;
	case 'N': o->nccl = arg; break;
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
	snprintf(dir, sizeof(dir), "class/infiniband/%s/ports/%d", dev, port);
	snprintf(path, sizeof(path), "%s/state", dir);
	gdx_sysfs_read_line_in(c->p->sysfs_root, path, line, sizeof(line)); /* "4: ACTIVE" */
	colon = strchr(line, ':');
	snprintf(cp->state, sizeof(cp->state), "%.31s", colon ? colon + 2 : line[0] ? line : "?");
	cp->active = atoi(line) == IBV_PORT_ACTIVE;
	snprintf(path, sizeof(path), "%s/link_layer", dir);
	if (gdx_sysfs_read_line_in(c->p->sysfs_root, path, cp->link, sizeof(cp->link)))
		snprintf(cp->link, sizeof(cp->link), "?");
	snprintf(path, sizeof(path), "%s/rate", dir);
	if (gdx_sysfs_read_line_in(c->p->sysfs_root, path, cp->rate, sizeof(cp->rate)))
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

		snprintf(path, sizeof(path), "class/infiniband/%s/ports", dev);
		d = gdx_sysfs_opendir_in(c->p->sysfs_root, path);
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

static int check_run(struct check *c)
{
	struct gdx_gdr_probe *p = c->p;
	/* A login node: neither a GPU nor an RDMA device. What is about them
	 * (the ports, the memlock NCCL registers its buffers with, GPUDirect,
	 * the plugin's start-up) needs a compute node; the rest is judged
	 * here as anywhere: NCCL, the plugin file, the environment. */
	bool login = !p->ngpus && !p->nnics;

	c->nic_v = calloc((size_t)p->nnics + 1, sizeof(*c->nic_v));
	c->pair_v = calloc((size_t)p->ngpus * (size_t)p->nnics + 1, sizeof(*c->pair_v));
	if (!c->nic_v || !c->pair_v)
		return -ENOMEM;
	check_ports(c);
	if (c->live)
		check_probe_devices(c); /* the MTU of the ports just read */
	/* The library NCCL would load is this machine's, never a saved tree's
	 * (but a test's, whose facts file says "nccl this-machine"). */
	if (c->live || p->nccl_here || c->nccl_file)
		check_nccl(c);
	/* GPUDirect is judged by the rules of the NCCL that will load the
	 * plugin: this machine's, or the one a saved tree's facts name. */
	if (!p->rule.version && c->nccl_checked)
		p->rule.version = c->nccl.version;
	if (login)
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "no GPU and no RDMA device here: not a compute node; judged: NCCL, "
			      "the plugin file and the environment; the ports, memlock, GPUDirect "
			      "RDMA and the plugin's start-up need a compute node");
	else if (c->here)
		check_start(c);
	if (!login) {
		check_port_problems(c);
	}
	for (int n = 0; n < p->nnics; n++) {
		gdx_gdr_nic_verdict(p, p->nics[n].name, c->policy, &c->nic_v[n]);
		if (c->nic_v[n].mode == GDX_GDR_BROKEN)
			check_problem(c, GDX_GDR_LEVEL_BROKEN, "%s", c->nic_v[n].line);
		for (int g = 0; g < p->ngpus; g++)
			gdx_gdr_pair_verdict(p, g, n, c->policy, &c->pair_v[g * p->nnics + n]);
	}
	if (!login)
		check_memlock(c); /* what registration pins depends on the verdicts */
	check_gpu_problems(c);
	if (c->here && !login)
		check_start_problems(c);
	if (c->nccl_checked) {
		check_nccl_problems(c);
		check_rma(c);
	}
	return 0;
}

/* The facts' Data Direct functions (NCCL_GDX_DATA_DIRECT=1, the default,
 * places a NIC there; 0 and 2 leave it at its own), into go's homes. */
static int check_dd_homes(struct check *c, struct gdx_gdr_opts *go, const char *root, char *why,
			  size_t len)
{
	const char *mode = gdx_param_env("DATA_DIRECT");
	int ret = gdx_gdr_facts_homes(go->facts_in_tree ? root : NULL, go->facts, &c->homes, why,
				      len);

	if (ret)
		return ret;
	for (int i = 0; !mode && i < gdx_param_count; i++)
		if (!strcmp(gdx_param_infos[i].name, "DATA_DIRECT"))
			mode = gdx_param_twin_env(&gdx_param_infos[i]); /* NCCL_IB_DATA_DIRECT */
	if (mode && *mode && strcmp(mode, "1"))
		c->homes.n = 0;
	go->homes = c->homes.home;
	go->nhomes = c->homes.n;
	return 0;
}

#define CHECK_MAX_REFUSALS 32
#define CHECK_MAX_UNKNOWN  32

static int doctor_check(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct doctor_refusal refused[CHECK_MAX_REFUSALS];
	struct doctor_unknown unknown[CHECK_MAX_UNKNOWN];
	struct check_opts o = {0};
	const char *topo_file;
	int nunknown;
	int nrefused, root = -1, xml_fd = -1;
	struct gdx_gdr_opts go = {0};
	struct gdx_topo *t = NULL;
	char tree_xml[PATH_MAX];
	struct check *c;
	char why[PATH_MAX + 256];
	int ret;

	ret = doctor_args(cmd, argc, argv, check_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.json + o.quiet + o.prometheus > 1) {
		fprintf(stderr, "gdx-doctor check: --json, --quiet and --prometheus: give one\n");
		return DOCTOR_USAGE;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return DOCTOR_ERROR;
	if (o.nccl && check_nccl_given(c, o.nccl, why, sizeof(why))) {
		fputs("gdx-doctor check: ", stderr);
		gdx_esc_text(stderr, why);
		fputc('\n', stderr);
		free(c);
		return DOCTOR_NO_INPUT;
	}
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
	/* A tree that is not there is an error, not a machine without devices.
	 * Everything in it is a path inside it (gdx_sysfs.h): its links, and
	 * its topo.xml and facts, never lead out of it. */
	if (o.sysfs_root) {
		root = gdx_file_open(AT_FDCWD, o.sysfs_root, GDX_FILE_DIR | GDX_FILE_ANY, 0, why,
				     sizeof(why));
		if (root < 0) {
			fprintf(stderr, "gdx-doctor check: --sysfs-root %s\n", why);
			free(c);
			return DOCTOR_NO_INPUT;
		}
	}
	/* A saved tree is another node: every fact comes from it, its topo.xml
	 * and its facts file when it has them, and what it does not hold is
	 * unknown, never this machine's. One that is there but not a file (a
	 * FIFO, a link out of the tree) cannot be read: an error. */
	if (o.sysfs_root && !o.xml) {
		snprintf(tree_xml, sizeof(tree_xml), "%s/topo.xml", o.sysfs_root);
		xml_fd = gdx_file_open_in(root, o.sysfs_root, "topo.xml", 0, GDX_FILE_MAX_DEFAULT,
					  why, sizeof(why));
		if (xml_fd >= 0)
			o.xml = tree_xml;
		else if (xml_fd != -ENOENT)
			goto err_input;
	}
	go.facts = gdx_env(GDX_ENV_GDR_FACTS); /* tests: a node of their own */
	if (!go.facts && o.sysfs_root && gdx_sysfs_exists_in(o.sysfs_root, "facts")) {
		go.facts = "facts";
		go.facts_in_tree = true;
	}
	go.saved = o.sysfs_root != NULL;
	c->live = !go.saved && !go.facts;
	c->here = !go.saved;
	/* A Data Direct NIC is placed at its DMA function, as the plugin and
	 * NCCL place it: the facts say which (a live machine's plugin start
	 * names them, below). */
	if (go.facts && check_dd_homes(c, &go, o.sysfs_root, why, sizeof(why)))
		goto err_input;
	/* An explicit topology must load; this machine's may be missing (a note).
	 * NCCL's topology file, when it names one, is the pairing NCCL sees. */
	doctor_nccl_topo_read(&c->ntopo);
	if (o.xml) {
		struct gdx_topo_opts to = {.xml = o.xml,
					   .fd = xml_fd,
					   .homes = go.homes,
					   .nhomes = go.nhomes,
					   .nccl_file = doctor_nccl_topo_follow(&c->ntopo)};

		ret = gdx_topo_load_opts(&to, &t, why, sizeof(why));
		if (ret) {
			doctor_nccl_topo_free(&c->ntopo);
			fprintf(stderr, "gdx-doctor check: %s\n", why);
			if (xml_fd >= 0)
				close(xml_fd);
			if (root >= 0)
				close(root);
			free(c);
			return ret == -ENOMEM ? DOCTOR_ERROR : DOCTOR_NO_INPUT;
		}
	}
	if (xml_fd >= 0)
		close(xml_fd);
	if (root >= 0)
		close(root);
	go.sysfs_root = o.sysfs_root ? o.sysfs_root : "/sys";
	go.topo = t;
	/* This machine's topology is what the plugin reads: NCCL_GDX_TOPO_FILE
	 * when set. One it cannot read is the plugin's problem too (its
	 * start-up says so), not a reason to stop. */
	if (c->here && !t && (topo_file = gdx_param_env("TOPO_FILE")) && *topo_file)
		go.xml = topo_file;
	else
		topo_file = NULL;
	ret = gdx_gdr_probe_init(&go, &c->p, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "gdx-doctor check: %s\n", why);
		doctor_nccl_topo_free(&c->ntopo);
		gdx_topo_free(t);
		free(c);
		return ret == -ENOMEM ? DOCTOR_ERROR : DOCTOR_NO_INPUT;
	}
	c->source = o.sysfs_root ? o.sysfs_root : "this machine";
	if (!c->p->have_topo)
		check_problem(c, GDX_GDR_LEVEL_OK, "no topology (%s): path classes unknown",
			      c->p->topo_why);
	else if (topo_file)
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "the topology is NCCL_GDX_TOPO_FILE's, as the plugin reads it");
	check_nccl_topo(c, t, go.xml);
	c->topo = t;
	if (o.hostname)
		c->hostname = o.hostname;
	else if (!go.saved)
		c->hostname = json_this_host(c->host_buf, sizeof(c->host_buf));
	else if (c->p->hostname[0])
		c->hostname = c->p->hostname;
	else
		c->hostname = gdx_topo_hostname(t);
	ret = check_run(c);
	c->exit = c->status == GDX_GDR_LEVEL_DEGRADED && o.allow_degraded ? DOCTOR_OK
									  : (int)c->status;
	if (ret) {
		fprintf(stderr, "gdx-doctor check: out of memory\n");
		ret = DOCTOR_ERROR;
	} else {
		if (o.json)
			check_json(c, stdout);
		else if (o.quiet)
			check_quiet(c, stderr);
		else if (o.prometheus)
			check_prometheus(c, stdout);
		else
			check_human(c, stdout);
		ret = o.textfile && check_textfile(c, o.textfile) ? DOCTOR_ERROR : c->exit;
	}
	free(c->nic_v);
	free(c->pair_v);
	free(c->start);
	gdx_gdr_probe_free(c->p);
	doctor_nccl_topo_free(&c->ntopo);
	gdx_topo_free(t);
	free(c);
	return ret;

err_input:
	fprintf(stderr, "gdx-doctor check: %s\n", why);
	if (xml_fd >= 0)
		close(xml_fd);
	close(root);
	free(c);
	return DOCTOR_NO_INPUT;
}

static const struct doctor_opt check_opts[] = {
	{"sysfs-root", 's', "DIR",
	 "judge a saved node: sysfs under DIR, its DIR/topo.xml and DIR/facts when there, "
	 "nothing of this machine"},
	{"xml", 'x', "FILE",
	 "read an hwloc XML topology (lstopo --of xml) instead of this machine"},
	{"json", 'j', NULL, "print JSON instead of the tables"},
	{"quiet", 'q', NULL,
	 "print only the problems (degraded and broken), one line each on standard error: "
	 "a gate's, whose output goes to /dev/null"},
	{"hostname", 'H', "NAME",
	 "the node's name in --json (default: a saved tree's, from its facts or topo.xml; "
	 "else this machine's)"},
	{"prometheus", 'P', NULL,
	 "print the verdict as metrics for node_exporter's textfile collector instead"},
	{"textfile", 'T', "FILE",
	 "also write those metrics to FILE, whole or not at all (a new file beside it, "
	 "renamed onto it): node_exporter --collector.textfile.directory's"},
	{"nccl", 'N', "FILE",
	 "judge this libnccl.so (a pip wheel's: .../nvidia/nccl/lib/libnccl.so.2) instead of "
	 "the one the library path and the usual directories give"},
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
	.notes = "what it loads: to judge this machine's NCCL and the plugin NCCL would open,\n"
		 "check loads libnccl.so.2 and the library NCCL_NET_PLUGIN names, as NCCL does\n"
		 "(dlopen): their constructors, and their dependencies', run in this process.\n"
		 "Run it, as root above all, only where you would load them (NCCL_NET_PLUGIN,\n"
		 "LD_LIBRARY_PATH); a saved tree's (--sysfs-root) NCCL is not judged.\n",
};
