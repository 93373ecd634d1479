/* SPDX-License-Identifier: MIT */
/*
 * One size of each mode, as NCCL's proxy moves a connection's steps:
 *   bw, rate  the client streams to the server, --depth messages posted and
 *             the oldest tested, in order (one ring per side);
 *   lat       ping-pong, one message each way at a time, receives posted
 *             --depth ahead: half round trips, sorted.
 * Both ends in one thread (--procs 1) progress sends and receives alike.
 */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <gdx/gdx_stamp.h>
#include <nccl/net.h>

#include "tools/bench/gdx_bench_state.h"

/* Idle, as NCCL's proxy thread does: leave the CPU to the NIC (here, rxe's
 * kernel threads on the same cores). */
static void bench_idle(int progress)
{
	if (!progress)
		sched_yield();
}

struct bench_size bench_split(size_t bytes)
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
double bench_stream_recv(struct bench_end *e, const struct bench_size *z,
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

void bench_stream_send(struct bench_end *e, const struct bench_size *z, const struct bench_opts *o)
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
double bench_stream_local(struct bench_end *srv, struct bench_end *cli, const struct bench_size *z,
			  const struct bench_opts *o)
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
void bench_pingpong(struct bench_end *ping, struct bench_end *pong, size_t size,
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
void bench_pong(struct bench_end *e, size_t size, const struct bench_opts *o)
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
