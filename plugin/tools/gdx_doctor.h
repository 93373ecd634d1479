/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor's parts: one file per subcommand (gdx_doctor_topo.c, _env.c,
 * _check.c, _log.c), each exporting its struct doctor_cmd; gdx_doctor.c has
 * main, the command table and what they all share: the exit statuses, the
 * argument parsing with its --help, and the JSON writers.
 */
#ifndef GDX_DOCTOR_H
#define GDX_DOCTOR_H

#include <stdio.h>

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

/* doctor_args() printed the help the user asked for: the subcommand is done. */
#define DOCTOR_HELP (-1)

/* One command-line option: the getopt_long entry and its line of --help.
 * Every subcommand has -h/--help; doctor_args() handles it. */
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
	/* Operands after the options: how many, and what to say when there are
	 * others (NULL: "unexpected argument"). */
	int min_operands, max_operands;
	const char *operands_usage;
};

extern const struct doctor_cmd doctor_cmd_topo, doctor_cmd_env, doctor_cmd_check, doctor_cmd_log;

void doctor_cmd_usage(const struct doctor_cmd *cmd, FILE *f);

/*
 * The preamble of every subcommand: getopt_long over cmd's options, calling
 * on_opt for each but -h/--help, then the operand count. Returns DOCTOR_OK
 * with optind at the first operand, DOCTOR_HELP once the help is printed,
 * DOCTOR_USAGE after saying what was wrong, or what on_opt returned.
 */
int doctor_args(const struct doctor_cmd *cmd, int argc, char **argv,
		int (*on_opt)(void *ctx, int key, const char *arg), void *ctx);

/* JSON values: a string with quotes, backslashes and control characters
 * escaped; null for NULL or ""; "key": string-or-null; null/true/false for
 * -1/1/0. */
void json_str(FILE *f, const char *s);
void json_str_or_null(FILE *f, const char *s);
void json_key_str(FILE *f, const char *key, const char *s);
void json_tri(FILE *f, int v);

#endif
