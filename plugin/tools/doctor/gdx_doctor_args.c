/* SPDX-License-Identifier: MIT */
/*
 * What every gdx-doctor subcommand's command line shares: the options
 * parsed from its table (getopt_long), -h/--help and the usage it prints,
 * the operands counted, and the exit statuses that --help lists.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"

const char doctor_exit_help[] =
	"exit status (one table for every command, and gdx-bench's):\n"
	"  0   healthy: all found, nothing refused\n"
	"  1   degraded (check, log): it works, but a GPU is staged where it could be\n"
	"      direct, or its direct path is degraded (ACS, translating IOMMU, across\n"
	"      sockets, tiny BAR1); log: bytes staged on a NIC that could be direct;\n"
	"      check --allow-degraded exits 0 for it; gdx-bench never gives it\n"
	"  2   broken (check): NCCL will not load the plugin (NCCL_NET_PLUGIN leads\n"
	"      elsewhere, a path before NCCL 2.21, an NCCL that tries none of its\n"
	"      tables, NCCL_NET naming another network), no active RDMA port, memlock\n"
	"      too low to register, a RoCE port without a RoCE v2 GID, a NCCL_GDX_*\n"
	"      value init refuses, or NCCL_GDX_GDR=on that cannot be honoured;\n"
	"      log: the plugin did not start (its init failed); gdx-bench: the run\n"
	"      failed (1 up to 0.4.5)\n"
	"  3   an input cannot be read: --xml, --sysfs-root, the log file or a fleet\n"
	"      report is missing, unreadable or not what it should be, or hwloc cannot\n"
	"      read this machine\n"
	"  4   topo: no NVIDIA GPU found\n"
	"  5   topo: no RDMA NIC found\n"
	"  6   env: a NCCL_GDX_* value the plugin refuses, or an unknown NCCL_GDX_ name\n"
	"  7   log: no line of the plugin in the log\n"
	"  8   log: the plugin's init lines, but no byte counts (no data lines)\n"
	"  9   fleet: the nodes differ (an attribute is not the same on every node)\n"
	"  10  hang: a comm has waited longer than the threshold\n"
	"  64  bad command line\n"
	"  70  internal error (out of memory, cannot write the output)\n";

static const struct doctor_opt doctor_help_opt = {"help", 'h', NULL, "show this help"};

/* The columns of n bytes of UTF-8: its characters. */
static int doctor_cols(const char *s, size_t n)
{
	int cols = 0;

	for (size_t i = 0; i < n; i++)
		cols += ((unsigned char)s[i] & 0xc0) != 0x80;
	return cols;
}

/* n bytes of s as they are, a new line (indented) wherever the next
 * character would pass the last column: a value, cut anywhere but inside a
 * character. */
static int doctor_wrap_hard(FILE *f, int col, int indent, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (col >= DOCTOR_COLUMNS) {
				fprintf(f, "\n%*s", indent, "");
				col = indent;
			}
			col++;
		}
		fputc(s[i], f);
	}
	return col;
}

int doctor_wrap(FILE *f, int col, int indent, const char *text, bool hard)
{
	size_t lead = strspn(text, " ");
	bool first = true;

	if (hard)
		return doctor_wrap_hard(f, col, indent, text, strlen(text));
	/* the spaces it starts with separate it from what is on the line: kept
	 * when its first word fits after them, else a new line */
	if (lead) {
		text += lead;
		if (col + (int)lead + doctor_cols(text, strcspn(text, " ")) <= DOCTOR_COLUMNS) {
			col += fprintf(f, "%*s", (int)lead, "");
		} else {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		}
	}
	while (*text) {
		size_t n = strcspn(text, " ");
		int cols = doctor_cols(text, n);

		if (!first && col + 1 + cols <= DOCTOR_COLUMNS) {
			fputc(' ', f);
			col++;
		} else if (!first || (col > indent && col + cols > DOCTOR_COLUMNS)) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		}
		col = doctor_wrap_hard(f, col, indent, text, n);
		first = false;
		text += n;
		text += strspn(text, " ");
	}
	return col;
}

void doctor_text(FILE *f, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n"), indent = strspn(text, " ");
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)(n - indent), text + indent);
		fprintf(f, "%*s", (int)indent, "");
		doctor_wrap(f, (int)indent, (int)indent, line, false);
		fputc('\n', f);
		text += n + (text[n] == '\n');
	}
}

void doctor_cmd_usage(const struct doctor_cmd *cmd, FILE *f)
{
	fprintf(f, "usage: gdx-doctor %s [options]%s%s\n", cmd->name, cmd->max_operands ? " " : "",
		cmd->max_operands > 1 ? "[FILE...]"
		: cmd->max_operands   ? "FILE"
				      : "");
	doctor_text(f, cmd->summary);
	fputs("\noptions:\n", f);
	for (const struct doctor_opt *o = cmd->opts;; o++) {
		char left[64];
		int col;

		if (!o->name)
			o = &doctor_help_opt;
		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		col = fprintf(f, "  %-22s ", left);
		doctor_wrap(f, col, 2 + 22 + 1, o->help, false);
		fputc('\n', f);
		if (o == &doctor_help_opt)
			break;
	}
	if (cmd->notes) {
		fputc('\n', f);
		doctor_text(f, cmd->notes);
	}
	fputs("\nexit status: one table for every command, in gdx-doctor --help\n", f);
}

/* An unknown --name: the option of the command nearest it, or NULL. */
static const char *doctor_near_opt(const struct doctor_cmd *cmd, const char *arg)
{
	const char *names[18];
	int n = 0;

	if (strncmp(arg, "--", 2))
		return NULL;
	arg += 2;
	for (const struct doctor_opt *o = cmd->opts; o->name && n < 16; o++)
		names[n++] = o->name;
	names[n++] = doctor_help_opt.name;
	return gdx_nearest(arg, strcspn(arg, "="), names, n);
}

int doctor_args(const struct doctor_cmd *cmd, int argc, char **argv,
		int (*on_opt)(void *ctx, int key, const char *arg), void *ctx)
{
	struct option longopts[16];
	char shortopts[48];
	int n = 0, s = 0, c, operands;

	shortopts[s++] = ':'; /* report a missing argument as ':' */
	for (const struct doctor_opt *o = cmd->opts; o->name && n < 14; o++, n++) {
		longopts[n] = (struct option){o->name, o->arg ? required_argument : no_argument,
					      NULL, o->key};
		shortopts[s++] = (char)o->key;
		if (o->arg)
			shortopts[s++] = ':';
	}
	longopts[n++] = (struct option){doctor_help_opt.name, no_argument, NULL, 'h'};
	longopts[n] = (struct option){0};
	shortopts[s++] = 'h';
	shortopts[s] = '\0';

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == '?' || c == ':') {
			const char *what = argv[optind - 1], *near;
			char shortname[4];

			/* An unknown letter may sit inside a cluster such as -jz. */
			if (c == '?' && optopt) {
				snprintf(shortname, sizeof(shortname), "-%c", optopt);
				what = shortname;
			}
			fprintf(stderr, "gdx-doctor %s: %s option ", cmd->name,
				c == ':' ? "missing the argument of" : "unknown");
			gdx_esc_text(stderr, what);
			near = c == '?' && !optopt ? doctor_near_opt(cmd, what) : NULL;
			if (near)
				fprintf(stderr, "; did you mean --%s?", near);
			fprintf(stderr, "\ntry 'gdx-doctor %s --help'\n", cmd->name);
			return DOCTOR_USAGE;
		}
		if (c == 'h') {
			doctor_cmd_usage(cmd, stdout);
			return DOCTOR_HELP;
		}
		c = on_opt(ctx, c, optarg);
		if (c != DOCTOR_OK)
			return c;
	}
	operands = argc - optind;
	if (operands < cmd->min_operands || operands > cmd->max_operands) {
		if (cmd->operands_usage)
			fprintf(stderr, "gdx-doctor %s: %s\n", cmd->name, cmd->operands_usage);
		else {
			fprintf(stderr, "gdx-doctor %s: unexpected argument '", cmd->name);
			gdx_esc_text(stderr, argv[optind]);
			fputs("'\n", stderr);
		}
		return DOCTOR_USAGE;
	}
	return DOCTOR_OK;
}
