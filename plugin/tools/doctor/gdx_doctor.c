/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor: tells what the plugin will find on this machine, using the
 * plugin's own probes. One subcommand per question, one file each (see
 * gdx_doctor.h); this file is main and the command table, and nothing
 * calls back into it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_conf.h"

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
	for (int i = 0; i < DOCTOR_NCMDS; i++) {
		fprintf(f, "  %-10s ", doctor_cmds[i]->name);
		doctor_wrap(f, 13, 13, doctor_cmds[i]->summary, false);
		fputc('\n', f);
	}
	fprintf(f, "  %-10s %s\n  %-10s %s\n\n%s", "help", "this text, or a command's help",
		"-V, --version", "the version", doctor_exit_help);
}

/* An unknown command: said, escaped, with the one meant when one is near. */
static void doctor_unknown(const char *what, const char *name)
{
	const char *names[DOCTOR_NCMDS + 1], *near;

	for (int i = 0; i < DOCTOR_NCMDS; i++)
		names[i] = doctor_cmds[i]->name;
	names[DOCTOR_NCMDS] = "help";
	near = gdx_nearest(name, strlen(name), names, DOCTOR_NCMDS + 1);
	fprintf(stderr, "gdx-doctor: %s '", what);
	gdx_esc_text(stderr, name);
	fputc('\'', stderr);
	if (near)
		fprintf(stderr, "; did you mean '%s'?", near);
	fputs("\ntry 'gdx-doctor --help'\n", stderr);
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
			 strcmp(argv[1], "--version") && strcmp(argv[1], "-V"))) {
		cmd = doctor_find("check");
		goto run;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2 && (cmd = doctor_find(argv[2]))) {
			doctor_cmd_usage(cmd, stdout);
			return DOCTOR_OK;
		}
		if (argc > 2) {
			doctor_unknown("no command", argv[2]);
			return DOCTOR_USAGE;
		}
		doctor_usage(stdout);
		return DOCTOR_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("gdx-doctor %s\n", GDX_VERSION);
		return DOCTOR_OK;
	}
	cmd = doctor_find(argv[1]);
	if (!cmd) {
		doctor_unknown("unknown command", argv[1]);
		return DOCTOR_USAGE;
	}
	/* The subcommand sees its own name as argv[0]. */
	argc--;
	argv++;
run:
	/* NCCL's configuration files, as NCCL applies them: every command then
	 * reads the environment NCCL would see. */
	doctor_conf_load();
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
