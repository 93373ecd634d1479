/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor: tells what the plugin will find on this machine, using the
 * plugin's own probes. One subcommand per question, one file each (see
 * gdx_doctor.h); this file is main, the command table, and the argument
 * parsing and output helpers they share.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gdx_doctor.h"
#include <gdx/gdx_escape.h>

static const char doctor_exit_help[] =
	"exit status (one table for every command, and gdx-bench's):\n"
	"  0   healthy: all found, nothing refused\n"
	"  1   degraded (check, log): it works, but a GPU is staged where it could be\n"
	"      direct, or its direct path is degraded (ACS, translating IOMMU, across\n"
	"      sockets, tiny BAR1); log: NCCL staged bytes on a GPUDirect NIC;\n"
	"      check --allow-degraded exits 0 for it\n"
	"  2   broken (check): NCCL will not load the plugin (NCCL_NET_PLUGIN leads\n"
	"      elsewhere, a path before NCCL 2.21, an NCCL that tries none of its\n"
	"      tables, NCCL_NET naming another network), no active RDMA port, memlock\n"
	"      too low to register, a RoCE port without a RoCE v2 GID, a NCCL_GDX_*\n"
	"      value init refuses, or NCCL_GDX_GDR=on that cannot be honoured\n"
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

void doctor_cmd_usage(const struct doctor_cmd *cmd, FILE *f)
{
	fprintf(f, "usage: gdx-doctor %s [options]%s%s\n%s\n\noptions:\n", cmd->name,
		cmd->max_operands ? " " : "",
		cmd->max_operands > 1 ? "[FILE...]"
		: cmd->max_operands   ? "FILE"
				      : "",
		cmd->summary);
	for (const struct doctor_opt *o = cmd->opts;; o++) {
		char left[64];

		if (!o->name)
			o = &doctor_help_opt;
		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->key, o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
		fprintf(f, "  %-22s %s\n", left, o->help);
		if (o == &doctor_help_opt)
			break;
	}
	fprintf(f, "\n%s", doctor_exit_help);
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
		else
			fprintf(stderr, "gdx-doctor %s: unexpected argument '%s'\n", cmd->name,
				argv[optind]);
		return DOCTOR_USAGE;
	}
	return DOCTOR_OK;
}

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	gdx_esc_json(f, s);
	fputc('"', f);
}

void json_str_or_null(FILE *f, const char *s)
{
	if (s && s[0])
		json_str(f, s);
	else
		fputs("null", f);
}

void json_key_str(FILE *f, const char *key, const char *s)
{
	json_str(f, key);
	fputs(": ", f);
	json_str_or_null(f, s);
}

void json_tri(FILE *f, int v)
{
	fputs(v < 0 ? "null" : v ? "true" : "false", f);
}

const char *doctor_this_host(char *buf, size_t len)
{
	/* gethostname may truncate without a terminator. */
	buf[len - 1] = '\0';
	return gethostname(buf, len - 1) ? NULL : buf;
}

void json_report_origin_of(FILE *f, const char *command, const char *hostname)
{
	fprintf(f, "\"command\": \"%s\", ", command);
	json_key_str(f, "hostname", hostname);
}

void json_report_origin(FILE *f, const char *command)
{
	char host[256];

	json_report_origin_of(f, command, doctor_this_host(host, sizeof(host)));
}

/* The fuzz targets (make fuzz) link the commands with libFuzzer's main. */
#ifndef GDX_DOCTOR_NO_MAIN
static const struct doctor_cmd *const doctor_cmds[] = {
	&doctor_cmd_topo,  &doctor_cmd_env, &doctor_cmd_check, &doctor_cmd_log,
	&doctor_cmd_fleet, &doctor_cmd_top, &doctor_cmd_hang,
};

#define DOCTOR_NCMDS ((int)(sizeof(doctor_cmds) / sizeof(doctor_cmds[0])))

static void doctor_usage(FILE *f)
{
	fputs("usage: gdx-doctor [COMMAND] [options]    (no COMMAND: check)\n"
	      "       gdx-doctor COMMAND --help\n"
	      "Checks what libnccl-net-gdx will find on this machine.\n\ncommands:\n",
	      f);
	for (int i = 0; i < DOCTOR_NCMDS; i++)
		fprintf(f, "  %-10s %s\n", doctor_cmds[i]->name, doctor_cmds[i]->summary);
	fprintf(f, "  %-10s %s\n  %-10s %s\n\n%s", "help", "this text, or a command's help",
		"--version", "the version", doctor_exit_help);
}

static const struct doctor_cmd *doctor_find(const char *name)
{
	for (int i = 0; i < DOCTOR_NCMDS; i++)
		if (!strcmp(doctor_cmds[i]->name, name))
			return doctor_cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct doctor_cmd *cmd;
	int ret;

	/* No command, or options only: check, the one command an operator runs
	 * before a job (the synopsis's "gdx-doctor [options]"); argv[0] then
	 * stands in for its name. */
	if (argc < 2 || (argv[1][0] == '-' && strcmp(argv[1], "--help") && strcmp(argv[1], "-h") &&
			 strcmp(argv[1], "--version"))) {
		cmd = doctor_find("check");
		goto run;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && (cmd = doctor_find(argv[2]))) {
			doctor_cmd_usage(cmd, stdout);
			return DOCTOR_OK;
		}
		if (argc > 2) {
			fprintf(stderr, "gdx-doctor: no command '%s'; the commands are below\n",
				argv[2]);
			doctor_usage(stderr);
			return DOCTOR_USAGE;
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
		fprintf(stderr, "try 'gdx-doctor --help'\n");
		return DOCTOR_USAGE;
	}
	/* The subcommand sees its own name as argv[0]. */
	argc--;
	argv++;
run:
	ret = cmd->run(cmd, argc, argv);
	if (ret == DOCTOR_HELP)
		ret = DOCTOR_OK;
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "gdx-doctor: cannot write the output: %s\n", strerror(errno));
		return DOCTOR_ERROR;
	}
	return ret;
}
#endif
