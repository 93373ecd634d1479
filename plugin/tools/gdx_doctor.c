/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor: tells what the plugin will find on this machine, using the
 * plugin's own probes. One subcommand per question; `topo` shows the PCIe
 * path class between every GPU and RDMA NIC (as `nvidia-smi topo -m` does),
 * the rail groups the plugin would form and the NUMA node of each device;
 * `env` lists every NCCL_GDX_* variable from the plugin's own table;
 * `check` (the default) judges GPUDirect RDMA end to end, with an exit
 * status of its own: 0 healthy, 1 degraded, 2 broken.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include <gdx/gdx_gdr.h>
#include <gdx/gdx_gid.h>
#include <gdx/gdx_param.h>
#include <gdx/gdx_sysfs.h>
#include <gdx/gdx_topo.h>
#include <nccl/net_common.h>

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

/* Exit statuses, the same for every subcommand (listed by --help). */
enum doctor_exit {
	DOCTOR_OK = 0,
	DOCTOR_ERROR = 1,   /* out of memory, output failed */
	DOCTOR_USAGE = 2,   /* bad command line */
	DOCTOR_NO_TOPO = 3, /* topology file missing, unreadable or not hwloc XML */
	DOCTOR_NO_GPU = 4,  /* no NVIDIA GPU found */
	DOCTOR_NO_NIC = 5,  /* no RDMA NIC found */
	DOCTOR_BAD_ENV = 6, /* a NCCL_GDX_* value init would refuse, or an unknown name */
};

/* One command-line option: the getopt_long entry and its line of --help. */
struct doctor_opt {
	const char *name;
	int key;
	const char *arg; /* NULL: takes no argument */
	const char *help;
};

struct doctor_cmd {
	const char *name;
	const char *summary;
	const struct doctor_opt *opts; /* ends with a zeroed entry */
	int (*run)(const struct doctor_cmd *cmd, int argc, char **argv);
};

static const char doctor_exit_help[] =
	"exit status:\n"
	"  0  all found\n"
	"  1  internal error (out of memory, cannot write the output)\n"
	"  2  bad command line\n"
	"  3  no topology: the XML file is missing, unreadable or not hwloc XML,\n"
	"     or hwloc could not read this machine\n"
	"  4  no NVIDIA GPU found\n"
	"  5  no RDMA NIC found\n"
	"  6  env: a NCCL_GDX_* value the plugin refuses, or an unknown NCCL_GDX_ name\n"
	"check (also what gdx-doctor runs with no command) exits with its verdict:\n"
	"  0  healthy\n"
	"  1  degraded: it works, but a GPU is staged where it could be direct, or its\n"
	"     direct path is degraded (ACS, translating IOMMU, across sockets, tiny BAR1)\n"
	"  2  broken: no active RDMA port, memlock too low to register, a RoCE port\n"
	"     without a RoCE v2 GID, or NCCL_GDX_GDR=on that cannot be honoured\n";

static void doctor_cmd_usage(const struct doctor_cmd *cmd, FILE *f)
{
	fprintf(f, "usage: gdx-doctor %s [options]\n%s\n\noptions:\n", cmd->name, cmd->summary);
	for (const struct doctor_opt *o = cmd->opts; o->name; o++) {
		char left[64];

		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-22s %s\n", left, o->help);
	}
	fprintf(f, "\n%s", doctor_exit_help);
}

/*
 * getopt_long over cmd's option table. Calls back for each option; returns
 * DOCTOR_OK with optind at the first operand, DOCTOR_USAGE, or what on_opt
 * returned when not DOCTOR_OK.
 */
static int doctor_parse(const struct doctor_cmd *cmd, int argc, char **argv,
			int (*on_opt)(void *ctx, int key, const char *arg), void *ctx)
{
	struct option longopts[16];
	char shortopts[48];
	int n = 0, s = 0, c;

	shortopts[s++] = ':'; /* report a missing argument as ':' */
	for (const struct doctor_opt *o = cmd->opts; o->name && n < 15; o++, n++) {
		longopts[n] = (struct option){o->name, o->arg ? required_argument : no_argument,
					      NULL, o->key};
		shortopts[s++] = (char)o->key;
		if (o->arg)
			shortopts[s++] = ':';
	}
	longopts[n] = (struct option){0};
	shortopts[s] = '\0';

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			const char *what = argv[optind - 1];
			char shortname[4];

			/* An unknown letter may sit inside a cluster such as -jz. */
			if (c == '?' && optopt) {
				snprintf(shortname, sizeof(shortname), "-%c", optopt);
				what = shortname;
			}
			fprintf(stderr, "gdx-doctor %s: %s option %s\n", cmd->name,
				c == ':' ? "missing the argument of" : "unknown", what);
			fprintf(stderr, "try 'gdx-doctor %s --help'\n", cmd->name);
			return DOCTOR_USAGE;
		}
		c = on_opt(ctx, c, optarg);
		if (c != DOCTOR_OK)
			return c;
	}
	return DOCTOR_OK;
}

/* ---- topo ---- */

struct topo_opts {
	const char *xml;
	bool json;
	bool help;
};

static int topo_on_opt(void *ctx, int key, const char *arg)
{
	struct topo_opts *o = ctx;

	switch (key) {
	case 'x': o->xml = arg; break;
	case 'j': o->json = true; break;
	case 'h': o->help = true; break;
	}
	return DOCTOR_OK;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void json_str_or_null(FILE *f, const char *s)
{
	if (s && s[0])
		json_str(f, s);
	else
		fputs("null", f);
}

static void json_numa(FILE *f, int numa)
{
	if (numa >= 0)
		fprintf(f, "%d", numa);
	else
		fputs("null", f);
}

static int topo_json(const struct gdx_topo *t, const char *source, FILE *f)
{
	int nn = gdx_topo_nnics(t);
	int *order = calloc((size_t)nn + 1, sizeof(*order));

	if (!order)
		return -ENOMEM;
	fputs("{\"source\": ", f);
	json_str_or_null(f, source);
	fputs(",\n \"gpus\": [", f);
	for (int g = 0; g < gdx_topo_ngpus(t); g++) {
		const struct gdx_topo_gpu *gpu = gdx_topo_gpu(t, g);
		int n = gdx_topo_gpu_nics(t, g, order, nn);
		int r = gdx_topo_gpu_rail(t, g, NULL, 0);

		fprintf(f, "%s\n  {\"pci\": ", g ? "," : "");
		json_str(f, gpu->pci);
		fputs(", \"numa\": ", f);
		json_numa(f, gpu->numa);
		fputs(",\n   \"nics\": [", f);
		for (int i = 0; i < n; i++) {
			const struct gdx_topo_nic *nic = gdx_topo_nic(t, order[i]);

			fprintf(f, "%s{\"name\": ", i ? ",\n            " : "");
			json_str(f, nic->name);
			fputs(", \"pci\": ", f);
			json_str_or_null(f, nic->pci);
			fprintf(f, ", \"path\": \"%s\"}",
				gdx_path_name(gdx_topo_path(t, g, order[i])));
		}
		fputs("],\n   \"rail\": [", f);
		/* The rail is the head of the nearest-first list. */
		for (int i = 0; i < r; i++) {
			fputs(i ? ", " : "", f);
			json_str(f, gdx_topo_nic(t, order[i])->name);
		}
		fputs("]}", f);
	}
	fputs("],\n \"nics\": [", f);
	for (int i = 0; i < nn; i++) {
		const struct gdx_topo_nic *nic = gdx_topo_nic(t, i);

		fprintf(f, "%s\n  {\"name\": ", i ? "," : "");
		json_str(f, nic->name);
		fputs(", \"pci\": ", f);
		json_str_or_null(f, nic->pci);
		fputs(", \"numa\": ", f);
		json_numa(f, nic->numa);
		fprintf(f, ", \"rail_gpus\": %d}", nic->rail_gpus);
	}
	fputs("],\n \"groups\": [", f);
	for (int i = 0; i < gdx_topo_ngroups(t); i++) {
		const struct gdx_topo_group *grp = gdx_topo_group(t, i);

		fprintf(f, "%s\n  {\"nics\": [", i ? "," : "");
		for (int k = 0; k < grp->nnics; k++) {
			fputs(k ? ", " : "", f);
			json_str(f, gdx_topo_nic(t, grp->nics[k])->name);
		}
		fputs("], \"gpus\": [", f);
		for (int k = 0; k < grp->ngpus; k++) {
			fputs(k ? ", " : "", f);
			json_str(f, gdx_topo_gpu(t, grp->gpus[k])->pci);
		}
		fputs("]}", f);
	}
	fputs("]}\n", f);
	free(order);
	return 0;
}

static void topo_print_numa(FILE *f, int numa)
{
	if (numa >= 0)
		fprintf(f, "%d", numa);
	else
		fputs("?", f);
}

static void topo_matrix(const struct gdx_topo *t, FILE *f)
{
	int ng = gdx_topo_ngpus(t), nn = gdx_topo_nnics(t);
	int w = (int)strlen("UNKNOWN");

	for (int i = 0; i < nn; i++)
		if ((int)strlen(gdx_topo_nic(t, i)->name) > w)
			w = (int)strlen(gdx_topo_nic(t, i)->name);
	fprintf(f, "\n%-14s", "GPU");
	for (int i = 0; i < nn; i++)
		fprintf(f, "%-*s", w + 2, gdx_topo_nic(t, i)->name);
	fputs("NUMA\n", f);
	for (int g = 0; g < ng; g++) {
		fprintf(f, "%-14s", gdx_topo_gpu(t, g)->pci);
		for (int i = 0; i < nn; i++)
			fprintf(f, "%-*s", w + 2, gdx_path_name(gdx_topo_path(t, g, i)));
		topo_print_numa(f, gdx_topo_gpu(t, g)->numa);
		fputc('\n', f);
	}
	if (!nn)
		return;
	fputs("\n"
	      "  PIX  = same PCIe switch (at most one switch between GPU and NIC)\n"
	      "  PXB  = several PCIe switches, no host bridge\n"
	      "  PHB  = through a PCIe host bridge (the CPU's root complex)\n"
	      "  NODE = between PCIe host bridges within one NUMA node\n"
	      "  SYS  = across the interconnect between NUMA nodes (QPI/UPI, Infinity Fabric)\n",
	      f);
	for (int i = 0; i < nn; i++)
		if (!gdx_topo_nic(t, i)->pci[0]) {
			fputs("  UNKNOWN = the NIC has no PCI device (virtual, such as rxe)\n", f);
			break;
		}
}

static void topo_groups(const struct gdx_topo *t, FILE *f)
{
	fputs("\nRail groups (each GPU uses the NICs at its best path class):\n", f);
	for (int i = 0; i < gdx_topo_ngroups(t); i++) {
		const struct gdx_topo_group *grp = gdx_topo_group(t, i);
		int col = fprintf(f, "  group %d: ", i);

		for (int k = 0; k < grp->nnics; k++)
			col += fprintf(f, "%s%s", k ? "," : "",
				       gdx_topo_nic(t, grp->nics[k])->name);
		if (!grp->ngpus) {
			const char *why = gdx_topo_nic(t, grp->nics[0])->pci[0] ? "near no GPU"
										: "no PCI device";

			fprintf(f, "%*s(%s: stands alone)\n", col < 32 ? 32 - col : 1, "", why);
			continue;
		}
		fprintf(f, "%*s<- ", col < 32 ? 32 - col : 1, "");
		for (int k = 0; k < grp->ngpus; k++)
			fprintf(f, "%s%s %s", k ? ", " : "", gdx_topo_gpu(t, grp->gpus[k])->pci,
				gdx_path_name(gdx_topo_path(t, grp->gpus[k], grp->nics[0])));
		fputc('\n', f);
	}
	for (int g = 0; g < gdx_topo_ngpus(t); g++)
		if (gdx_topo_gpu_rail(t, g, NULL, 0) == 0)
			fprintf(f, "  GPU %s has no PCI NIC: no rail\n", gdx_topo_gpu(t, g)->pci);
}

static void topo_nics(const struct gdx_topo *t, FILE *f)
{
	int ng = gdx_topo_ngpus(t);

	fputs("\nNICs:\n", f);
	for (int i = 0; i < gdx_topo_nnics(t); i++) {
		const struct gdx_topo_nic *nic = gdx_topo_nic(t, i);

		fprintf(f, "  %-10s %-14s NUMA ", nic->name, nic->pci[0] ? nic->pci : "(no PCI)");
		topo_print_numa(f, nic->numa);
		if (nic->rail_gpus > 1)
			fprintf(f, "   shared by %d GPUs\n", nic->rail_gpus);
		else if (nic->rail_gpus == 1)
			fputs("   rail of 1 GPU\n", f);
		else if (ng)
			fputs("   in no GPU's rail\n", f);
		else
			fputc('\n', f);
	}
}

/* GPUs whose nearest NIC is beyond NCCL's default NCCL_NET_GDR_LEVEL (PXB):
 * NCCL will stage their traffic through host memory. */
static void topo_notes(const struct gdx_topo *t, FILE *f)
{
	bool header = false;

	for (int g = 0; g < gdx_topo_ngpus(t); g++) {
		int nic;

		if (gdx_topo_gpu_rail(t, g, &nic, 1) < 1 ||
		    gdx_topo_path(t, g, nic) <= GDX_PATH_PXB)
			continue;
		if (!header)
			fputs("\nNotes:\n", f);
		header = true;
		fprintf(f,
			"  GPU %s: nearest NIC %s is %s; NCCL uses GPUDirect RDMA only up to\n"
			"    NCCL_NET_GDR_LEVEL (default PXB), so this GPU's traffic is staged\n",
			gdx_topo_gpu(t, g)->pci, gdx_topo_nic(t, nic)->name,
			gdx_path_name(gdx_topo_path(t, g, nic)));
	}
}

static void topo_human(const struct gdx_topo *t, const char *source, FILE *f)
{
	fprintf(f, "Topology of %s: %d GPU(s), %d RDMA NIC(s)\n", source ? source : "this machine",
		gdx_topo_ngpus(t), gdx_topo_nnics(t));
	if (gdx_topo_ngpus(t))
		topo_matrix(t, f);
	if (gdx_topo_ngroups(t) || gdx_topo_ngpus(t))
		topo_groups(t, f);
	if (gdx_topo_nnics(t))
		topo_nics(t, f);
	topo_notes(t, f);
}

static int doctor_topo(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct topo_opts o = {0};
	struct gdx_topo *t;
	char why[512];
	int ret;

	ret = doctor_parse(cmd, argc, argv, topo_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.help) {
		doctor_cmd_usage(cmd, stdout);
		return DOCTOR_OK;
	}
	if (optind < argc) {
		fprintf(stderr, "gdx-doctor topo: unexpected argument '%s'\n", argv[optind]);
		return DOCTOR_USAGE;
	}

	ret = gdx_topo_load(o.xml, &t, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "gdx-doctor topo: %s\n", why);
		return ret == -ENOMEM ? DOCTOR_ERROR : DOCTOR_NO_TOPO;
	}
	/* The report is printed even when a GPU or NIC is missing: it shows
	 * what was found; the exit status says what was not. */
	if (o.json)
		ret = topo_json(t, o.xml, stdout);
	else
		topo_human(t, o.xml, stdout);
	/* The report first, then what is missing, in that order on a terminal. */
	fflush(stdout);
	if (ret) {
		fprintf(stderr, "gdx-doctor topo: out of memory\n");
		ret = DOCTOR_ERROR;
	} else if (!gdx_topo_ngpus(t)) {
		fprintf(stderr, "gdx-doctor topo: no NVIDIA GPU found in %s\n",
			o.xml ? o.xml : "this machine");
		ret = DOCTOR_NO_GPU;
	} else if (!gdx_topo_nnics(t)) {
		fprintf(stderr, "gdx-doctor topo: no RDMA NIC found in %s\n",
			o.xml ? o.xml : "this machine");
		ret = DOCTOR_NO_NIC;
	}
	gdx_topo_free(t);
	return ret;
}

static const struct doctor_opt topo_opts[] = {
	{"xml", 'x', "FILE",
	 "read an hwloc XML topology (lstopo --of xml) instead of this machine"},
	{"json", 'j', NULL, "print JSON instead of the table"},
	{"help", 'h', NULL, "show this help"},
	{0},
};

/* ---- env ---- */

struct env_opts {
	bool markdown;
	bool help;
};

static int env_on_opt(void *ctx, int key, const char *arg)
{
	struct env_opts *o = ctx;

	(void)arg;
	switch (key) {
	case 'm': o->markdown = true; break;
	case 'h': o->help = true; break;
	}
	return DOCTOR_OK;
}

/* Table cell text: '|' would end the cell, the others would start markup. */
static void md_cell(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (strchr("|*`<\\", *s))
			fputc('\\', f);
		fputc(*s, f);
	}
}

/* The README's reference: the table only, never the environment, so that the
 * output is the same on every machine. */
static void env_markdown(FILE *f)
{
	fputs("| variable | type | default | meaning |\n|---|---|---|---|\n", f);
	for (int i = 0; i < gdx_param_count; i++) {
		const struct gdx_param_info *p = &gdx_param_infos[i];

		fprintf(f, "| `NCCL_GDX_%s` | %s | ", p->name, p->type);
		if (!p->def[0])
			fputs("*empty*", f);
		else if (strpbrk(p->def, "`|"))
			md_cell(f, p->def);
		else
			fprintf(f, "`%s`", p->def);
		fputs(" | ", f);
		md_cell(f, p->help);
		fputs(" |\n", f);
	}
}

static void env_text(FILE *f)
{
	int w = 0;

	for (int i = 0; i < gdx_param_count; i++)
		if ((int)strlen(gdx_param_infos[i].name) > w)
			w = (int)strlen(gdx_param_infos[i].name);
	for (int i = 0; i < gdx_param_count; i++) {
		const struct gdx_param_info *p = &gdx_param_infos[i];
		char var[96];
		const char *v;

		snprintf(var, sizeof(var), "NCCL_GDX_%s", p->name);
		v = getenv(var);
		fprintf(f, "%-*s  %s  default %-8s  ", w + 9, var, p->type,
			p->def[0] ? p->def : "(empty)");
		if (v)
			fprintf(f, "set to \"%s\"\n", v);
		else
			fputs("not set\n", f);
		fprintf(f, "    %s\n", p->help);
	}
}

/* NCCL_GDX_* names in the environment that the table does not have: the
 * plugin ignores them, and a misspelt name silently keeps the default. */
static int env_unknown(void)
{
	extern char **environ;
	int n = 0;

	for (char **e = environ; *e; e++) {
		const char *name = *e + strlen("NCCL_GDX_");
		size_t len = strcspn(name, "=");
		bool known = false;

		if (strncmp(*e, "NCCL_GDX_", strlen("NCCL_GDX_")))
			continue;
		for (int i = 0; i < gdx_param_count && !known; i++)
			known = strlen(gdx_param_infos[i].name) == len &&
				!strncmp(gdx_param_infos[i].name, name, len);
		if (known)
			continue;
		fprintf(stderr,
			"gdx-doctor env: NCCL_GDX_%.*s is set, but the plugin has no such "
			"variable (misspelt?)\n",
			(int)len, name);
		n++;
	}
	return n;
}

static int doctor_env(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct env_opts o = {0};
	int ret;

	ret = doctor_parse(cmd, argc, argv, env_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.help) {
		doctor_cmd_usage(cmd, stdout);
		return DOCTOR_OK;
	}
	if (optind < argc) {
		fprintf(stderr, "gdx-doctor env: unexpected argument '%s'\n", argv[optind]);
		return DOCTOR_USAGE;
	}
	if (o.markdown) {
		env_markdown(stdout);
		return DOCTOR_OK;
	}
	env_text(stdout);
	fflush(stdout);
	ret = DOCTOR_OK;
	if (env_unknown())
		ret = DOCTOR_BAD_ENV;
	/* The plugin's own parser: its WARN names the variable it refuses. */
	if (gdx_params_load()) {
		fprintf(stderr, "gdx-doctor env: the plugin refuses these settings; its init "
				"would fail\n");
		ret = DOCTOR_BAD_ENV;
	}
	return ret;
}

static const struct doctor_opt env_opts[] = {
	{"markdown", 'm', NULL,
	 "print the reference as a Markdown table (the README's), ignoring the environment"},
	{"help", 'h', NULL, "show this help"},
	{0},
};

/* ---- check ---- */

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
	bool json;
	bool help;
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
};

struct check_problem {
	enum gdx_gdr_level level; /* OK: a note */
	char text[GDX_GDR_LINE_LEN];
};

struct check_nccl {
	bool found, in_path;
	char path[PATH_MAX];
	int version; /* NCCL_VERSION_CODE, 0 when unknown */
	int api;     /* newest net API it tries; 0 when it cannot load this plugin */
	const char *plugin_env;
	char plugin_path[PATH_MAX]; /* where NCCL_NET_PLUGIN leads, "" when nowhere */
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
	case 'h': o->help = true; break;
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
	best = n > 0 ? gdx_gid_choose(gids, n, 4, 2) : -1;
	if (best >= 0)
		gdx_gid_str(gids[best].raw, cp->gid, sizeof(cp->gid));
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

/* The DMA-BUF probe needs each device's protection domain: live only. */
static void check_probe_dmabuf(struct check *c)
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

/* NCCL_VERSION_CODE: 22809 for 2.28.9; before 2.9, 2803 for 2.8.3. */
static void check_nccl_version(int code, int *major, int *minor, int *patch)
{
	int base = code >= 10000 ? 10000 : 1000;

	*major = code / base;
	*minor = code % base / 100;
	*patch = code % 100;
}

/* The newest net API a NCCL release tries (README of the plugin API). */
static int check_nccl_api(int code)
{
	int major, minor, patch;

	check_nccl_version(code, &major, &minor, &patch);
	if (major != 2 || minor < 19)
		return major > 2 ? 12 : 0;
	if (minor == 19)
		return 7;
	if (minor <= 23)
		return 8;
	if (minor <= 25)
		return 9;
	if (minor <= 27)
		return 10;
	if (minor <= 29)
		return 11;
	return 12;
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
		n->api = check_nccl_api(n->version);
		/* Never dlclose: a C++ library may not unload cleanly. */
	}
	n->plugin_env = getenv("NCCL_NET_PLUGIN");
	/* As NCCL resolves it: the value itself (2.21+), then libnccl-net-<value>.so. */
	snprintf(name, sizeof(name), "libnccl-net-%s.so",
		 n->plugin_env && *n->plugin_env ? n->plugin_env : "gdx");
	h = NULL;
	if (n->plugin_env && *n->plugin_env)
		h = check_dlopen(n->plugin_env, n->plugin_path, sizeof(n->plugin_path));
	if (!h)
		h = check_dlopen(name, n->plugin_path, sizeof(n->plugin_path));
	if (h && !dlsym(h, "ncclNetPlugin_v7"))
		n->plugin_path[0] = '\0'; /* another plugin, or not one */
	if (!h)
		n->plugin_path[0] = '\0';
}

static void check_nccl_problems(struct check *c)
{
	const struct check_nccl *n = &c->nccl;
	int major, minor, patch;

	if (!n->found) {
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "no libnccl.so.2 in the library path or the usual directories (a "
			      "job may bring its own, e.g. in a Python wheel)");
		return;
	}
	check_nccl_version(n->version, &major, &minor, &patch);
	if (n->version && !n->api)
		check_problem(c, GDX_GDR_LEVEL_DEGRADED,
			      "NCCL %d.%d.%d (%s) does not load this plugin: it needs net API v7, "
			      "NCCL 2.19 or later; fix: use NCCL 2.19 or later",
			      major, minor, patch, n->path);
	if (!n->in_path)
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "%s is not in the library path; the job's NCCL may be another one",
			      n->path);
	if (!n->plugin_env || !*n->plugin_env)
		check_problem(c, GDX_GDR_LEVEL_OK,
			      "NCCL_NET_PLUGIN is not set: NCCL opens libnccl-net.so, not this "
			      "plugin; fix: export NCCL_NET_PLUGIN=gdx");
	else if (!n->plugin_path[0])
		check_problem(c, GDX_GDR_LEVEL_DEGRADED,
			      "NCCL_NET_PLUGIN=%s does not lead to this plugin "
			      "(libnccl-net-gdx.so, exporting ncclNetPlugin_v7); fix: add its "
			      "directory to LD_LIBRARY_PATH",
			      n->plugin_env);
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
	/* The library NCCL would load is this machine's, never a fixture's. */
	if (!p->from_facts) {
		check_nccl(c);
		check_nccl_problems(c);
	}
	return 0;
}

/* ---- check: output ---- */

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

static void check_human_host(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;
	char text[GDX_GDR_TEXT_LEN], have[32];

	fputs("\nHost\n", f);
	check_bytes(p->memlock, have, sizeof(have));
	fprintf(f, "  %-13s %s%s\n", "memlock", have,
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
	else
		fprintf(f, "  %-13s %s (%s)\n", "CUDA driver",
			p->cuda == GDX_GDR_CUDA_NONE ? "none" : "not working", p->cuda_why);
	fprintf(f, "  %-13s NCCL_NET_GDR_LEVEL=%s\n", "GDR level",
		p->gdr_level == GDX_PATH_NODE ? "PHB" : gdx_path_name(p->gdr_level));
	if (!c->nccl_checked) {
		fprintf(f, "  %-13s not checked (facts file)\n", "NCCL");
	} else if (!c->nccl.found) {
		fprintf(f, "  %-13s not found\n", "NCCL");
	} else {
		int major, minor, patch;

		check_nccl_version(c->nccl.version, &major, &minor, &patch);
		fprintf(f, "  %-13s %d.%d.%d at %s: ", "NCCL", major, minor, patch, c->nccl.path);
		if (!c->nccl.api)
			fputs("too old for this plugin (needs 2.19)\n", f);
		else
			fprintf(f, "loads this plugin through ncclNetPlugin_v%d\n", c->nccl.api);
		fprintf(f, "  %-13s %s%s%s\n", "plugin",
			c->nccl.plugin_path[0] ? c->nccl.plugin_path : "not found",
			c->nccl.plugin_env ? ", NCCL_NET_PLUGIN=" : " (NCCL_NET_PLUGIN not set)",
			c->nccl.plugin_env ? c->nccl.plugin_env : "");
	}
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
	fprintf(f, "\nResult: %s (exit %d)\n", check_status_names[c->status], (int)c->status);
}

static void json_key_str(FILE *f, const char *key, const char *s)
{
	fprintf(f, "\"%s\": ", key);
	json_str_or_null(f, s);
}

static void json_tri(FILE *f, int v)
{
	fputs(v < 0 ? "null" : v ? "true" : "false", f);
}

static void check_json_host(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;
	static const char *const cuda[] = {"none", "error", "ok"};

	fputs(",\n \"host\": {", f);
	json_key_str(f, "kernel", p->kernel);
	if (p->memlock == GDX_GDR_MEMLOCK_INFINITY)
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
	fprintf(f, ", \"in_library_path\": %s, \"version_code\": %d, \"net_api\": %d, ",
		c->nccl.in_path ? "true" : "false", c->nccl.version, c->nccl.api);
	json_key_str(f, "nccl_net_plugin", c->nccl.plugin_env);
	fputs(", ", f);
	json_key_str(f, "plugin_path", c->nccl.plugin_path);
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

static void check_json(const struct check *c, FILE *f)
{
	const struct gdx_gdr_probe *p = c->p;

	fputs("{", f);
	json_key_str(f, "source", c->source);
	fprintf(f, ", \"policy\": \"%s\", \"status\": \"%s\", \"exit\": %d,\n \"ports\": [",
		gdx_gdr_policy_name(c->policy), check_status_names[c->status], (int)c->status);
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
		fputs("}", f);
	}
	fputs("]", f);
	check_json_host(c, f);
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

static int doctor_check(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct check_opts o = {0};
	struct gdx_gdr_opts go = {0};
	struct gdx_topo *t = NULL;
	struct check *c;
	char why[512];
	int ret;

	ret = doctor_parse(cmd, argc, argv, check_on_opt, &o);
	if (ret != DOCTOR_OK)
		return ret;
	if (o.help) {
		doctor_cmd_usage(cmd, stdout);
		return DOCTOR_OK;
	}
	if (optind < argc) {
		fprintf(stderr, "gdx-doctor check: unexpected argument '%s'\n", argv[optind]);
		return DOCTOR_USAGE;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return DOCTOR_ERROR;
	c->policy_env = getenv("NCCL_GDX_GDR");
	if (gdx_gdr_policy_parse(c->policy_env, &c->policy))
		check_problem(c, GDX_GDR_LEVEL_BROKEN,
			      "NCCL_GDX_GDR=%s is not auto, on or off: the plugin's init fails",
			      c->policy_env);
	/* An explicit topology must load; this machine's may be missing (a note). */
	if (o.xml) {
		ret = gdx_topo_load(o.xml, &t, why, sizeof(why));
		if (ret) {
			fprintf(stderr, "gdx-doctor check: %s\n", why);
			free(c);
			return ret == -ENOMEM ? DOCTOR_ERROR : DOCTOR_NO_TOPO;
		}
	}
	go.sysfs_root = o.sysfs_root ? o.sysfs_root : "/sys";
	go.topo = t;
	go.facts = getenv("GDX_GDR_FACTS"); /* tests only, see gdx_gdr.h */
	if (go.facts && !*go.facts)
		go.facts = NULL;
	ret = gdx_gdr_probe_init(&go, &c->p, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "gdx-doctor check: %s\n", why);
		gdx_topo_free(t);
		free(c);
		return DOCTOR_ERROR;
	}
	c->source = o.sysfs_root ? o.sysfs_root : "this machine";
	if (!c->p->have_topo)
		check_problem(c, GDX_GDR_LEVEL_OK, "no topology (%s): path classes unknown",
			      c->p->topo_why);
	if (!c->p->from_facts)
		check_probe_dmabuf(c);
	ret = check_run(c);
	if (ret) {
		fprintf(stderr, "gdx-doctor check: out of memory\n");
		ret = DOCTOR_ERROR;
	} else {
		if (o.json)
			check_json(c, stdout);
		else
			check_human(c, stdout);
		ret = (int)c->status;
	}
	free(c->nic_v);
	free(c->pair_v);
	gdx_gdr_probe_free(c->p);
	gdx_topo_free(t);
	free(c);
	return ret;
}

static const struct doctor_opt check_opts[] = {
	{"sysfs-root", 's', "DIR", "read sysfs under DIR instead of /sys (fixtures)"},
	{"xml", 'x', "FILE",
	 "read an hwloc XML topology (lstopo --of xml) instead of this machine"},
	{"json", 'j', NULL, "print JSON instead of the tables"},
	{"help", 'h', NULL, "show this help"},
	{0},
};

/* ---- log ---- */

/*
 * What a job really did, from its NCCL_DEBUG=INFO output: the plugin's line
 * per NIC (direct or staged, and why) and the byte counts each comm logs when
 * it closes. Bytes through host memory on a NIC that advertises GPUDirect RDMA
 * mean NCCL staged them anyway (NCCL_NET_GDR_LEVEL, or host buffers): the
 * silent slowdown this command exists to show.
 */
#define LOG_MAX_NICS 64

struct log_nic {
	char name[64];
	char verdict[256];
	unsigned long long gpu, host;
	int comms;
};

static struct log_nic *log_nic(struct log_nic *nics, int *n, const char *name, size_t len)
{
	for (int i = 0; i < *n; i++)
		if (strlen(nics[i].name) == len && !strncmp(nics[i].name, name, len))
			return &nics[i];
	if (*n == LOG_MAX_NICS || len >= sizeof(nics[0].name))
		return NULL;
	memset(&nics[*n], 0, sizeof(nics[0]));
	memcpy(nics[*n].name, name, len);
	return &nics[(*n)++];
}

static int log_on_opt(void *ctx, int key, const char *arg)
{
	(void)arg;
	if (key == 'h')
		*(int *)ctx = 1;
	return DOCTOR_OK;
}

static int doctor_log(const struct doctor_cmd *cmd, int argc, char **argv)
{
	struct log_nic nics[LOG_MAX_NICS];
	int n = 0, help = 0, ret, staged_direct = 0;
	char line[2048];
	FILE *f;

	ret = doctor_parse(cmd, argc, argv, log_on_opt, &help);
	if (ret != DOCTOR_OK)
		return ret;
	if (help) {
		doctor_cmd_usage(cmd, stdout);
		return DOCTOR_OK;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "gdx-doctor log: give one log file ('-' for standard input)\n");
		return DOCTOR_USAGE;
	}
	f = strcmp(argv[optind], "-") ? fopen(argv[optind], "r") : stdin;
	if (!f) {
		fprintf(stderr, "gdx-doctor log: %s: %s\n", argv[optind], strerror(errno));
		return DOCTOR_NO_TOPO;
	}
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "NET/GDX : "), *colon, *c;
		unsigned long long gpu, host;
		struct log_nic *nic;

		if (!p)
			continue;
		p += strlen("NET/GDX : ");
		colon = strchr(p, ':');
		if (!colon || strchr(p, ' ') < colon)
			continue; /* not "<nic>: ..." */
		c = strstr(colon, " closed: ");
		if (c &&
		    sscanf(c, " closed: %llu bytes GPU-direct, %llu bytes", &gpu, &host) == 2) {
			nic = log_nic(nics, &n, p, (size_t)(colon - p));
			if (nic) {
				nic->gpu += gpu;
				nic->host += host;
				nic->comms++;
			}
		} else if (strstr(colon, ": GPUDirect RDMA via ") == colon ||
			   strstr(colon, ": staged through host memory") == colon) {
			nic = log_nic(nics, &n, p, (size_t)(colon - p));
			if (nic)
				snprintf(nic->verdict, sizeof(nic->verdict), "%.*s",
					 (int)strcspn(colon + 2, "\n"), colon + 2);
		}
	}
	if (f != stdin)
		fclose(f);
	if (n == 0) {
		printf("no NET/GDX lines: was the plugin loaded (NCCL_NET_PLUGIN=gdx) and the log "
		       "written with NCCL_DEBUG=INFO?\n");
		return DOCTOR_NO_NIC;
	}
	printf("%-12s %6s %18s %18s  %s\n", "NIC", "comms", "GPU-direct bytes", "host bytes",
	       "the plugin's verdict at init");
	for (int i = 0; i < n; i++) {
		bool direct = !strncmp(nics[i].verdict, "GPUDirect", 9);

		printf("%-12s %6d %18llu %18llu  %s\n", nics[i].name, nics[i].comms, nics[i].gpu,
		       nics[i].host, nics[i].verdict[0] ? nics[i].verdict : "(no verdict line)");
		if (direct && nics[i].host)
			staged_direct++;
	}
	if (staged_direct) {
		printf("\n%d NIC(s) advertise GPUDirect RDMA but moved bytes through host memory: "
		       "NCCL staged them (GPU-NIC path beyond NCCL_NET_GDR_LEVEL, or host "
		       "buffers); see gdx-doctor check\n",
		       staged_direct);
		return 1;
	}
	return DOCTOR_OK;
}

static const struct doctor_opt log_opts[] = {
	{"help", 'h', NULL, "show this help"},
	{0},
};

/* Later checks (devices, gdr) are one more row and one more function. */
static const struct doctor_cmd doctor_cmds[] = {
	{"topo", "GPU-NIC PCIe path classes, the rail groups the plugin forms, NUMA nodes",
	 topo_opts, doctor_topo},
	{"env", "every NCCL_GDX_* variable: type, default, value set here, meaning", env_opts,
	 doctor_env},
	{"check", "GPUDirect RDMA end to end: ports, memlock, peer memory, DMA-BUF, CUDA, paths",
	 check_opts, doctor_check},
	{"log", "what a job did, from its NCCL_DEBUG=INFO log: bytes GPU-direct vs host per NIC",
	 log_opts, doctor_log},
};

#define DOCTOR_NCMDS ((int)(sizeof(doctor_cmds) / sizeof(doctor_cmds[0])))

static void doctor_usage(FILE *f)
{
	fputs("usage: gdx-doctor [COMMAND] [options]    (no COMMAND: check)\n"
	      "       gdx-doctor COMMAND --help\n"
	      "Checks what libnccl-net-gdx will find on this machine.\n\ncommands:\n",
	      f);
	for (int i = 0; i < DOCTOR_NCMDS; i++)
		fprintf(f, "  %-10s %s\n", doctor_cmds[i].name, doctor_cmds[i].summary);
	fprintf(f, "  %-10s %s\n  %-10s %s\n\n%s", "help", "this text, or a command's help",
		"--version", "the version", doctor_exit_help);
}

static const struct doctor_cmd *doctor_find(const char *name)
{
	for (int i = 0; i < DOCTOR_NCMDS; i++)
		if (!strcmp(doctor_cmds[i].name, name))
			return &doctor_cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct doctor_cmd *cmd;
	int ret;

	if (argc < 2) {
		/* The one command an operator runs before a job needs no name;
		 * with nothing to parse, argv[0] stands in for it. */
		cmd = doctor_find("check");
		goto run;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && (cmd = doctor_find(argv[2]))) {
			doctor_cmd_usage(cmd, stdout);
			return DOCTOR_OK;
		}
		doctor_usage(stdout);
		return DOCTOR_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("gdx-doctor %s\n", GDX_VERSION);
		return DOCTOR_OK;
	}
	cmd = doctor_find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "gdx-doctor: unknown command '%s'\n", argv[1]);
		doctor_usage(stderr);
		return DOCTOR_USAGE;
	}
	/* The subcommand sees its own name as argv[0]. */
	argc--;
	argv++;
run:
	ret = cmd->run(cmd, argc, argv);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "gdx-doctor: cannot write the output: %s\n", strerror(errno));
		return DOCTOR_ERROR;
	}
	return ret;
}
