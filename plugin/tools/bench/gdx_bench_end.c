/* SPDX-License-Identifier: MIT */
/*
 * The two ends of a bw, rate or lat sweep: each loads the plugin, opens its
 * comms on its device (the listen handles over the side channel, or both
 * ends driven from one thread), registers its buffers, and runs every size
 * of the sweep when the other end says go; the server reports
 * (gdx_bench_report.c).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <nccl/net.h>

#include "tools/bench/gdx_bench_state.h"

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

void bench_client(const struct bench_opts *o, int in, int out)
{
	struct bench_end e = {.in = in, .out = out};
	char go, handle[NCCL_NET_HANDLE_MAXSIZE];
	ncclNetProperties_v7_t props;
	unsigned long long counts[2];
	struct bench_report r;
	struct bench_who server;
	struct bench_fig fig;
	int dev;

	/* The server's handle first: its plugin is up, so a failure there is
	 * reported by the server alone, before this end says anything. */
	bench_xfer(in, handle, sizeof(handle), 0);
	bench_who_recv(in, &server);
	e.net = bench_load(o->plugin, o->profiler);
	/* on one machine the client is the peer device; on two, this one's own */
	dev = o->role == BENCH_CLIENT ? bench_dev(e.net, o->dev, 0, o)
				      : bench_dev(e.net, o->peer_dev, 1, o);
	NET_CHECK(e.net->getProperties(dev, &props));
	if (o->role == BENCH_LOCAL)
		bench_set_link("%s and %s", props.name, server.dev);
	bench_connect_to(&e, dev, handle);
	bench_who_send(out, props.name);
	if (o->mode == BENCH_LAT) {
		bench_listen(&e, dev);
		bench_accept(&e);
	}
	bench_buffers(&e, bench_buffer_size(o), o);
	/* On another machine, the server's table here too, as perftest's
	 * client prints its results; forked, the server prints it alone. */
	if (o->role == BENCH_CLIENT)
		bench_report_open(&r, o, props.name, props.speed / 1000.0, &server, 1);
	for (size_t s = o->min_size;; s = bench_next(s, o)) {
		struct bench_size z = bench_split(s);

		bench_xfer(in, &go, 1, 0);
		if (o->mode == BENCH_LAT)
			bench_pong(&e, s, o);
		else
			bench_stream_send(&e, &z, o);
		bench_fig_recv(in, &fig);
		if (o->role == BENCH_CLIENT)
			bench_report_fig(&r, s, &fig);
		if (bench_last(s, o))
			break;
	}
	bench_xfer(in, &go, 1, 0);
	bench_close(&e, o);
	bench_counts_recv(in, counts);
	if (o->role == BENCH_CLIENT)
		bench_report_close(&r, "client", counts);
	else
		bench_prof_report(o, "client");
}

void bench_server(const struct bench_opts *o, int in, int out)
{
	struct bench_end e = {.in = in, .out = out}, peer = {0};
	struct bench_end *pe = o->role == BENCH_LOCAL && o->procs == 1 ? &peer : NULL;
	ncclNetProperties_v7_t props, pprops;
	double *lat = calloc((size_t)o->iters, sizeof(double));
	unsigned long long counts[2];
	struct bench_who who = {{0}};
	struct bench_report r;
	int dev, pdev = -1;
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
		snprintf(who.dev, sizeof(who.dev), "%s", pprops.name);
		bench_set_link("%s and %s", props.name, pprops.name);
		bench_pair(&e, dev, pe, pdev);
		if (o->mode == BENCH_LAT)
			bench_pair(pe, pdev, &e, dev);
		bench_buffers(pe, bench_buffer_size(o), o);
	} else {
		bench_listen(&e, dev);
		bench_who_send(out, props.name);
		bench_accept(&e);
		bench_who_recv(in, &who);
		if (o->role == BENCH_LOCAL)
			bench_set_link("%s and %s", props.name, who.dev);
		if (o->role != BENCH_SERVER)
			who.host[0] = '\0'; /* this machine's */
		if (o->mode == BENCH_LAT)
			bench_connect(&e, dev);
	}
	bench_buffers(&e, bench_buffer_size(o), o);
	bench_report_open(&r, o, props.name, props.speed / 1000.0, &who, 0);
	for (size_t s = o->min_size;; s = bench_next(s, o)) {
		struct bench_fig fig = {NAN, NAN, NAN, NAN};

		bench_report_progress(&r, s);
		if (!pe)
			bench_xfer(out, &go, 1, 1);
		if (o->mode == BENCH_LAT) {
			bench_pingpong(&e, pe, s, o, lat);
			bench_fig_lat(lat, o->iters, &fig);
		} else {
			struct bench_size z = bench_split(s);

			fig.secs = pe ? bench_stream_local(&e, pe, &z, o)
				      : bench_stream_recv(&e, &z, o);
		}
		if (!pe)
			bench_fig_send(out, &fig);
		bench_report_fig(&r, s, &fig);
		if (bench_last(s, o))
			break;
	}
	bench_report_swept(&r);
	if (!pe)
		bench_xfer(out, &go, 1, 1);
	if (pe)
		bench_close(pe, o);
	bench_close(&e, o);
	bench_bytes_received(&counts[0], &counts[1]);
	if (!pe)
		bench_counts_send(out, counts);
	bench_report_close(&r, pe ? "both ends" : "server", counts);
	free(lat);
}
