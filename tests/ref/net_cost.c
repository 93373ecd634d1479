/* SPDX-License-Identifier: MIT */
/*
 * The client scripts/cpu-cost.sh drives any net plugin with, through its
 * ncclNetPlugin_v11 table, the way NCCL's proxy drives it: this plugin, and
 * a peer built from NCCL's own IB transport, the same calls in the same
 * order. Two processes, one thread each: the receiver (the parent, first
 * device) keeps DEPTH receives posted and tests only its oldest; the sender
 * (the child, second device) sends each message as soon as isend takes it,
 * keeps up to DEPTH in flight and tests only its oldest.
 *
 * Every call goes through a wrapper of its own (cc_isend, cc_irecv,
 * cc_test_send, cc_test_recv) so that callgrind gives its inclusive
 * instructions, the plugin's and the verbs provider's; each process prints
 * how many calls did work and how many found nothing, which cpu-cost.sh
 * needs to take the empty calls out.
 *
 *   net_cost -p PLUGIN.so [-s SIZE] [-n MSGS] [-w WARMUP] [-d DEPTH] [-m MODE]
 *            [-r RECV_DEV] [-t SEND_DEV] [-P] [-F FLOWS] [-H]
 *
 * A device "a+b" is fused by makeVDevice, as NCCL fuses NICs; -P passes a
 * profiler callback that counts the events, and a handle with each call.
 *
 * MODE stream (default): the measured stream. spin-test: the receiver tests
 * one posted receive N times before the sender sends it; spin-test-send: the
 * sender tests one send of SIZE bytes (make it large) N times while it is on
 * the wire; spin-isend: the sender calls isend N times before the receiver
 * posts: every such call finds nothing, so their cost is an empty call's,
 * measured alone. -b USEC: after a call that finds nothing, the client waits
 * that long outside the plugin, as a proxy with other connections to serve
 * would, so that a message comes with fewer empty calls.
 *
 * -F FLOWS (stream): that many connections between the two devices, each
 * with its own DEPTH, one thread on each side serving them in turn, as
 * NCCL's proxy serves a peer's channels; each side then prints its rate
 * (from the end of the warm-up).
 * -H: tell the plugin so first, as NCCL does (setNetAttr: one peer, FLOWS
 * flows per peer, before the connections and again for the stream).
 */
#include <errno.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nccl/net.h>
#include <nccl/profiler_net.h>

#define MAX_DEPTH 32
#define MAX_FLOWS 16

static const ncclNet_v11_t *net;
static void *ctx;
/* -P: a profiler that takes the events (the cheapest there is: it counts
 * them), and the handle NCCL passes with each call */
static int profiling;
static unsigned long long prof_started, prof_stopped;
static char prof_handle;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "net_cost: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

#define CHECK(call)                                                          \
	do {                                                                 \
		ncclResult_t r_ = (call);                                    \
		if (r_ != ncclSuccess)                                       \
			die("%s failed: %d (line %d)", #call, r_, __LINE__); \
	} while (0)

static void logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		   const char *fmt, ...)
{
	va_list ap;

	(void)flags;
	if (level != NCCL_LOG_WARN)
		return;
	va_start(ap, fmt);
	fprintf(stderr, "net_cost: plugin WARN (%s:%d): ", file, line);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
}

static ncclResult_t prof_event(void **eh, int type, void *phandle, int64_t id, void *data)
{
	(void)phandle;
	(void)id;
	(void)data;
	if (type == ncclProfilerNetEventStart) {
		*eh = &prof_handle;
		prof_started++;
	} else if (type == ncclProfilerNetEventStop) {
		prof_stopped++;
	}
	return ncclSuccess;
}

/* ---- the calls, each in a wrapper of its own ---- */

/* Each wrapper counts its calls in a slot of its own, which also keeps the
 * compiler from folding wrappers whose code is the same into one name. */
enum { W_ISEND, W_IRECV, W_TEST_SEND, W_TEST_RECV, W_SPIN_ISEND, W_SPIN_TEST, W_N };
static volatile unsigned long wrapped[W_N];

__attribute__((noinline)) static ncclResult_t cc_isend(void *c, void *data, size_t size, void *mh,
						       void **req)
{
	wrapped[W_ISEND]++;
	return net->isend(c, data, size, 0, mh, profiling ? &prof_handle : NULL, req);
}

__attribute__((noinline)) static ncclResult_t cc_irecv(void *c, void *data, size_t size, void *mh,
						       void **req)
{
	void *ph = &prof_handle;
	int tag = 0;

	wrapped[W_IRECV]++;
	return net->irecv(c, 1, &data, &size, &tag, &mh, profiling ? &ph : NULL, req);
}

__attribute__((noinline)) static ncclResult_t cc_test_send(void *req, int *done, int *size)
{
	wrapped[W_TEST_SEND]++;
	return net->test(req, done, size);
}

__attribute__((noinline)) static ncclResult_t cc_test_recv(void *req, int *done, int *size)
{
	wrapped[W_TEST_RECV]++;
	return net->test(req, done, size);
}

/* The spins' calls, apart: each finds nothing. */
__attribute__((noinline)) static ncclResult_t cc_spin_isend(void *c, void *data, size_t size,
							    void *mh, void **req)
{
	wrapped[W_SPIN_ISEND]++;
	return net->isend(c, data, size, 0, mh, profiling ? &prof_handle : NULL, req);
}

__attribute__((noinline)) static ncclResult_t cc_spin_test(void *req, int *done, int *size)
{
	wrapped[W_SPIN_TEST]++;
	return net->test(req, done, size);
}

/* ---- set-up ---- */

static void load(const char *path)
{
	ncclNetCommConfig_v11_t config = {.trafficClass = -1};
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!lib)
		die("cannot load %s: %s", path, dlerror());
	net = dlsym(lib, "ncclNetPlugin_v11");
	if (!net)
		die("%s has no ncclNetPlugin_v11", path);
	CHECK(net->init(&ctx, 1, &config, logger, profiling ? prof_event : NULL));
}

/* The device named name, or for "a+b" the one makeVDevice fuses of a and b,
 * as NCCL fuses NICs. */
static int dev_named(const char *name)
{
	ncclNetProperties_v11_t p;
	int n;

	if (strchr(name, '+')) {
		ncclNetVDeviceProps_v11_t v = {0};
		char buf[256], *save = NULL;
		int d;

		snprintf(buf, sizeof(buf), "%s", name);
		for (char *t = strtok_r(buf, "+", &save); t; t = strtok_r(NULL, "+", &save))
			v.devs[v.ndevs++] = dev_named(t);
		CHECK(net->makeVDevice(&d, &v));
		return d;
	}
	CHECK(net->devices(&n));
	for (int i = 0; i < n; i++) {
		CHECK(net->getProperties(i, &p));
		if (!strcmp(p.name, name) ||
		    (!strncmp(p.name, name, strlen(name)) && p.name[strlen(name)] == ':'))
			return i;
	}
	die("no device %s among %d", name, n);
	return -1;
}

static void xwrite(int fd, const void *p, size_t n)
{
	if (write(fd, p, n) != (ssize_t)n)
		die("pipe write: %s", strerror(errno));
}

static void xread(int fd, void *p, size_t n)
{
	if (read(fd, p, n) != (ssize_t)n)
		die("pipe read: %s", strerror(errno));
}

/* ---- the two ends ---- */

struct opts {
	size_t size;
	int msgs, warmup, depth, spins, flows, hints, rates;
	long backoff_us; /* -b: the client's own wait after a call that found nothing */
	const char *mode;
};

/* One connection and what is in flight on it. */
struct flow {
	void *listen, *comm, *mh, *req[MAX_DEPTH];
	char *buf;
	int posted, done;
};

static struct flow flows[MAX_FLOWS];

/* After a call that found nothing, the proxy does other work (here: waits
 * outside the plugin), as NCCL's does with many connections: fewer empty
 * calls per message, so that what an empty call costs weighs less in the
 * work of a message. */
static void backoff(const struct opts *o)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = o->backoff_us * 1000};

	if (o->backoff_us > 0)
		nanosleep(&ts, NULL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* -H: what NCCL's proxy tells a plugin that has setNetAttr: the peers and
 * flows of what comes (-1: not said). */
static void hint(const struct opts *o)
{
	ncclNetCommAttr_v11_t a = {.maxConcurrentPeers = 1,
				   .minConcurrentPeers = 1,
				   .maxFlowsPerPeer = o->flows,
				   .minFlowsPerPeer = o->flows};
	ncclNetAttr_v11_t attr = {
		.sendCommAttr = a, .recvCommAttr = a, .op = ~0u, .algo = ~0u, .proto = ~0u};

	if (o->hints && net->setNetAttr)
		CHECK(net->setNetAttr(ctx, &attr));
}

struct counts {
	unsigned long long isend_ok, isend_empty, irecv_ok, irecv_empty, test_done, test_empty;
};

static void report(const char *side, const struct counts *k, int msgs)
{
	fprintf(stderr, "net_cost %s: messages %d isend %llu %llu irecv %llu %llu test %llu %llu\n",
		side, msgs, k->isend_ok, k->isend_empty, k->irecv_ok, k->irecv_empty, k->test_done,
		k->test_empty);
}

/* The stream's rate, from the end of the warm-up on. */
static void report_rate(const char *side, const struct opts *o, double t0, double t1)
{
	double msgs = (double)o->msgs * o->flows;

	fprintf(stderr,
		"net_cost %s: flows %d size %zu depth %d messages %.0f seconds %.3f Gbps %.3f "
		"msgs/s %.0f\n",
		side, o->flows, o->size, o->depth, msgs, t1 - t0,
		msgs * (double)o->size * 8 / (t1 - t0) / 1e9, msgs / (t1 - t0));
}

static char *buffer(const struct opts *o, size_t *len)
{
	char *b;

	*len = o->size ? o->size * (size_t)o->depth : 1;
	b = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	return b;
}

/* One side's stream over every flow, served in turn: the receiver keeps
 * DEPTH receives posted on each; the sender sends each flow's next as soon
 * as isend takes it, DEPTH in flight; each tests its flow's oldest. */
static void run_stream(const struct opts *o, int total, struct counts *k, bool send)
{
	int left = 0, done_all = 0;
	double t0 = now_s();

	for (int f = 0; f < o->flows; f++)
		left += flows[f].done < total;
	for (int f = 0; left; f = (f + 1) % o->flows) {
		struct flow *w = &flows[f];
		int done = 0, size = -1;

		if (w->done == total)
			continue;
		if (w->posted < total && w->posted < w->done + o->depth) {
			void **rq = &w->req[w->posted % o->depth];
			char *p = w->buf + (size_t)(w->posted % o->depth) * o->size;

			*rq = NULL;
			CHECK(send ? cc_isend(w->comm, p, o->size, w->mh, rq)
				   : cc_irecv(w->comm, p, o->size, w->mh, rq));
			if (*rq) {
				w->posted++;
				(*(send ? &k->isend_ok : &k->irecv_ok))++;
				if (o->flows == 1)
					continue;
			} else {
				(*(send ? &k->isend_empty : &k->irecv_empty))++;
				/* the sender has nothing else to do only with
				 * nothing in flight; the receiver tries again */
				if (!send || w->done == w->posted)
					backoff(o);
				if (!send)
					continue;
			}
		}
		if (w->done == w->posted)
			continue;
		CHECK(send ? cc_test_send(w->req[w->done % o->depth], &done, &size)
			   : cc_test_recv(w->req[w->done % o->depth], &done, &size));
		if (!done) {
			k->test_empty++;
			backoff(o);
			continue;
		}
		if (!send && (size_t)size != o->size)
			die("receive %d of flow %d: %d bytes, %zu sent", w->done, f, size, o->size);
		k->test_done++;
		left -= ++w->done == total;
		if (++done_all == o->warmup * o->flows)
			t0 = now_s();
	}
	if (o->rates)
		report_rate(send ? "sender" : "receiver", o, t0, now_s());
}

static void receiver(const struct opts *o, const char *dev, int to_sender, int from_sender)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	int total = o->msgs + o->warmup, go = 1, d = dev_named(dev), accepted = 0;
	size_t len;
	struct counts k = {0};

	hint(o);
	for (int f = 0; f < o->flows; f++) {
		CHECK(net->listen(ctx, d, handle, &flows[f].listen));
		xwrite(to_sender, handle, sizeof(handle));
	}
	while (accepted < o->flows)
		for (int f = 0; f < o->flows; f++)
			if (!flows[f].comm) {
				CHECK(net->accept(flows[f].listen, &flows[f].comm, NULL));
				accepted += flows[f].comm != NULL;
			}
	for (int f = 0; f < o->flows; f++) {
		flows[f].buf = buffer(o, &len);
		CHECK(net->regMr(flows[f].comm, flows[f].buf, len, NCCL_PTR_HOST, &flows[f].mh));
	}
	if (!strcmp(o->mode, "spin-test")) {
		/* one receive, tested spins times before the sender may send it */
		struct flow *w = &flows[0];
		int done = 0, size;

		CHECK(cc_irecv(w->comm, w->buf, o->size, w->mh, &w->req[0]));
		for (int i = 0; i < o->spins; i++) {
			CHECK(cc_spin_test(w->req[0], &done, &size));
			if (done)
				die("spin-test: the receive completed before the send");
			k.test_empty++;
		}
		xwrite(to_sender, &go, sizeof(go));
		while (!done)
			CHECK(net->test(w->req[0], &done, &size));
		report("receiver", &k, 0);
	} else {
		if (!strcmp(o->mode, "spin-isend")) {
			xread(from_sender, &go, sizeof(go)); /* its spins are done */
			total = 1;
		} else if (!strcmp(o->mode, "spin-test-send")) {
			total = 1;
		}
		hint(o);
		run_stream(o, total, &k, false);
		if (!strcmp(o->mode, "stream"))
			report("receiver", &k, total * o->flows);
	}
	xread(from_sender, &go, sizeof(go)); /* the sender is done with its comms */
	for (int f = 0; f < o->flows; f++) {
		CHECK(net->deregMr(flows[f].comm, flows[f].mh));
		CHECK(net->closeRecv(flows[f].comm));
		CHECK(net->closeListen(flows[f].listen));
	}
}

static void sender(const struct opts *o, const char *dev, int to_receiver, int from_receiver)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	int total = o->msgs + o->warmup, go = 1, d = dev_named(dev);
	size_t len;
	struct counts k = {0};
	struct flow *w = &flows[0];

	hint(o);
	for (int f = 0; f < o->flows; f++) {
		xread(from_receiver, handle, sizeof(handle));
		while (!flows[f].comm)
			CHECK(net->connect(ctx, d, handle, &flows[f].comm, NULL));
		flows[f].buf = buffer(o, &len);
		memset(flows[f].buf, 0x5a, len);
		CHECK(net->regMr(flows[f].comm, flows[f].buf, len, NCCL_PTR_HOST, &flows[f].mh));
	}
	if (!strcmp(o->mode, "spin-isend")) {
		/* no receive is posted until the spins are done */
		for (int i = 0; i < o->spins; i++) {
			void *rq = NULL;

			CHECK(cc_spin_isend(w->comm, w->buf, o->size, w->mh, &rq));
			if (rq)
				die("spin-isend: isend found a clear-to-send before any receive");
			k.isend_empty++;
		}
		report("sender", &k, 0);
		xwrite(to_receiver, &go, sizeof(go));
		total = 1;
	} else if (!strcmp(o->mode, "spin-test")) {
		xread(from_receiver, &go, sizeof(go));
		total = 1;
	} else if (!strcmp(o->mode, "spin-test-send")) {
		/* one message, large enough to be on the wire for every spin */
		int done = 0, size;

		while (!w->req[0])
			CHECK(net->isend(w->comm, w->buf, o->size, 0, w->mh, NULL, &w->req[0]));
		for (int i = 0; i < o->spins && !done; i++) {
			CHECK(cc_spin_test(w->req[0], &done, &size));
			k.test_empty += !done;
		}
		if (done)
			die("spin-test-send: the send completed after %llu tests; use a larger -s",
			    k.test_empty);
		while (!done)
			CHECK(net->test(w->req[0], &done, &size));
		report("sender", &k, 0);
		w->posted = w->done = total = 1;
	}
	hint(o);
	run_stream(o, total, &k, true);
	if (!strcmp(o->mode, "stream"))
		report("sender", &k, total * o->flows);
	xwrite(to_receiver, &go, sizeof(go));
	for (int f = 0; f < o->flows; f++) {
		CHECK(net->deregMr(flows[f].comm, flows[f].mh));
		CHECK(net->closeSend(flows[f].comm));
	}
}

int main(int argc, char **argv)
{
	struct opts o = {.size = 8,
			 .msgs = 400,
			 .warmup = 10,
			 .depth = 8,
			 .spins = 2000,
			 .flows = 1,
			 .mode = "stream"};
	const char *plugin = NULL, *rdev = "rxe0", *sdev = "rxe1";
	int to_child[2], to_parent[2], c, status;
	pid_t pid;

	while ((c = getopt(argc, argv, "p:s:n:w:d:m:r:t:b:PF:H")) != -1) {
		switch (c) {
		case 'b': o.backoff_us = atol(optarg); break;
		case 'P': profiling = 1; break;
		case 'F':
			o.flows = atoi(optarg);
			o.rates = 1;
			break;
		case 'H': o.hints = 1; break;
		case 'p': plugin = optarg; break;
		case 's': o.size = strtoull(optarg, NULL, 0); break;
		case 'n': o.msgs = atoi(optarg); break;
		case 'w': o.warmup = atoi(optarg); break;
		case 'd': o.depth = atoi(optarg); break;
		case 'm': o.mode = optarg; break;
		case 'r': rdev = optarg; break;
		case 't': sdev = optarg; break;
		default:
			fprintf(stderr,
				"usage: net_cost -p PLUGIN.so [-s SIZE] [-n MSGS] [-w WARMUP] "
				"[-d DEPTH] [-m stream|spin-test|spin-test-send|spin-isend] [-r DEV] "
				"[-t DEV] [-b USEC] [-P] [-F FLOWS] [-H]\n");
			return 64;
		}
	}
	if (!plugin || o.depth < 1 || o.depth > MAX_DEPTH || o.msgs < 1 || o.flows < 1 ||
	    o.flows > MAX_FLOWS || (o.flows > 1 && strcmp(o.mode, "stream")) ||
	    (strcmp(o.mode, "stream") && strcmp(o.mode, "spin-test") &&
	     strcmp(o.mode, "spin-isend") && strcmp(o.mode, "spin-test-send")))
		die("bad arguments (-p is needed; -d 1 to %d; -F 1 to %d, stream only; -m stream, "
		    "spin-test, spin-test-send or spin-isend)",
		    MAX_DEPTH, MAX_FLOWS);
	if (strcmp(o.mode, "stream"))
		o.spins = o.msgs;
	if (pipe(to_child) || pipe(to_parent))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		load(plugin);
		sender(&o, sdev, to_parent[1], to_child[0]);
		_exit(0);
	}
	load(plugin);
	receiver(&o, rdev, to_child[1], to_parent[0]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		die("the sender failed");
	if (profiling)
		fprintf(stderr, "net_cost receiver: profiler events started %llu, stopped %llu\n",
			prof_started, prof_stopped);
	return 0;
}
