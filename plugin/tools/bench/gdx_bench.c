/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench: drives the plugin through its ncclNetPlugin_v7 table (init,
 * isend and irecv through v10's with --profiler), as NCCL's proxy does,
 * between two devices of this machine, in two processes: the server on --dev
 * and the client on --peer-dev (or across two machines, --server and
 * --client). Its letters are perftest's where perftest has the
 * same option (-d device, -t depth, -p port, -x GID index, -a, -s, -n) and
 * nccl-tests' for the sweep (-b, -e, -f, -w).
 *   bw    the client streams to the server, --depth messages in flight
 *   rate  the same, reported as messages per second (for small sizes)
 *   lat   ping-pong, one message each way at a time: half round trips,
 *         median and p99
 * Prints one row per message size, in nccl-tests' units (GB/s = 10^9 B/s);
 * --plot draws them as SVG too.
 *
 * This file is main: the command line read (gdx_bench_opts.c), then the
 * mode run, here or with the other end over the side channel, or an earlier
 * run's figures plotted; gdx_bench_state.h names the other files.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/bench/gdx_bench_state.h"

/* Both ends here: two processes, the client forked, or one thread. */
static void bench_local(const struct bench_opts *o)
{
	int to_server[2], to_client[2], status;
	pid_t pid;

	if (o->procs == 1) {
		bench_server(o, -1, -1);
		return;
	}
	if (pipe(to_server) || pipe(to_client))
		bench_die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		bench_other_set(getppid(), 1);
		close(to_server[0]);
		close(to_client[1]);
		bench_client(o, to_client[0], to_server[1]);
		exit(BENCH_EXIT_OK);
	}
	bench_other_set(pid, 0);
	/* Only the client's ends of the pipes in the client: its exit closes them. */
	close(to_server[1]);
	close(to_client[0]);
	bench_server(o, to_server[0], to_client[1]);
	bench_other_set(0, 0);
	if (waitpid(pid, &status, 0) != pid)
		bench_die("waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		bench_die("the client process was killed by signal %d", WTERMSIG(status));
	if (WEXITSTATUS(status))
		exit(WEXITSTATUS(status)); /* it said why */
}

/* --plot-from: an earlier run's figures plotted, nothing measured. */
static int bench_plot_from(const struct bench_opts *o)
{
	struct bench_series from;

	bench_plot_read(o->plot_from, "gdx-bench", &from);
	bench_plot_write(&from);
	return BENCH_EXIT_OK;
}

/* The mode, as the options say: -m conn, or one end or both of a bw, rate or
 * lat sweep; the exit status. */
static int bench_run(struct bench_opts *o)
{
	uint8_t nonces[32];
	int fd;

	if (o->profiler && o->rails)
		bench_usage_error("--profiler and --rails: the v10 table --profiler loads presents "
				  "physical devices only (NCCL fuses them)");
	if (o->mode == BENCH_CONN) {
		if (o->role != BENCH_LOCAL)
			bench_usage_error("--mode conn runs both ends on this machine");
		return bench_conn(o);
	}
	/* A closed pipe or socket is an error the side channel reports. */
	signal(SIGPIPE, SIG_IGN);
	switch (o->role) {
	case BENCH_LOCAL: bench_local(o); break;
	case BENCH_SERVER:
		/* The plugin and the device first, as ib_write_bw opens its device
		 * before it listens: a node without one fails now, not once a
		 * client has come. */
		bench_dev(bench_load(o->plugin, o->profiler), o->dev, 0, o);
		if (getrandom(o->token, sizeof(o->token), 0) != (ssize_t)sizeof(o->token))
			bench_die("getrandom: %s", strerror(errno));
		fd = bench_chan_serve(o->port, o->token, nonces);
		bench_chan_send_opts(fd, o, nonces);
		bench_server(o, fd, fd);
		close(fd);
		break;
	case BENCH_CLIENT:
		bench_set_link("%s", o->host);
		fd = bench_chan_dial(o->host, o->port, o->wait);
		bench_chan_recv_opts(fd, o);
		bench_client(o, fd, fd);
		close(fd);
		break;
	}
	return BENCH_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct bench_opts o;

	if (!bench_opts_parse(argc, argv, &o))
		return BENCH_EXIT_OK; /* --help or --version */
	bench_set_verbose(o.verbose);
	/* Every plot file checked before the run, so that none fails after it. */
	if (o.plot)
		bench_plot_prepare(&o);
	if (o.plot_from)
		return bench_plot_from(&o);
	return bench_run(&o);
}
