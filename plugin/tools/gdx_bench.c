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

/*
 * A size: whole bytes, or a number (a fraction allowed) with K, M or G, powers
 * of 1024 as nccl-tests reads them, optionally followed by B or iB: 4096,
 * 64K, 64KB and 64KiB alike, 1.5M. Anything else, a fraction of a byte, or
 * more than BENCH_SIZE_MAX is refused, naming the option.
 */
static size_t bench_parse_size(const char *opt, const char *s)
{
	unsigned long long whole = 0, frac = 0, frac_div = 1, mult = 1, v;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		goto bad;
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > BENCH_SIZE_MAX)
			goto range;
		whole = whole * 10 + (unsigned long long)(*p - '0');
	}
	if (*p == '.') {
		if (!isdigit((unsigned char)*++p))
			goto bad;
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div >= 1000000000ULL)
				goto bad;
			frac = frac * 10 + (unsigned long long)(*p - '0');
			frac_div *= 10;
		}
	}
	switch (toupper((unsigned char)*p)) {
	case 'K': mult = 1ULL << 10, p++; break;
	case 'M': mult = 1ULL << 20, p++; break;
	case 'G': mult = 1ULL << 30, p++; break;
	}
	if (mult > 1 && p[0] == 'i' && p[1] == 'B')
		p += 2;
	else if (*p == 'B')
		p++;
	if (*p)
		goto bad;
	if (whole > BENCH_SIZE_MAX / mult)
		goto range;
	if (frac * mult % frac_div)
		bench_usage_error("%s %s is not a whole number of bytes", opt, s);
	v = whole * mult + frac * mult / frac_div;
	if (v > BENCH_SIZE_MAX)
		goto range;
	return (size_t)v;
bad:
	bench_usage_error("%s %s: not a size (bytes, or with K, M or G: 4096, 64K, 1.5M, 8G; "
			  "64KB and 64KiB are 64K)",
			  opt, s);
range:
	bench_usage_error("%s %s is more than %lluG", opt, s, BENCH_SIZE_MAX >> 30);
}

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

static void bench_progress(const struct bench_opts *o, size_t s)
{
	/* A live line on long sweeps, only where a person watches. */
	if (o->min_size != o->max_size && !o->json && isatty(STDERR_FILENO))
		fprintf(stderr, "\r  %zu bytes ...\033[K", s);
}

static void bench_header(const struct bench_opts *o, const char *name, const char *peer)
{
	static const char *const mode_name[] = {"bw", "rate", "lat"};
	const char *how = o->procs == 1 ? "one thread drives both ends" : "two processes";

	if (o->role != BENCH_LOCAL)
		how = "client on another machine";
	if (o->json)
		printf("{\"device\": \"%s\", \"peer\": \"%s\", \"mode\": \"%s\", \"depth\": %d, "
		       "\"iters\": %d, \"procs\": %d, \"memory\": \"%s\", \"results\": [",
		       name, peer, mode_name[o->mode], o->depth, o->iters,
		       o->role == BENCH_LOCAL ? o->procs : 2, o->cuda ? "cuda" : "host");
	else if (o->mode == BENCH_LAT)
		printf("# gdx-bench: ping-pong %s <-> %s (%s, %s memory), %d iterations after %d "
		       "warm-up, receives posted %d ahead\n"
		       "# %12s %14s %14s %14s\n",
		       name, peer, how, o->cuda ? "CUDA" : "host", o->iters, o->warmup, o->depth,
		       "bytes", "median(us)", "p99(us)", "min(us)");
	else
		printf("# gdx-bench: %s %s -> %s (%s, %s memory), depth %d, %d iterations after "
		       "%d warm-up\n"
		       "# %12s %10s %10s %10s %12s\n",
		       mode_name[o->mode], peer, name, how, o->cuda ? "CUDA" : "host", o->depth,
		       o->iters, o->warmup, "bytes", "time(us)", "GB/s", "Gb/s", "msg/s");
}

static void bench_server(const struct bench_opts *o, int in, int out)
{
	struct bench_end e = {.in = in, .out = out}, peer = {0};
	struct bench_end *pe = o->role == BENCH_LOCAL && o->procs == 1 ? &peer : NULL;
	ncclNetProperties_v7_t props, pprops;
	double *lat = calloc((size_t)o->iters, sizeof(double));
	int dev, pdev = -1, first = 1;
	struct bench_series run = {.label = "gdx-bench"};
	unsigned long long bytes_gpu, bytes_host;
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
	bench_header(o, props.name, peer_name);
	bench_plot_title(&run, o->mode, props.name, peer_name, o->cuda ? "cuda" : "host");
	for (size_t s = o->min_size;; s = bench_next(s, o)) {
		bench_progress(o, s);
		if (!pe)
			bench_xfer(out, &go, 1, 1);
		if (o->mode == BENCH_LAT) {
			double med, p99;

			bench_pingpong(&e, pe, s, o, lat);
			med = lat[o->iters / 2] * 1e6;
			p99 = lat[(o->iters * 99) / 100] * 1e6;
			if (o->json)
				printf("%s{\"bytes\": %zu, \"median_us\": %.3f, \"p99_us\": %.3f, "
				       "\"min_us\": %.3f}",
				       first ? "" : ", ", s, med, p99, lat[0] * 1e6);
			else
				printf("  %12zu %14.2f %14.2f %14.2f\n", s, med, p99, lat[0] * 1e6);
			bench_plot_add(&run, s, NAN, med);
		} else {
			struct bench_size z = bench_split(s);
			double t = pe ? bench_stream_local(&e, pe, &z, o)
				      : bench_stream_recv(&e, &z, o);
			double gbs = t > 0 ? (double)s * o->iters / t / 1e9 : 0;
			double rate = t > 0 ? o->iters / t : 0;

			if (o->json)
				printf("%s{\"bytes\": %zu, \"seconds\": %.6f, \"GBps\": %.4f, "
				       "\"Gbps\": %.4f, \"msg_rate\": %.1f}",
				       first ? "" : ", ", s, t, gbs, gbs * 8, rate);
			else
				printf("  %12zu %10.2f %10.4f %10.4f %12.1f\n", s,
				       t * 1e6 / o->iters, gbs, gbs * 8, rate);
			bench_plot_add(&run, s, gbs * 8, t * 1e6 / o->iters);
		}
		fflush(stdout);
		first = 0;
		if (bench_last(s, o))
			break;
	}
	if (o->min_size != o->max_size && !o->json && isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	if (!pe)
		bench_xfer(out, &go, 1, 1);
	if (pe)
		bench_close(pe, o);
	bench_close(&e, o);
	/* what this end's receive comms counted when they closed */
	bench_bytes_received(&bytes_gpu, &bytes_host);
	if (o->json)
		printf("], \"bytes_gpu_direct\": %llu, \"bytes_host\": %llu}\n", bytes_gpu,
		       bytes_host);
	else
		printf("# bytes received: %llu GPU-direct, %llu through host memory (the plugin's "
		       "counters)\n",
		       bytes_gpu, bytes_host);
	bench_prof_report(o, pe ? "both ends" : "server");
	free(lat);
	if (o->plot)
		bench_plot_write(&run);
}

/*
 * The plugin this program was built or installed with: beside it in a build
 * tree (build/gdx-bench, build/libnccl-net-gdx.so), in ../lib under an install
 * prefix, else the bare name through the library path, as NCCL opens it.
 * Found from the program's own path, so a DESTDIR or moved tree still works.
 */
static const char *bench_default_plugin(void)
{
	static const char *const rel[] = {"libnccl-net-gdx.so", "../lib/libnccl-net-gdx.so"};
	static char path[PATH_MAX];
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			slash[1] = '\0';
			for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				int len = snprintf(path, sizeof(path), "%s%s", exe, rel[i]);

				if (len < (int)sizeof(path) && !access(path, R_OK))
					return path;
			}
		}
	}
	return "libnccl-net-gdx.so";
}

static void bench_usage(void)
{
	printf("usage: gdx-bench [options]                    both ends on this machine\n"
	       "       gdx-bench --server [options]           one end, waits for a client\n"
	       "       gdx-bench --client HOST [options]      the other end, on another machine\n"
	       "Drives the plugin through its NCCL API (ncclNetPlugin_v7), as NCCL's proxy does.\n"
	       "Letters as perftest has them (-d, -t, -p, -x, -s, -n, -a) and nccl-tests' sweep\n"
	       "(-b, -e, -f, -w).\n\n"
	       "  -m, --mode MODE      bw: the client streams to the server (default);\n"
	       "                       rate: the same, for message rates of small sizes;\n"
	       "                       lat: ping-pong, half round trips (median, p99);\n"
	       "                       conn: -n connections opened, held and closed in one\n"
	       "                       process: connect time, memory, descriptors, close\n"
	       "  -d, --dev NAME       this end's device (the server's when both are here;\n"
	       "                       default: device 0); a fused device is a+b (see -r)\n"
	       "      --peer-dev NAME  the client's device when both are here (default:\n"
	       "                       device 1, else 0)\n"
	       "  -s, --size BYTES     one message size (default 1M, 8 for lat and rate);\n"
	       "                       sizes are bytes or K, M, G (powers of 1024; KB and\n"
	       "                       KiB alike), up to 1024G; above 1G a size is sent as\n"
	       "                       1G messages, as NCCL posts large transfers (bw, rate)\n"
	       "  -b, --min BYTES      sweep from (with -e, -f), like nccl-tests\n"
	       "  -e, --max BYTES      sweep to, not beyond (-b above -e is refused)\n"
	       "  -f, --factor N       sweep factor (default 2)\n"
	       "  -a, --all            sweep 2 B to 8 MiB, like perftest's -a\n"
	       "  -n, --iters N        timed messages per size (default 1000)\n"
	       "  -w, --warmup N       untimed messages first (default 100)\n"
	       "  -t, --depth N        messages in flight, 1-32 (default 8, as NCCL); in lat,\n"
	       "                       receives posted ahead (perftest's tx depth)\n"
	       "  -P, --procs N        both ends here: 2 processes (default), or 1 thread\n"
	       "                       driving both, as one NCCL proxy thread drives all of a\n"
	       "                       GPU's connections\n"
	       "  -S, --server         wait for a gdx-bench --client on --port; the client\n"
	       "                       runs what the server was given\n"
	       "  -C, --client HOST    connect to a gdx-bench --server on HOST\n"
	       "  -p, --port N         the side channel's TCP port (default 18517)\n"
	       "      --wait SECONDS   how long a client keeps trying the server (default 30)\n"
	       "      --interval S     bw, rate: also print the rate of every S seconds as it\n"
	       "                       runs (lines starting with #)\n"
	       "  -x, --gid-index N    the RoCE GID index (NCCL_GDX_GID_INDEX), as perftest's -x\n"
	       "  -r, --rails SPEC     fuse devices into rails (NCCL_GDX_RAILS syntax, e.g.\n"
	       "                       mlx5_0+mlx5_1); then name the fused device with -d\n"
	       "  -M, --mem KIND       host (default) or cuda: buffers in GPU memory, for\n"
	       "                       devices with the GPUDirect RDMA path\n"
	       "      --gpu N          the GPU for --mem cuda (default 0)\n"
	       "      --plugin PATH    the plugin (default: libnccl-net-gdx.so beside this\n"
	       "                       program, else in ../lib, else from the library path)\n"
	       "      --profiler       through the v10 table, with a profiler callback that\n"
	       "                       counts the plugin's events and a profiler handle to\n"
	       "                       every isend and irecv: what reporting them costs\n"
	       "  -j, --json           one JSON object instead of the table\n"
	       "      --plot FILE.svg  also draw the sweep as SVG: bandwidth, and time per\n"
	       "                       message (lat: the median), against the size\n"
	       "      --plot-ref FILE  figures drawn beside the run's, up to %d files: JSON as\n"
	       "                       -j prints it; {\"label\": \"ib_write_bw\", \"results\":\n"
	       "                       [{\"bytes\": 65536, \"Gbps\": 90.1}]} is enough\n"
	       "                       (\"median_us\" for a latency; label: the file's name)\n"
	       "      --plot-from FILE plot an earlier -j run's JSON, measuring nothing\n"
	       "  -V, --version        the version\n"
	       "  -h, --help\n\n"
	       "GB/s is 10^9 bytes per second, as nccl-tests reports; Gb/s beside it.\n"
	       "exit status: 0 every size ran; 1 a runtime failure (the plugin, a device, the\n"
	       "other end); 3 a --plot-ref or --plot-from file that cannot be read or is not\n"
	       "figures; 64 a bad command line; 70 the --plot file cannot be written (the\n"
	       "codes of gdx-doctor's table).\n",
	       BENCH_PLOT_REFS);
}

/* A whole number for an option, from min to max: "--iters must be a number"
 * for what is none, "--iters 0 is out of range 1-2147483647" for one
 * outside (strtol's overflow included). */
static int bench_int(const char *s, const char *what, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || (errno && errno != ERANGE))
		bench_usage_error("%s must be a number, not \"%s\"", what, s);
	if (errno == ERANGE || v < min || v > max)
		bench_usage_error("%s %s is out of range %ld-%ld", what, s, min, max);
	return (int)v;
}

/* --plot writes SVG and nothing else: a name that promises another format
 * (x.png, a name without one) is refused rather than filled with SVG. */
static int bench_svg_name(const char *path)
{
	size_t n = strlen(path);

	return n > 4 && !strcasecmp(path + n - 4, ".svg") && path[n - 5] != '/';
}

/* Settings the plugin reads at init, given as options. */
static void bench_setenv(const char *name, const char *value)
{
	if (setenv(name, value, 1))
		bench_die("setenv %s: %s", name, strerror(errno));
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

int main(int argc, char **argv)
{
	enum {
		OPT_PEER_DEV = 256,
		OPT_GPU,
		OPT_PLUGIN,
		OPT_WAIT,
		OPT_INTERVAL,
		OPT_PLOT,
		OPT_PLOT_REF,
		OPT_PLOT_FROM,
		OPT_PROFILER
	};
	static const struct option longopts[] = {
		{"mode", required_argument, NULL, 'm'},
		{"dev", required_argument, NULL, 'd'},
		{"peer-dev", required_argument, NULL, OPT_PEER_DEV},
		{"size", required_argument, NULL, 's'},
		{"min", required_argument, NULL, 'b'},
		{"max", required_argument, NULL, 'e'},
		{"factor", required_argument, NULL, 'f'},
		{"all", no_argument, NULL, 'a'},
		{"iters", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'},
		{"depth", required_argument, NULL, 't'},
		{"procs", required_argument, NULL, 'P'},
		{"server", no_argument, NULL, 'S'},
		{"client", required_argument, NULL, 'C'},
		{"port", required_argument, NULL, 'p'},
		{"wait", required_argument, NULL, OPT_WAIT},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		{"gid-index", required_argument, NULL, 'x'},
		{"rails", required_argument, NULL, 'r'},
		{"mem", required_argument, NULL, 'M'},
		{"gpu", required_argument, NULL, OPT_GPU},
		{"plugin", required_argument, NULL, OPT_PLUGIN},
		{"profiler", no_argument, NULL, OPT_PROFILER},
		{"json", no_argument, NULL, 'j'},
		{"plot", required_argument, NULL, OPT_PLOT},
		{"plot-ref", required_argument, NULL, OPT_PLOT_REF},
		{"plot-from", required_argument, NULL, OPT_PLOT_FROM},
		{"version", no_argument, NULL, 'V'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	struct bench_opts o = {.min_size = 0,
			       .max_size = 0,
			       .factor = 2,
			       .iters = 1000,
			       .warmup = 100,
			       .depth = 8,
			       .mode = BENCH_BW,
			       .procs = 2,
			       .role = BENCH_LOCAL,
			       .port = 18517,
			       .wait = 30};
	const char *min_arg = NULL, *max_arg = NULL;
	int c, fd, sized = 0, rails = 0;

	opterr = 0; /* the messages below say it once, on standard error */
	while ((c = getopt_long(argc, argv, ":m:d:s:b:e:f:an:w:t:P:SC:p:x:r:M:jVh", longopts,
				NULL)) != -1) {
		switch (c) {
		case 'm':
			if (!strcmp(optarg, "bw"))
				o.mode = BENCH_BW;
			else if (!strcmp(optarg, "rate"))
				o.mode = BENCH_RATE;
			else if (!strcmp(optarg, "lat"))
				o.mode = BENCH_LAT;
			else if (!strcmp(optarg, "conn"))
				o.mode = BENCH_CONN;
			else
				bench_usage_error(
					"--mode must be bw, rate, lat or conn, not \"%s\"", optarg);
			break;
		case 'd': o.dev = optarg; break;
		case OPT_PEER_DEV: o.peer_dev = optarg; break;
		case 's':
			o.min_size = o.max_size = bench_parse_size("-s", optarg);
			min_arg = max_arg = NULL;
			sized = 1;
			break;
		case 'b':
			o.min_size = bench_parse_size("-b", optarg);
			min_arg = optarg;
			sized = 1;
			break;
		case 'e':
			o.max_size = bench_parse_size("-e", optarg);
			max_arg = optarg;
			sized = 1;
			break;
		case 'f': o.factor = bench_int(optarg, "--factor", 2, INT_MAX); break;
		case 'a':
			o.min_size = 2;
			o.max_size = 8 << 20;
			min_arg = max_arg = NULL;
			sized = 1;
			break;
		case 'n': o.iters = bench_int(optarg, "--iters", 1, INT_MAX); break;
		case 'w': o.warmup = bench_int(optarg, "--warmup", 0, INT_MAX); break;
		case 't': o.depth = bench_int(optarg, "--depth", 1, NCCL_NET_MAX_REQUESTS); break;
		case 'P': o.procs = bench_int(optarg, "--procs", 1, 2); break;
		case 'S': o.role = BENCH_SERVER; break;
		case 'C':
			o.role = BENCH_CLIENT;
			o.host = optarg;
			break;
		case 'p': o.port = bench_int(optarg, "--port", 1, 65535); break;
		case OPT_WAIT: o.wait = bench_int(optarg, "--wait", 0, INT_MAX); break;
		case OPT_INTERVAL: {
			char *end;

			o.interval = strtod(optarg, &end);
			if (*end || !(o.interval > 0) || o.interval > 3600)
				bench_usage_error("--interval %s: seconds, above 0 and up to 3600",
						  optarg);
			break;
		}
		case 'x':
			bench_int(optarg, "--gid-index", 0, 255);
			bench_setenv("NCCL_GDX_GID_INDEX", optarg); /* read by the plugin's init */
			break;
		case 'r':
			bench_setenv("NCCL_GDX_RAILS", optarg);
			rails = 1;
			break;
		case 'M':
			if (!strcmp(optarg, "host"))
				o.cuda = 0;
			else if (!strcmp(optarg, "cuda"))
				o.cuda = 1;
			else
				bench_usage_error("--mem must be host or cuda, not \"%s\"", optarg);
			break;
		case OPT_GPU: o.gpu = bench_int(optarg, "--gpu", 0, INT_MAX); break;
		case OPT_PLUGIN: o.plugin = optarg; break;
		case OPT_PROFILER: o.profiler = 1; break;
		case 'j': o.json = 1; break;
		case OPT_PLOT: o.plot = optarg; break;
		case OPT_PLOT_REF:
			if (o.plot_nrefs == BENCH_PLOT_REFS)
				bench_usage_error("--plot-ref at most %d times", BENCH_PLOT_REFS);
			o.plot_refs[o.plot_nrefs++] = optarg;
			break;
		case OPT_PLOT_FROM: o.plot_from = optarg; break;
		case 'V': printf("gdx-bench %s\n", GDX_VERSION); return BENCH_EXIT_OK;
		case 'h': bench_usage(); return BENCH_EXIT_OK;
		case ':': bench_usage_error("%s needs an argument", argv[optind - 1]);
		default:
			if (optopt)
				bench_usage_error("unknown option -%c", optopt);
			bench_usage_error("unknown option %s", argv[optind - 1]);
		}
	}
	if (optind < argc)
		bench_usage_error("unexpected argument \"%s\"", argv[optind]);
	if (!sized)
		o.min_size = o.max_size = o.mode == BENCH_BW ? 1 << 20 : 8;
	if (min_arg && max_arg && o.min_size > o.max_size)
		bench_usage_error("-b %s is above -e %s", min_arg, max_arg);
	if (o.max_size < o.min_size)
		o.max_size = o.min_size; /* -b alone: that one size */
	if (o.mode == BENCH_LAT && o.max_size > BENCH_MSG_MAX)
		bench_usage_error("lat takes sizes up to 1G: one message each way");
	if (!o.plugin)
		o.plugin = bench_default_plugin();
	if (o.plot && !bench_svg_name(o.plot))
		bench_usage_error("--plot %s: gdx-bench draws SVG only; give a name ending in .svg",
				  o.plot);
	if ((o.plot_from || o.plot_nrefs) && !o.plot)
		bench_usage_error("%s needs --plot FILE.svg",
				  o.plot_from ? "--plot-from" : "--plot-ref");
	if (o.plot && !o.plot_from && o.role == BENCH_CLIENT)
		bench_usage_error(
			"--plot goes to the server, which measures (gdx-bench -S --plot FILE)");
	if (o.plot && !o.plot_from && o.mode == BENCH_CONN)
		bench_usage_error("--plot draws the bw, rate and lat sweeps, not --mode conn");
	/* Every plot file checked before the run, so that none fails after it. */
	if (o.plot)
		bench_plot_prepare(&o);
	if (o.plot_from) {
		struct bench_series from;

		bench_plot_read(o.plot_from, "gdx-bench", &from);
		bench_plot_write(&from);
		return BENCH_EXIT_OK;
	}
	if (o.profiler && rails)
		bench_usage_error("--profiler and --rails: the v10 table --profiler loads presents "
				  "physical devices only (NCCL fuses them)");
	if (o.mode == BENCH_CONN) {
		if (o.role != BENCH_LOCAL)
			bench_usage_error("--mode conn runs both ends on this machine");
		return bench_conn(&o);
	}
	/* A closed pipe or socket is an error the side channel reports. */
	signal(SIGPIPE, SIG_IGN);
	switch (o.role) {
	case BENCH_LOCAL: bench_local(&o); break;
	case BENCH_SERVER:
		/* The plugin and the device first, as ib_write_bw opens its device
		 * before it listens: a node without one fails now, not once a
		 * client has come. */
		bench_dev(bench_load(o.plugin, o.profiler), o.dev, 0, &o);
		fd = bench_chan_serve(o.port);
		bench_chan_send_opts(fd, &o);
		bench_server(&o, fd, fd);
		close(fd);
		break;
	case BENCH_CLIENT:
		fd = bench_chan_dial(o.host, o.port, o.wait);
		bench_chan_recv_opts(fd, &o);
		bench_client(&o, fd, fd);
		close(fd);
		break;
	}
	return BENCH_EXIT_OK;
}
