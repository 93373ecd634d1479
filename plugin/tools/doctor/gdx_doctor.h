/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor's parts: one file per subcommand (gdx_doctor_topo.c, _env.c,
 * _check.c, _log.c, _fleet.c, _top.c, _hang.c), each exporting its struct
 * doctor_cmd (check, fleet and log have more files, which
 * gdx_doctor_check.h, gdx_doctor_fleet_records.h and gdx_doctor_log.h
 * name); gdx_doctor_live.c reads the running
 * processes' live counters for top and hang; gdx_doctor_nccl.c is how each
 * NCCL release loads a net plugin, which check judges NCCL by;
 * gdx_doctor.c has main and the command table, and nothing calls back into
 * it; gdx_doctor_conf.c applies NCCL's configuration files before any
 * command runs, and gdx_doctor_nccl_topo.c says what NCCL_TOPO_FILE does
 * (topo, check); gdx_doctor_args.c what the subcommands' command lines share: the
 * argument parsing with its --help, and the exit statuses;
 * tools/common/: the JSON writers they print with and the reader fleet
 * reads the other commands' output with (gdx_json.h), the escaping of what
 * they print of others' strings (gdx_escape.h), the live files' reader.
 */
#ifndef GDX_DOCTOR_H
#define GDX_DOCTOR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/common/gdx_escape.h"
#include "tools/common/gdx_exit.h"
#include "tools/common/gdx_json.h"
#include "tools/common/gdx_live_read.h"
#include "tools/common/gdx_nearest.h"

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

/*
 * Exit statuses: one table for every command (printed by --help, and in the
 * man pages), gdx_exit.h's, which gdx-bench shares. A code
 * means one thing whichever command gives it; bad usage and internal errors
 * are far from the verdicts.
 */
enum doctor_exit {
	DOCTOR_OK = GDX_EXIT_OK,	     /* healthy: all found, nothing refused */
	DOCTOR_DEGRADED = GDX_EXIT_DEGRADED, /* check, log: it works, slower than it could */
	DOCTOR_BROKEN = GDX_EXIT_BROKEN,     /* check: NCCL would not load the plugin, or it fails;
					      * log: the plugin did not start */
	DOCTOR_NO_INPUT = GDX_EXIT_NO_INPUT, /* --xml, --sysfs-root or the log cannot be read */
	DOCTOR_NO_GPU = 4,		     /* topo: no NVIDIA GPU found */
	DOCTOR_NO_NIC = 5,		     /* topo: no RDMA NIC found */
	DOCTOR_BAD_ENV = 6,		  /* env: a value the plugin refuses, or an unknown name */
	DOCTOR_LOG_NO_PLUGIN = 7,	  /* log: no line of the plugin at all */
	DOCTOR_LOG_NO_DATA = 8,		  /* log: the plugin's init lines, but no byte counts */
	DOCTOR_FLEET_DIFFERS = 9,	  /* fleet: the nodes' reports differ */
	DOCTOR_HANG = 10,		  /* hang: a comm has waited longer than the threshold */
	DOCTOR_USAGE = GDX_EXIT_USAGE,	  /* bad command line (sysexits' EX_USAGE) */
	DOCTOR_ERROR = GDX_EXIT_SOFTWARE, /* internal error: out of memory, output failed */
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
	/* What --help says after the options, or NULL. */
	const char *notes;
};

extern const struct doctor_cmd doctor_cmd_topo, doctor_cmd_env, doctor_cmd_check, doctor_cmd_log,
	doctor_cmd_fleet, doctor_cmd_top, doctor_cmd_hang;

/* The command line's parts (gdx_doctor_args.c). The exit statuses' table as
 * --help prints it, every command's and gdx-doctor's own. */
extern const char doctor_exit_help[];

/* A subcommand's --help: its usage line, its options, its notes, and where
 * the exit statuses are (gdx-doctor --help: the table once). */
void doctor_cmd_usage(const struct doctor_cmd *cmd, FILE *f);

/* What the help and env print fits DOCTOR_COLUMNS columns. */
#define DOCTOR_COLUMNS 80
/*
 * text onto f, which is at column col, wrapped at DOCTOR_COLUMNS with the
 * lines after the first indented by indent: broken at spaces, a word longer
 * than a line cut; hard: cut anywhere (a value, every byte of it kept, a
 * space too). Returns the column it ends at.
 */
int doctor_wrap(FILE *f, int col, int indent, const char *text, bool hard);
/* Lines of text (each ends with a newline; the last may not), each wrapped
 * at its own indentation. */
void doctor_text(FILE *f, const char *text);

/*
 * The preamble of every subcommand: getopt_long over cmd's options, calling
 * on_opt for each but -h/--help, then the operand count. Returns DOCTOR_OK
 * with optind at the first operand, DOCTOR_HELP once the help is printed,
 * DOCTOR_USAGE after saying what was wrong, or what on_opt returned.
 */
int doctor_args(const struct doctor_cmd *cmd, int argc, char **argv,
		int (*on_opt)(void *ctx, int key, const char *arg), void *ctx);

/* check's fabric part (gdx_doctor_fabric.c): for each active port, what a
 * connection on it gets (QPs, adaptive routing, relaxed ordering, ECE,
 * failover), as a section or (json) as a ",\n \"fabric\": {...}" member;
 * live: probe the devices, else the parameters only. */
struct doctor_fabric_port {
	const char *dev;
	int port;
	bool ib; /* InfiniBand, else RoCE */
};
void doctor_fabric_report(FILE *f, bool json, const struct doctor_fabric_port *ports, int n,
			  bool live);

/*
 * How each NCCL release loads a net plugin (gdx_doctor_nccl.c, which says
 * where each fact comes from): the one table check follows.
 */
#define NCCL_NAME_MAX 4096

struct nccl_loader {
	int from, to;	      /* the NCCL_VERSION_CODEs it covers, 21300 to 21899 */
	const char *releases; /* "2.13-2.18" */
	int tries[8];	      /* the ncclNetPlugin_vN tried, newest first; 0 ends */
	bool as_given;	      /* NCCL_NET_PLUGIN=X: X itself first (a path, a soname) */
	bool suffix_if_plain; /* then libnccl-net-X.so only when X has no '/', is no lib*.so */
	bool list;	      /* X may be a comma-separated list of plugins */
	bool none;	      /* NCCL_NET_PLUGIN=none: no external plugin */
	/* the ncclRmaPlugin_vN it looks for in the net plugin's library (and
	 * before it in NCCL_RMA_PLUGIN's), newest first; 0 ends: none before
	 * 2.30.7 */
	int rma[6];
};

/* 22809 is 2.28.9; 2803, before 2.9, is 2.8.3. */
void nccl_version_split(int code, int *major, int *minor, int *patch);
/* The libnccl.so.2 a job would load (the library path, then the usual
 * directories), loaded: its path, whether the library path found it, and
 * its version code (0 when it does not say). NULL when there is none. */
void *nccl_open(char *path, size_t len, bool *in_path, int *version);
/* The row of a release (the newest row past it); NULL for code 0 (unknown). */
const struct nccl_loader *nccl_loader_of(int code);
const struct nccl_loader *nccl_loader_newest(void);
const struct nccl_loader *nccl_loader_at(int i);
/* Whether the release is newer than the table's newest row (judged as it). */
bool nccl_loader_newer_than_known(int code);
/* The table NCCL loads from a library exporting the ncclNetPlugin_vN of the
 * bits (1 << N) set: the first it tries; 0 when it tries none of them. */
int nccl_loader_pick(const struct nccl_loader *l, unsigned exported);
/* The index of the first row that takes one of them; -1 when none does. */
int nccl_loader_first_taking(unsigned exported);
/* The RMA table NCCL takes from a library exporting the ncclRmaPlugin_vN of
 * the bits set; 0 when none. */
int nccl_loader_rma_pick(const struct nccl_loader *l, unsigned exported);
/* "ncclRmaPlugin_v15, v14, v13"; "no RMA plugin" before 2.30.7. */
void nccl_loader_rma_tries(const struct nccl_loader *l, char *buf, size_t len);
/* "ncclNetPlugin_v6, v5, v4"; "ncclNetPlugin_v7 to v12". */
void nccl_loader_tries(const struct nccl_loader *l, char *buf, size_t len);
void nccl_exported_range(unsigned exported, char *buf, size_t len);
/* The files a release dlopens, in order, for one NCCL_NET_PLUGIN entry of
 * len bytes (entry NULL: the variable unset); returns how many (at most 2). */
int nccl_loader_names(const struct nccl_loader *l, const char *entry, size_t len,
		      char names[][NCCL_NAME_MAX], int max);

/*
 * fleet over texts already in memory (gdx_doctor_fleet.c): what the command
 * does with its files, for the fuzz target. n texts, each standing for the
 * file called names[i] (which lives until it returns); json: --json. The
 * report goes to out, what is wrong with the input to err; returns the exit
 * status.
 */
int doctor_fleet_texts(int n, const char *const *names, const char *const *texts,
		       const size_t *lens, bool json, FILE *out, FILE *err);

/* log over a stream already open (gdx_doctor_log_report.c): the report to out;
 * returns the exit status, DOCTOR_NO_INPUT with errno when in cannot be
 * read (nothing said), DOCTOR_ERROR when out of memory. */
int doctor_log_stream(FILE *in, FILE *out);

/* top with its command line (gdx_doctor_top.c), its reports on stdout, as
 * the command runs but for one thing: between two snapshots it calls
 * between(arg) instead of sleeping the interval. For the fuzz target, which
 * changes the live files there. Returns the exit status. */
int doctor_top_between(int argc, char **argv, void (*between)(void *arg), void *arg);

/*
 * The NCCL_GDX_* environment judged as the plugin's init judges it, every
 * value (init stops at the first refused string setting; this does not):
 * the table's parser, then HCA, SOCKET_IFNAME, ADDR_RANGE, GDR and RAILS.
 * env and check both report these, so they agree on every value.
 */
struct doctor_refusal {
	char var[64];	/* NCCL_GDX_TIMEOUT, or the NCCL_IB_* twin it came from */
	char text[512]; /* the plugin's own words where it has them */
};

/* Fills up to max refusals; returns how many there are (possibly more than max). */
int doctor_env_refusals(struct doctor_refusal *r, int max);

/*
 * Names in the environment that are likely mistakes, as env and check both
 * report them: an NCCL_GDX_ name the plugin's table does not have (its
 * setting is ignored), and an NCCL_IB_ name near one of the twins the
 * plugin reads (NCCL_IB_TIMOUT) that is none of NCCL's own that gdx-doctor
 * knows. Each with the name it is nearest, when one is near.
 */
struct doctor_unknown {
	char var[128];	   /* "NCCL_GDX_TIMOUT" */
	char suggest[128]; /* "NCCL_GDX_TIMEOUT", "" when no name is near */
	bool ours;	   /* NCCL_GDX_ (certain), else NCCL_IB_ (a guess) */
};
/* Fills up to max; returns how many there are (possibly more than max). */
int doctor_env_unknown(struct doctor_unknown *u, int max);
/* "NCCL_GDX_TIMOUT is set, but the plugin has no such variable: ...". */
void doctor_unknown_text(const struct doctor_unknown *u, char *buf, size_t len);

/* The live counters of every process on this node that has the plugin
 * loaded (gdx_doctor_live.c), copied at one moment: the scan's copies
 * (gdx_live_read.h), each process's comms in slot order. */
struct live_proc {
	int pid;
	unsigned uid;
	bool stopped;
	struct gdx_live_hdr hdr;
	int ncomms;
	const struct gdx_live_slot *comms;
	bool comms_cut; /* its user's cap: not all its comms read */
	int nnics;	/* its NIC ports' counters (gdx_qpstat.h) */
	const struct gdx_live_nic *nics;
};
struct live_snap {
	uint64_t now_ms; /* gdx_now_ms() when taken */
	int nprocs, skipped;
	struct live_proc *procs;
	int *by_pid; /* procs' indexes by pid */
	struct gdx_live_scan scan;
	bool dir_missing; /* the directory does not exist (yet): no process */
};
/* top's NIC counters of a process (gdx_doctor_top_nic.c): as text lines,
 * as the JSON member "nic_counters", and every process's as Prometheus
 * samples of gdx_nic_counter_total. */
void top_nic_text(const struct live_proc *p, uint64_t now_ms);
void top_nic_json(const struct live_proc *p, uint64_t now_ms);
void top_nic_prometheus(const struct live_snap *s);
/* The labels of every series of one process in top --prometheus: pid, and
 * who it is in its job, from its live file: host, job_id (SLURM_JOB_ID; not
 * "job", the server's own target label) and rank ("" when none). */
#define TOP_PROM_ID_LEN (GDX_ESCAPE_LEN(64) + GDX_ESCAPE_LEN(32) + 96)
void top_prom_id(const struct live_proc *p, char *out, size_t len);
/* DOCTOR_OK (also for a directory not made yet: no process, dir_missing);
 * DOCTOR_NO_INPUT (dir unreadable) or DOCTOR_ERROR (out of descriptors or
 * memory), said on stderr. */
int live_snap_take(const char *dir, struct live_snap *s);
void live_snap_free(struct live_snap *s);
/* The same comm in an earlier snapshot, or NULL (it opened since). */
const struct gdx_live_slot *live_snap_find(const struct live_snap *s, int pid,
					   const struct gdx_live_slot *c);
/* What the scan left out on purpose, one "note: ..." line each: a user's
 * directory another user made (its owner and mode), and the caps a user's
 * files reached; as JSON, the member "live_notes". dir: the scan's. */
void live_snap_notes_text(FILE *f, const struct live_snap *s, const char *dir);
void live_snap_notes_json(FILE *f, const struct live_snap *s);
/* How long the comm has waited without progress at the snapshot, in ms; 0
 * when it does not wait. */
uint64_t live_comm_stalled_ms(const struct live_snap *s, const struct gdx_live_comm *c);
/* A comm's two ends as JSON members: "device", "address", "peer",
 * "peer_device" (no separator around them). */
void live_json_ends(FILE *f, const struct gdx_live_comm *c);
/* a + b, or UINT64_MAX where that wraps. */
uint64_t live_add_sat(uint64_t a, uint64_t b);
/* A rail's send latencies added into a histogram of the same buckets. */
void live_lat_add(uint64_t *lat, uint64_t *count, uint64_t *sum, const struct gdx_live_rail *r);
/* The q-quantile (0.5, 0.99, 0.999) of a latency histogram, in
 * microseconds, interpolated within its log2 bucket; -1 when it has no
 * sample or no rate (hz: the stamp's ticks a second). */
double live_lat_quantile_us(const uint64_t *lat, double q, uint64_t hz);

#endif
