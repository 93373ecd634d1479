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
 * --plot draws them as SVG too (gdx_bench_plot.c).
 */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gdx/gdx_stamp.h>
#include <nccl/net.h>
#include <nccl/profiler_net.h>

#include "gdx_bench.h"

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

/* One end: its plugin, its comms and its buffer. */
struct bench_end {
	const ncclNet_v7_t *net;
	void *listen, *send, *recv;
	void *send_mh, *recv_mh;
	char *sbuf, *rbuf;
	int in, out; /* pipes to the other process */
};

/* Idle, as NCCL's proxy thread does: leave the CPU to the NIC (here, rxe's
 * kernel threads on the same cores). */
static void bench_idle(int progress)
{
	if (!progress)
		sched_yield();
}

/* One size of a stream as the plugin sees it: a size above BENCH_MSG_MAX
 * goes as several messages of at most that, as NCCL posts a large transfer. */
struct bench_size {
	size_t bytes; /* the size of the sweep */
	size_t msg;   /* every piece but the last */
	size_t last;  /* the last piece */
	int pieces;   /* messages per size */
};

static struct bench_size bench_split(size_t bytes)
{
	struct bench_size z = {.bytes = bytes, .msg = bytes, .last = bytes, .pieces = 1};

	if (bytes > BENCH_MSG_MAX) {
		z.msg = BENCH_MSG_MAX;
		z.pieces = (int)((bytes + BENCH_MSG_MAX - 1) / BENCH_MSG_MAX);
		z.last = bytes - (size_t)(z.pieces - 1) * BENCH_MSG_MAX;
	}
	return z;
}

/*
 * The streams keep --depth requests posted and test the oldest only, in
 * order, as NCCL's proxy progresses a connection's steps; one ring per side.
 */
struct bench_ring {
	void *reqs[NCCL_NET_MAX_REQUESTS];
	int posted, done; /* messages posted and completed so far */
};

/* The size of message i of a stream. */
static size_t bench_piece(const struct bench_size *z, int i)
{
	return i % z->pieces == z->pieces - 1 ? z->last : z->msg;
}

/* Receives take the largest piece; a smaller one completes with its size. */
static void bench_ring_post_recv(struct bench_end *e, struct bench_ring *r,
				 const struct bench_size *z, const struct bench_opts *o, int total)
{
	while (r->posted < total && r->posted - r->done < o->depth) {
		int sz = (int)z->msg, tag = 0;
		void *data = e->rbuf;

		NET_CHECK(e->net->irecv(e->recv, 1, &data, &sz, &tag, &e->recv_mh,
					&r->reqs[r->posted % o->depth]));
		r->posted++;
	}
}

static void bench_ring_post_send(struct bench_end *e, struct bench_ring *r,
				 const struct bench_size *z, const struct bench_opts *o, int total)
{
	while (r->posted < total && r->posted - r->done < o->depth) {
		void **req = &r->reqs[r->posted % o->depth];
		size_t size = bench_piece(z, r->posted);

		NET_CHECK(e->net->isend(e->send, e->sbuf, (int)size, 0, e->send_mh, req));
		if (!*req)
			return; /* no clear-to-send yet: next time round */
		r->posted++;
	}
}

/* Tests the oldest request; 1 when it completed. */
static int bench_ring_test(struct bench_end *e, struct bench_ring *r, const struct bench_opts *o)
{
	int done = 0, sz;

	if (r->done == r->posted)
		return 0;
	NET_CHECK(e->net->test(r->reqs[r->done % o->depth], &done, &sz));
	r->done += done;
	return done;
}

/* --interval: the rate of what arrived in each interval, as it runs, so that
 * a rail going down and coming back can be watched. */
struct bench_tick {
	double start, mark;
	size_t bytes;
};

static void bench_tick(struct bench_tick *t, size_t bytes, const struct bench_opts *o)
{
	double now;

	if (o->interval <= 0)
		return;
	t->bytes += bytes;
	now = gdx_wall_s();
	if (!t->start)
		t->start = t->mark = now;
	if (now - t->mark < o->interval)
		return;
	printf("# %8.1f s %12.4f Gb/s\n", now - t->start,
	       (double)t->bytes * 8e-9 / (now - t->mark));
	fflush(stdout);
	t->mark = now;
	t->bytes = 0;
}

/* The server's side of bw/rate; returns the seconds the timed messages took. */
static double bench_stream_recv(struct bench_end *e, const struct bench_size *z,
				const struct bench_opts *o)
{
	struct bench_ring r = {0};
	struct bench_tick t = {0};
	int total = (o->warmup + o->iters) * z->pieces, warm = o->warmup * z->pieces;
	double start = gdx_wall_s();

	while (r.done < total) {
		int progress;

		bench_ring_post_recv(e, &r, z, o, total);
		progress = bench_ring_test(e, &r, o);
		if (progress && r.done == warm)
			start = gdx_wall_s();
		if (progress)
			bench_tick(&t, bench_piece(z, r.done - 1), o);
		bench_idle(progress);
	}
	return gdx_wall_s() - start;
}

static void bench_stream_send(struct bench_end *e, const struct bench_size *z,
			      const struct bench_opts *o)
{
	struct bench_ring r = {0};
	int total = (o->warmup + o->iters) * z->pieces;

	while (r.done < total) {
		bench_ring_post_send(e, &r, z, o, total);
		bench_idle(bench_ring_test(e, &r, o));
	}
}

/* bw/rate with both ends in this thread (--procs 1): the one polling thread
 * NCCL's proxy is per GPU, progressing sends and receives alike; returns the
 * seconds the timed messages took to arrive. */
static double bench_stream_local(struct bench_end *srv, struct bench_end *cli,
				 const struct bench_size *z, const struct bench_opts *o)
{
	struct bench_ring rr = {0}, sr = {0};
	struct bench_tick t = {0};
	int total = (o->warmup + o->iters) * z->pieces, warm = o->warmup * z->pieces;
	double start = gdx_wall_s();

	while (rr.done < total || sr.done < total) {
		int progress, got;

		bench_ring_post_recv(srv, &rr, z, o, total);
		bench_ring_post_send(cli, &sr, z, o, total);
		got = bench_ring_test(srv, &rr, o);
		if (got && rr.done == warm)
			start = gdx_wall_s();
		if (got)
			bench_tick(&t, bench_piece(z, rr.done - 1), o);
		progress = got | bench_ring_test(cli, &sr, o);
		bench_idle(progress);
	}
	return gdx_wall_s() - start;
}

static void bench_wait(struct bench_end *e, void *req)
{
	int done = 0, sz;

	while (!done)
		NET_CHECK(e->net->test(req, &done, &sz));
}

/* Waits for req, testing *other (a send still in flight) on the way, as
 * NCCL's proxy progresses whatever is ready; *other becomes NULL once done. */
static void bench_wait_also(struct bench_end *e, void *req, void **other)
{
	int done = 0, sz;

	while (!done) {
		NET_CHECK(e->net->test(req, &done, &sz));
		if (*other) {
			int odone = 0;

			NET_CHECK(e->net->test(*other, &odone, &sz));
			if (odone)
				*other = NULL;
		}
	}
}

static void bench_post_recv(struct bench_end *e, size_t size, void **req)
{
	int sz = (int)size, tag = 0;
	void *data = e->rbuf;

	NET_CHECK(e->net->irecv(e->recv, 1, &data, &sz, &tag, &e->recv_mh, req));
}

static void *bench_post_send(struct bench_end *e, size_t size)
{
	void *req = NULL;

	while (!req)
		NET_CHECK(e->net->isend(e->send, e->sbuf, (int)size, 0, e->send_mh, &req));
	return req;
}

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Receives of a ping-pong are posted --depth ahead, as NCCL's proxy posts
 * its steps ahead, and reposted after the reply has gone; a send's
 * completion is tested while waiting for the next message, not before. */
static int bench_ahead(const struct bench_opts *o)
{
	int total = o->warmup + o->iters;

	return o->depth < total ? o->depth : total;
}

/* Ping-pong, server side: half of each full cycle (ping posted to the next
 * ping posted, everything the loop does included, as perftest times its
 * iterations), of the timed iterations, sorted. */
static void bench_pingpong(struct bench_end *ping, struct bench_end *pong, size_t size,
			   const struct bench_opts *o, double *half_rtt)
{
	void *rreqs[NCCL_NET_MAX_REQUESTS], *preqs[NCCL_NET_MAX_REQUESTS], *sreq = NULL;
	int total = o->warmup + o->iters, ahead = bench_ahead(o);
	uint64_t prev = 0, first = 0, last;
	double start = 0, secs, per_stamp;

	for (int k = 0; k < ahead; k++) {
		bench_post_recv(ping, size, &rreqs[k]);
		if (pong)
			bench_post_recv(pong, size, &preqs[k]);
	}
	for (int i = 0; i < total; i++) {
		uint64_t now = gdx_stamp();

		if (i > o->warmup)
			half_rtt[i - 1 - o->warmup] = (double)(now - prev) / 2;
		else if (i == o->warmup) {
			start = gdx_wall_s();
			first = now;
		}
		prev = now;
		if (sreq)
			bench_wait(ping, sreq); /* the previous ping's: done by now */
		sreq = bench_post_send(ping, size);
		/* the slot the previous reply freed, while the peer works */
		if (i > 0 && i - 1 + ahead < total)
			bench_post_recv(ping, size, &rreqs[(i - 1) % ahead]);
		if (pong) { /* --procs 1: this thread answers too */
			bench_wait(pong, preqs[i % ahead]);
			bench_wait(pong, bench_post_send(pong, size));
			if (i + ahead < total)
				bench_post_recv(pong, size, &preqs[i % ahead]);
		}
		bench_wait_also(ping, rreqs[i % ahead], &sreq);
	}
	last = gdx_stamp();
	secs = gdx_wall_s() - start;
	half_rtt[o->iters - 1] = (double)(last - prev) / 2;
	per_stamp = last > first ? secs / (double)(last - first) : 0;
	for (int k = 0; k < o->iters; k++)
		half_rtt[k] *= per_stamp;
	if (sreq)
		bench_wait(ping, sreq);
	qsort(half_rtt, (size_t)o->iters, sizeof(*half_rtt), bench_cmp);
}

/* Ping-pong, client side: answers every ping. */
static void bench_pong(struct bench_end *e, size_t size, const struct bench_opts *o)
{
	void *rreqs[NCCL_NET_MAX_REQUESTS], *sreq = NULL;
	int total = o->warmup + o->iters, ahead = bench_ahead(o);

	for (int k = 0; k < ahead; k++)
		bench_post_recv(e, size, &rreqs[k]);
	for (int i = 0; i < total; i++) {
		bench_wait_also(e, rreqs[i % ahead], &sreq);
		if (sreq)
			bench_wait(e, sreq); /* the previous reply's: done by now */
		sreq = bench_post_send(e, size);
		if (i + ahead < total)
			bench_post_recv(e, size, &rreqs[i % ahead]);
	}
	if (sreq)
		bench_wait(e, sreq);
}

/* Connects comm_send of one end to a listen comm of the other: the listener
 * writes its handle to the side channel, the connector reads it. */
static void bench_listen(struct bench_end *e, int dev)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];

	NET_CHECK(e->net->listen(dev, handle, &e->listen));
	bench_xfer(e->out, handle, sizeof(handle), 1);
}

/* Connects to the listen handle the other end sent (read already). */
static void bench_connect_to(struct bench_end *e, int dev, void *handle)
{
	while (!e->send) {
		NET_CHECK(e->net->connect(dev, handle, &e->send, NULL));
		bench_client_check_server();
	}
}

static void bench_connect(struct bench_end *e, int dev)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];

	bench_xfer(e->in, handle, sizeof(handle), 0);
	bench_connect_to(e, dev, handle);
}

/* A client process that fails before it connects leaves the server
 * accepting: it looks for the client's exit on the way. */
static void bench_accept(struct bench_end *e)
{
	while (!e->recv) {
		NET_CHECK(e->net->accept(e->listen, &e->recv, NULL));
		bench_server_check_client(0);
		bench_client_check_server();
	}
}

/* --procs 1: a send comm of c to a receive comm of l, connect and accept
 * driven together from this thread, as NCCL's proxy drives them. */
static void bench_pair(struct bench_end *l, int ldev, struct bench_end *c, int cdev)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];

	if (!l->listen)
		NET_CHECK(l->net->listen(ldev, handle, &l->listen));
	while (!c->send || !l->recv) {
		if (!c->send)
			NET_CHECK(c->net->connect(cdev, handle, &c->send, NULL));
		if (!l->recv)
			NET_CHECK(l->net->accept(l->listen, &l->recv, NULL));
	}
}

static char *bench_alloc(size_t n, const struct bench_opts *o)
{
	char *p = o->cuda ? bench_cuda_alloc(n, o->gpu) : calloc(1, n);

	if (!p)
		bench_die("out of memory (%zu bytes)", n);
	return p;
}

static void bench_buffers(struct bench_end *e, size_t size, const struct bench_opts *o)
{
	size_t n = size ? size : 1;
	int type = o->cuda ? NCCL_PTR_CUDA : NCCL_PTR_HOST;

	e->sbuf = bench_alloc(n, o);
	e->rbuf = bench_alloc(n, o);
	if (e->send)
		NET_CHECK(e->net->regMr(e->send, e->sbuf, (int)n, type, &e->send_mh));
	if (e->recv)
		NET_CHECK(e->net->regMr(e->recv, e->rbuf, (int)n, type, &e->recv_mh));
}

static void bench_close(struct bench_end *e, const struct bench_opts *o)
{
	if (e->send_mh)
		NET_CHECK(e->net->deregMr(e->send, e->send_mh));
	if (e->recv_mh)
		NET_CHECK(e->net->deregMr(e->recv, e->recv_mh));
	if (e->send)
		NET_CHECK(e->net->closeSend(e->send));
	if (e->recv)
		NET_CHECK(e->net->closeRecv(e->recv));
	if (e->listen)
		NET_CHECK(e->net->closeListen(e->listen));
	if (o->cuda) {
		bench_cuda_free(e->sbuf);
		bench_cuda_free(e->rbuf);
	} else {
		free(e->sbuf);
		free(e->rbuf);
	}
}

/* The next size of a sweep; SIZE_MAX past any -e. */
static size_t bench_next(size_t s, const struct bench_opts *o)
{
	if (!s)
		return 1;
	return s > SIZE_MAX / (size_t)o->factor ? SIZE_MAX : s * (size_t)o->factor;
}

/* The sweep ends at the last size not above -e, as nccl-tests' does. */
static int bench_last(size_t s, const struct bench_opts *o)
{
	return s >= o->max_size || bench_next(s, o) > o->max_size;
}

/* The buffers' size: the largest message (bench_split). */
static size_t bench_buffer_size(const struct bench_opts *o)
{
	return o->max_size < BENCH_MSG_MAX ? o->max_size : BENCH_MSG_MAX;
}

static void bench_client(const struct bench_opts *o, int in, int out)
{
	struct bench_end e = {.in = in, .out = out};
	char go, handle[NCCL_NET_HANDLE_MAXSIZE];
	int dev;

	/* The server's handle first: its plugin is up, so a failure there is
	 * reported by the server alone, before this end says anything. */
	bench_xfer(in, handle, sizeof(handle), 0);
	e.net = bench_load(o->plugin, o->profiler);
	/* on one machine the client is the peer device; on two, this one's own */
	dev = o->role == BENCH_CLIENT ? bench_dev(e.net, o->dev, 0, o)
				      : bench_dev(e.net, o->peer_dev, 1, o);
	bench_connect_to(&e, dev, handle);
	if (o->mode == BENCH_LAT) {
		bench_listen(&e, dev);
		bench_accept(&e);
	}
	bench_buffers(&e, bench_buffer_size(o), o);
	for (size_t s = o->min_size;; s = bench_next(s, o)) {
		struct bench_size z = bench_split(s);

		bench_xfer(in, &go, 1, 0);
		if (o->mode == BENCH_LAT)
			bench_pong(&e, s, o);
		else
			bench_stream_send(&e, &z, o);
		if (bench_last(s, o))
			break;
	}
	bench_xfer(in, &go, 1, 0);
	bench_close(&e, o);
	bench_prof_report(o, "client");
}

static void bench_server(const struct bench_opts *o, int in, int out)
{
	struct bench_end e = {.in = in, .out = out}, peer = {0};
	struct bench_end *pe = o->role == BENCH_LOCAL && o->procs == 1 ? &peer : NULL;
	ncclNetProperties_v7_t props, pprops;
	double *lat = calloc((size_t)o->iters, sizeof(double));
	int dev, pdev = -1;
	struct bench_report r;
	const char *peer_name;
	char go = 1;

	if (!lat)
		bench_die("out of memory");
	e.net = bench_load(o->plugin, o->profiler);
	dev = bench_dev(e.net, o->dev, 0, o);
	NET_CHECK(e.net->getProperties(dev, &props));
	if (pe) {
		peer.net = e.net;
		pdev = bench_dev(e.net, o->peer_dev, 1, o);
		NET_CHECK(e.net->getProperties(pdev, &pprops));
		bench_pair(&e, dev, pe, pdev);
		if (o->mode == BENCH_LAT)
			bench_pair(pe, pdev, &e, dev);
		bench_buffers(pe, bench_buffer_size(o), o);
	} else {
		bench_listen(&e, dev);
		bench_accept(&e);
		if (o->mode == BENCH_LAT)
			bench_connect(&e, dev);
	}
	bench_buffers(&e, bench_buffer_size(o), o);
	peer_name = pe			      ? pprops.name
		    : o->role == BENCH_SERVER ? "remote"
		    : o->peer_dev	      ? o->peer_dev
					      : "peer";
	bench_report_open(&r, o, props.name, peer_name);
	for (size_t s = o->min_size;; s = bench_next(s, o)) {
		bench_report_progress(&r, s);
		if (!pe)
			bench_xfer(out, &go, 1, 1);
		if (o->mode == BENCH_LAT) {
			bench_pingpong(&e, pe, s, o, lat);
			bench_report_lat(&r, s, lat);
		} else {
			struct bench_size z = bench_split(s);

			bench_report_stream(&r, s,
					    pe ? bench_stream_local(&e, pe, &z, o)
					       : bench_stream_recv(&e, &z, o));
		}
		if (bench_last(s, o))
			break;
	}
	bench_report_swept(&r);
	if (!pe)
		bench_xfer(out, &go, 1, 1);
	if (pe)
		bench_close(pe, o);
	bench_close(&e, o);
	bench_report_close(&r, pe ? "both ends" : "server");
	free(lat);
}

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
		fd = bench_chan_serve(o->port);
		bench_chan_send_opts(fd, o);
		bench_server(o, fd, fd);
		close(fd);
		break;
	case BENCH_CLIENT:
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
	/* Every plot file checked before the run, so that none fails after it. */
	if (o.plot)
		bench_plot_prepare(&o);
	if (o.plot_from)
		return bench_plot_from(&o);
	return bench_run(&o);
}
