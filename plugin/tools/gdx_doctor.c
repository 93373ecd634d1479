/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor: tells what the plugin will find on this machine, using the
 * plugin's own probes. One subcommand per question; `topo` shows the PCIe
 * path class between every GPU and RDMA NIC (as `nvidia-smi topo -m` does),
 * the rail groups the plugin would form and the NUMA node of each device;
 * `env` lists every NCCL_GDX_* variable from the plugin's own table.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gdx/gdx_param.h>
#include <gdx/gdx_topo.h>

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
	"  6  env: a NCCL_GDX_* value the plugin refuses, or an unknown NCCL_GDX_ name\n";

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

/* Later checks (devices, gdr) are one more row and one more function. */
static const struct doctor_cmd doctor_cmds[] = {
	{"topo", "GPU-NIC PCIe path classes, the rail groups the plugin forms, NUMA nodes",
	 topo_opts, doctor_topo},
	{"env", "every NCCL_GDX_* variable: type, default, value set here, meaning", env_opts,
	 doctor_env},
};

#define DOCTOR_NCMDS ((int)(sizeof(doctor_cmds) / sizeof(doctor_cmds[0])))

static void doctor_usage(FILE *f)
{
	fputs("usage: gdx-doctor COMMAND [options]\n"
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
		doctor_usage(stderr);
		return DOCTOR_USAGE;
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
	ret = cmd->run(cmd, argc - 1, argv + 1);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "gdx-doctor: cannot write the output: %s\n", strerror(errno));
		return DOCTOR_ERROR;
	}
	return ret;
}
