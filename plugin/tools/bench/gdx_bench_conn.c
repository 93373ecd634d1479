/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench -m conn: what a connection costs, N pairs opened in one process
 * as NCCL opens them (listen, connect and accept driven together from one
 * thread, then closeListen), all held open, then closed: the connect time of
 * each pair (median and worst), the memory and descriptors each open pair
 * holds, the time each close takes, and whether closing them all gave
 * everything back.
 */
#include <dirent.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <gdx/gdx_stamp.h>
#include <nccl/net.h>

#include "tools/bench/gdx_bench_state.h"

struct conn_pair {
	void *send, *recv;
};

/* Resident KiB of this process. */
static long conn_rss_kib(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f || fscanf(f, "%ld %ld", &pages, &rss) != 2)
		bench_die("cannot read /proc/self/statm");
	fclose(f);
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static int conn_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (!d)
		bench_die("cannot read /proc/self/fd");
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Each pair holds 2 descriptors (the plugin's and the verbs device's are
 * shared): raise the soft limit towards the hard one when n pairs need more,
 * as a job launcher would, and say so. */
static void conn_raise_fd_limit(int n)
{
	struct rlimit rl;
	rlim_t want = (rlim_t)n * 2 + 64;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= want)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want)
		want = rl.rlim_max;
	fprintf(stderr, "gdx-bench: raising the descriptor limit from %llu to %llu for %d pairs\n",
		(unsigned long long)rl.rlim_cur, (unsigned long long)want, n);
	rl.rlim_cur = want;
	setrlimit(RLIMIT_NOFILE, &rl);
}

static int conn_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One pair, as NCCL's proxy makes it; returns the seconds it took. */
static double conn_open(const ncclNet_v7_t *net, int ldev, int cdev, struct conn_pair *p)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	double t0 = gdx_wall_s();
	void *l;

	p->send = p->recv = NULL;
	if (net->listen(ldev, handle, &l) != ncclSuccess)
		bench_die("listen failed");
	while (!p->send || !p->recv) {
		if (!p->send && net->connect(cdev, handle, &p->send, NULL) != ncclSuccess)
			bench_die("connect failed");
		if (!p->recv && net->accept(l, &p->recv, NULL) != ncclSuccess)
			bench_die("accept failed");
	}
	if (net->closeListen(l) != ncclSuccess)
		bench_die("closeListen failed");
	return gdx_wall_s() - t0;
}

/* One message through a pair, checked: the pairs work, not just exist. */
static void conn_check(const ncclNet_v7_t *net, struct conn_pair *p, int which)
{
	char sbuf[4096], rbuf[4096];
	void *smh, *rmh, *sreq = NULL, *rreq, *data = rbuf;
	int size = sizeof(rbuf), tag = 1, done = 0, got = 0;

	for (size_t i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (char)(i * 7 + (size_t)which);
	memset(rbuf, 0, sizeof(rbuf));
	if (net->regMr(p->send, sbuf, sizeof(sbuf), NCCL_PTR_HOST, &smh) ||
	    net->regMr(p->recv, rbuf, sizeof(rbuf), NCCL_PTR_HOST, &rmh) ||
	    net->irecv(p->recv, 1, &data, &size, &tag, &rmh, &rreq))
		bench_die("pair %d: registration or irecv failed", which);
	while (!sreq)
		if (net->isend(p->send, sbuf, sizeof(sbuf), tag, smh, &sreq))
			bench_die("pair %d: isend failed", which);
	for (int d = 0; !d;)
		if (net->test(sreq, &d, &got))
			bench_die("pair %d: send failed", which);
	while (!done)
		if (net->test(rreq, &done, &got))
			bench_die("pair %d: receive failed", which);
	if (got != (int)sizeof(rbuf) || memcmp(sbuf, rbuf, sizeof(rbuf)))
		bench_die("pair %d: the bytes that arrived differ", which);
	net->deregMr(p->send, smh);
	net->deregMr(p->recv, rmh);
}

int bench_conn(const struct bench_opts *o)
{
	const ncclNet_v7_t *net = bench_load(o->plugin, o->profiler);
	int ldev = bench_dev(net, o->dev, 0, o), cdev = bench_dev(net, o->peer_dev, 1, o);
	int n = o->iters, fds0, fds1, fds2;
	struct conn_pair *pairs = calloc((size_t)n, sizeof(*pairs));
	double *secs = calloc((size_t)n, sizeof(*secs)), close_s, t0;
	long rss0, rss1, rss2, rss3;

	if (!pairs || !secs)
		bench_die("out of memory");
	conn_raise_fd_limit(n);
	/* one pair first, so that the first-use costs (protection domains,
	 * caches) are not counted per pair */
	conn_open(net, ldev, cdev, &pairs[0]);
	conn_check(net, &pairs[0], 0);
	net->closeSend(pairs[0].send);
	net->closeRecv(pairs[0].recv);
	rss0 = conn_rss_kib();
	fds0 = conn_fds();
	for (int i = 0; i < n; i++)
		secs[i] = conn_open(net, ldev, cdev, &pairs[i]);
	rss1 = conn_rss_kib();
	fds1 = conn_fds();
	conn_check(net, &pairs[0], 1);
	conn_check(net, &pairs[n / 2], 2);
	conn_check(net, &pairs[n - 1], 3);
	t0 = gdx_wall_s();
	for (int i = 0; i < n; i++) {
		if (net->closeSend(pairs[i].send) || net->closeRecv(pairs[i].recv))
			bench_die("close of pair %d failed", i);
	}
	close_s = gdx_wall_s() - t0;
	rss2 = conn_rss_kib();
	fds2 = conn_fds();
	/* what the allocator holds on to, freed but not returned, against
	 * what is still in use */
	malloc_trim(0);
	rss3 = conn_rss_kib();
	qsort(secs, (size_t)n, sizeof(*secs), conn_cmp);
	if (o->json)
		printf("{\"mode\": \"conn\", \"pairs\": %d, \"connect_median_ms\": %.3f, "
		       "\"connect_worst_ms\": %.3f, \"rss_per_pair_kib\": %.1f, \"fds_per_pair\": "
		       "%.2f, \"close_per_pair_ms\": %.3f, \"rss_after_close_kib\": %ld, "
		       "\"rss_after_trim_kib\": %ld, \"fds_after_close\": %d}\n",
		       n, secs[n / 2] * 1e3, secs[n - 1] * 1e3, (double)(rss1 - rss0) / n,
		       (double)(fds1 - fds0) / n, close_s * 1e3 / n, rss2 - rss0, rss3 - rss0,
		       fds2 - fds0);
	else
		printf("# gdx-bench: %d connections opened in one process (listen, connect and "
		       "accept from one thread, then closeListen), held, then closed\n"
		       "# %10s %14s %14s %14s %14s %14s\n"
		       "  %10d %14.2f %14.2f %14.1f %14.2f %14.3f\n"
		       "# after closing all: resident %+ld KiB (%+ld KiB once malloc_trim gives the "
		       "allocator's free memory back), descriptors %+d\n",
		       n, "pairs", "connect ms", "worst ms", "KiB/pair", "fds/pair", "close ms", n,
		       secs[n / 2] * 1e3, secs[n - 1] * 1e3, (double)(rss1 - rss0) / n,
		       (double)(fds1 - fds0) / n, close_s * 1e3 / n, rss2 - rss0, rss3 - rss0,
		       fds2 - fds0);
	free(pairs);
	free(secs);
	return fds2 == fds0 ? 0 : 1;
}
