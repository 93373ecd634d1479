/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench's parts. gdx_bench.c is main, and nothing calls back into it;
 * gdx_bench_common.c how the program fails (every other file uses it);
 * gdx_bench_opts.c the command line; gdx_bench_net.c the plugin loaded and
 * its devices; gdx_bench_end.c the two ends of a sweep, gdx_bench_loop.c one
 * size of each mode, gdx_bench_report.c what a sweep prints;
 * gdx_bench_conn.c -m conn; gdx_bench_chan.c the side channel;
 * gdx_bench_cuda.c CUDA memory; gdx_bench_plot.c --plot, reading figures
 * with gdx-doctor's JSON reader (gdx_json.c).
 */
#ifndef GDX_BENCH_STATE_H
#define GDX_BENCH_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <nccl/net.h>

#include "tools/common/gdx_exit.h"

enum bench_mode { BENCH_BW, BENCH_RATE, BENCH_LAT, BENCH_CONN };

/* Where the other end is: this machine (forked, or this thread), or a
 * gdx-bench on another machine reached over TCP. */
enum bench_role { BENCH_LOCAL, BENCH_SERVER, BENCH_CLIENT };

/* Exit statuses, gdx_exit.h's table, which gdx-doctor shares: 0 every size
 * ran; 2 a runtime failure, broken (the plugin, a device, the other end; 1,
 * gdx-doctor's degraded, up to 0.4.5); 3 a
 * --plugin that cannot be loaded or is no NCCL net plugin, a --plot-ref or
 * --plot-from file that cannot be read or is not figures; 64 a bad command
 * line; 70 the --plot file cannot be written. */
enum bench_exit {
	BENCH_EXIT_OK = GDX_EXIT_OK,
	BENCH_EXIT_FAIL = GDX_EXIT_BROKEN,
	BENCH_EXIT_NO_INPUT = GDX_EXIT_NO_INPUT,
	BENCH_EXIT_USAGE = GDX_EXIT_USAGE,
	BENCH_EXIT_OUTPUT = GDX_EXIT_SOFTWARE,
};

/* The largest message size gdx-bench takes (sizes are K, M or G multiples of
 * 1024 up to this), and the largest one message: the plugin's v7 table has
 * int sizes, and NCCL posts large transfers in pieces as large at most; a
 * larger size is sent as pieces of this many bytes from one buffer. */
#define BENCH_SIZE_MAX (1ULL << 40)
#define BENCH_MSG_MAX  ((size_t)1 << 30)

/* --plot: series drawn beside the run (--plot-ref), and the points a series
 * holds (a sweep has at most 42 sizes: 0, 1, 2, 4 ... 1024G). */
#define BENCH_PLOT_REFS	  4
#define BENCH_PLOT_POINTS 64

struct bench_opts {
	const char *plugin;
	const char *dev, *peer_dev;
	size_t min_size, max_size;
	int factor;
	int iters, warmup, depth;
	enum bench_mode mode;
	int json;
	int procs; /* BENCH_LOCAL: 2 processes, or 1 thread for both ends */
	enum bench_role role;
	const char *host; /* BENCH_CLIENT: the server's address */
	int port;
	int cuda, gpu;	       /* --mem cuda on GPU gpu */
	int wait;	       /* BENCH_CLIENT: seconds to keep trying the server */
	double interval;       /* bw, rate: print the rate every this many seconds (0: no) */
	const char *plot;      /* --plot: the SVG to write */
	const char *plot_from; /* --plot-from: figures plotted, nothing measured */
	const char *plot_refs[BENCH_PLOT_REFS]; /* --plot-ref: figures drawn beside */
	int plot_nrefs;
	int profiler; /* --profiler: through the v10 table, with a profiler callback */
	int rails;    /* --rails: devices fused (NCCL_GDX_RAILS set) */
	int verbose;  /* -v: the plugin's file:line, the calls that failed */
	/* the run's token: the server's, drawn at random; the client's,
	 * --token's (gdx_bench_chan.c) */
	uint8_t token[16];
};

/* The command line (gdx_bench_opts.c) into *o, every bad one refused (exit
 * 64); 0 when it asked for --help or --version, said already, 1 to run. */
int bench_opts_parse(int argc, char **argv, struct bench_opts *o);

/* How gdx-bench fails (gdx_bench_common.c). A runtime failure: one line on
 * standard error, exit 1. With both ends here in two processes, only the
 * first to fail says why (the other's failure is its consequence) and both
 * exit with its status. */
void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* A bad command line: the reason and where the help is, exit 64. */
void bench_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* One line on standard error, before anything ran, and exit with status (an
 * input that cannot be read, an output that cannot be written). */
void bench_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Both ends here in two processes: the other process (the client's pid in
 * the server, the server's in the client, is_client in the client), which
 * the failures above look for; 0 once it is gone or when there is none. */
void bench_other_set(pid_t other, int is_client);
/* The client process exits quietly where its failure follows the server's
 * (the server is gone: it said why). */
void bench_client_check_server(void);
/* The server process: when the client has already failed (and said why),
 * exit with its status; a client killed by a signal is reported. With
 * grace_ms, waits that long for it to finish failing. Returns when the
 * client is still running. */
void bench_server_check_client(int grace_ms);

/* A call of the plugin's table that must succeed, or the run fails saying,
 * in words, what did not happen (bench_net_fail). */
#define NET_CHECK(call)                                 \
	do {                                            \
		ncclResult_t _r = (call);               \
		if (_r != ncclSuccess)                  \
			bench_net_fail(#call, (int)_r); \
	} while (0)

/* The run fails after a call of the plugin's table: what it was for in
 * plain words ("the plugin did not start", "the connection to HOST
 * failed"), the result's meaning, and, at the debug level (-v,
 * NCCL_DEBUG=INFO or TRACE), the call and its ncclResult. */
void bench_net_fail(const char *call, int result) __attribute__((noreturn));
/* What the data path connects, for bench_net_fail's words: "node1",
 * "the client at 10.0.0.2:40112", "rxe0 and rxe1". */
void bench_set_link(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The debug level: the plugin's file:line on its lines, and the calls
 * that failed (-v, or NCCL_DEBUG=INFO or TRACE). */
void bench_set_verbose(int on);
int bench_verbose(void);

/* The plugin (gdx_bench_net.c): its v7 table, initialized; dies when it
 * cannot be loaded. With profiler, init is v10's, given a callback that
 * counts the events, and isend and irecv are v10's, with a profiler handle
 * (as NCCL 2.26+ calls them); the other calls stay v7's. */
const ncclNet_v7_t *bench_load(const char *path, int profiler);
/* --profiler: the events this process's plugin started and stopped. */
void bench_prof_counts(unsigned long long *started, unsigned long long *stopped);
/* What the profiler was given, on standard error (end: "server", "client",
 * "both ends"): the results stay as they are. */
void bench_prof_report(const struct bench_opts *o, const char *end);
/* The plugin's own per-path byte counters, from the line it logs when a
 * receive comm closes: the proof of where the bytes went. */
void bench_bytes_received(unsigned long long *gpu, unsigned long long *host);
/* The device named (or the fallback index); with --mem cuda, one that takes
 * CUDA memory, or a clear refusal. */
int bench_dev(const ncclNet_v7_t *net, const char *name, int fallback, const struct bench_opts *o);
/* -m conn: --iters pairs opened, held and closed (gdx_bench_conn.c); the exit status. */
int bench_conn(const struct bench_opts *o);

/* One end: its plugin, its comms and its buffer. */
struct bench_end {
	const ncclNet_v7_t *net;
	void *listen, *send, *recv;
	void *send_mh, *recv_mh;
	char *sbuf, *rbuf;
	int in, out; /* pipes to the other process */
};

/* One size of a stream as the plugin sees it: a size above BENCH_MSG_MAX
 * goes as several messages of at most that, as NCCL posts a large transfer. */
struct bench_size {
	size_t bytes; /* the size of the sweep */
	size_t msg;   /* every piece but the last */
	size_t last;  /* the last piece */
	int pieces;   /* messages per size */
};

/* The two ends of a sweep (gdx_bench_end.c), over the side channel's in and
 * out (-1, -1: both ends in this thread, --procs 1). The server prints the
 * results; the client runs what the server says, and a client on another
 * machine prints the server's figures too, as perftest's ends both do. */
void bench_server(const struct bench_opts *o, int in, int out);
void bench_client(const struct bench_opts *o, int in, int out);

/* One size of each mode (gdx_bench_loop.c). bytes as messages of at most
 * BENCH_MSG_MAX. */
struct bench_size bench_split(size_t bytes);
/* bw, rate: the server's side; the seconds the timed messages took. */
double bench_stream_recv(struct bench_end *e, const struct bench_size *z,
			 const struct bench_opts *o);
void bench_stream_send(struct bench_end *e, const struct bench_size *z, const struct bench_opts *o);
/* bw, rate with both ends in this thread: the seconds the timed messages took to arrive. */
double bench_stream_local(struct bench_end *srv, struct bench_end *cli, const struct bench_size *z,
			  const struct bench_opts *o);
/* lat, the server's side (pong: the other end, when this thread drives it
 * too, else NULL): the half round trips of the timed iterations, sorted,
 * into half_rtt (--iters of them). */
void bench_pingpong(struct bench_end *ping, struct bench_end *pong, size_t size,
		    const struct bench_opts *o, double *half_rtt);
/* lat, the client's side: answers every ping. */
void bench_pong(struct bench_end *e, size_t size, const struct bench_opts *o);

/* The side channel: pipes between two processes, or one TCP connection. */
void bench_xfer(int fd, void *buf, size_t len, int writing);
/* The server: listens on port of the plugin's out-of-band interface,
 * prints the token, and returns the first connection that proves it
 * (others closed, each one that says nothing after BENCH_PROOF_S); the two
 * challenges into nonces (the server's, then the client's). */
int bench_chan_serve(int port, const uint8_t token[16], uint8_t nonces[32]);
/* Keeps trying for wait seconds, saying so at once and while it retries. */
int bench_chan_dial(const char *host, int port, int wait);
/* The server tells the client what to run, proving the token too; the
 * client proves it first, checks the server's proof, and takes the options.
 * Both check the other is a gdx-bench. */
void bench_chan_send_opts(int fd, const struct bench_opts *o, const uint8_t nonces[32]);
void bench_chan_recv_opts(int fd, struct bench_opts *o);

/* Who an end is, told to the other end over the side channel once the
 * comms are up: its host and its device, so that each end's table names
 * both. What comes from the other end is cut to letters, digits and ._+:-
 * (the rest '?') before it is printed anywhere. */
#define BENCH_NAME_MAX 64
struct bench_who {
	char host[BENCH_NAME_MAX];
	char dev[BENCH_NAME_MAX];
};
void bench_who_send(int fd, const char *dev);
void bench_who_recv(int fd, struct bench_who *w);

/* One size's figures, as the server measured them: sent to the client, which
 * prints the same table (secs: bw, rate; the half round trips' median, p99
 * and minimum in seconds: lat; NAN where the mode has none). */
struct bench_fig {
	double secs, med, p99, min;
};
void bench_fig_send(int fd, const struct bench_fig *f);
void bench_fig_recv(int fd, struct bench_fig *f);
/* The plugin's byte counters of the server's receive comms, sent last. */
void bench_counts_send(int fd, const unsigned long long counts[2]);
void bench_counts_recv(int fd, unsigned long long counts[2]);

/* GPU memory through the CUDA driver, loaded at run time (no link). */
void *bench_cuda_alloc(size_t n, int gpu);
void bench_cuda_free(void *p);

/* One size of a plotted series; NAN where it has no such figure. */
struct bench_point {
	size_t bytes;
	double gbps; /* bandwidth, Gb/s */
	double usec; /* bw, rate: time per message; lat: median half round trip */
	double p99;  /* lat: the p99 half round trip (NAN: none) */
};

struct bench_series {
	char label[64];	 /* its legend entry */
	char title[256]; /* what the plot is of, when it is the run plotted */
	char about[256]; /* the host, version, depth and line rate it ran with */
	enum bench_mode mode;
	struct bench_point pts[BENCH_PLOT_POINTS]; /* by size, each size once */
	int n;
};

/* The plot (gdx_bench_plot.c). Before anything runs: every --plot-ref read
 * and --plot's file opened (created, or an existing one left as it is until
 * the plot replaces it; a failed run removes a file it created). A --plot
 * name that does not end in .svg is a bad command line (64); a reference
 * that cannot be read or is not figures exits 3, a plot that cannot be
 * written 70. */
void bench_plot_prepare(const struct bench_opts *o);
/* Figures from path, JSON as gdx-bench -j prints it (gdx-bench(1), PLOT);
 * label is the legend's unless the file has one (NULL: the file's name).
 * Exits 3 naming the file, and the line or result, of what is wrong. */
void bench_plot_read(const char *path, const char *label, struct bench_series *s);
/* The run's title: its mode and devices, as the table's header names them. */
void bench_plot_title(struct bench_series *s, enum bench_mode mode, const char *dev,
		      const char *peer, const char *memory);
/* The line under the title: host, gdx-bench version, depth, line rate
 * (host NULL or line_gbps 0: unknown). */
void bench_plot_about(struct bench_series *s, const char *host, const char *version, int depth,
		      double line_gbps);
void bench_plot_add(struct bench_series *s, size_t bytes, double gbps, double usec, double p99);
/* Draws run and the references into --plot's file; exits 70 when it cannot. */
void bench_plot_write(const struct bench_series *run);

/*
 * What a bw, rate or lat sweep prints (gdx_bench_report.c): opened with the
 * devices' names (the table's header, or the JSON object's start), a row
 * per size as it is measured, closed once the comms have closed (the
 * plugin's byte counters, the profiler's events, --plot's file written).
 */
struct bench_report {
	const struct bench_opts *o;
	struct bench_series run; /* what --plot draws */
	int rows;		 /* printed so far */
	int client;		 /* the client's copy of the server's table */
};

/* Opened on this end's device (name, its line rate in Gb/s, 0 unknown) and
 * the other end's (peer: its device and host; host "" when it is this one).
 * On the client, the figures are the server's (client set). */
void bench_report_open(struct bench_report *r, const struct bench_opts *o, const char *name,
		       double line_gbps, const struct bench_who *peer, int client);
/* The size about to run, on a live line of a long sweep's standard error. */
void bench_report_progress(const struct bench_report *r, size_t bytes);
/* lat: the half round trips of the timed iterations, sorted, in seconds,
 * as figures. */
void bench_fig_lat(const double *half_rtt, int iters, struct bench_fig *f);
/* One size's row: lat's median, p99 and minimum, or bw's and rate's seconds. */
void bench_report_fig(struct bench_report *r, size_t bytes, const struct bench_fig *f);
/* The sweep is over: the live line cleared. */
void bench_report_swept(const struct bench_report *r);
/* ends: which ran here, "server", "client" or "both ends", for the
 * profiler's line; counts: the server's receive comms' bytes (GPU-direct,
 * host) where they were counted. */
void bench_report_close(struct bench_report *r, const char *ends,
			const unsigned long long counts[2]);

#endif
