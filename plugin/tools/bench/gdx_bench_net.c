/* SPDX-License-Identifier: MIT */
/*
 * The plugin under test, as NCCL's proxy holds it: its v7 table loaded
 * (isend and irecv through v10's with --profiler), the log lines it writes
 * read for its byte counters, and the device each end runs on.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <nccl/net.h>
#include <nccl/profiler_net.h>

#include "sys/gdx_log.h" /* GDX_LOG_PREFIX */

#include "tools/bench/gdx_bench_state.h"

/* The plugin's own per-path byte counters, from the line it logs when a comm
 * closes: the proof of where the bytes went (GPU-direct or host memory). */
static unsigned long long bench_bytes_gpu, bench_bytes_host;

void bench_bytes_received(unsigned long long *gpu, unsigned long long *host)
{
	*gpu = bench_bytes_gpu;
	*host = bench_bytes_host;
}

static void bench_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
			 const char *fmt, ...)
{
	unsigned long long gpu, host;
	const char *p;
	char msg[1024];
	va_list ap;

	(void)flags;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p = strstr(msg, " receive comm with ") ? strstr(msg, " closed: ") : NULL;
	if (p && sscanf(p, " closed: %llu bytes GPU-direct, %llu bytes", &gpu, &host) == 2) {
		bench_bytes_gpu += gpu;
		bench_bytes_host += host;
	}
	/* the plugin's words as they are, without its prefix; where in its
	 * source they come from at the debug level only */
	p = !strncmp(msg, GDX_LOG_PREFIX, strlen(GDX_LOG_PREFIX)) ? msg + strlen(GDX_LOG_PREFIX)
								  : msg;
	if (level == NCCL_LOG_WARN && bench_verbose())
		fprintf(stderr, "gdx-bench: plugin: %s (%s:%d)\n", p, file, line);
	else if (level == NCCL_LOG_WARN)
		fprintf(stderr, "gdx-bench: plugin: %s\n", p);
	else if (level == NCCL_LOG_INFO && bench_verbose())
		fprintf(stderr, "gdx-bench: plugin: %s\n", p); /* NCCL_DEBUG=INFO, as NCCL */
}

/* --profiler: the cheapest profiler there is, one that counts what it is
 * given, so that what is measured is the plugin's reporting; NCCL passes a
 * handle per step of a channel, one serves here. The ends run one thread
 * each (two processes), or one for both (--procs 1). */
static const ncclNet_v10_t *bench_v10;
static ncclNet_v7_t bench_prof_net;
static unsigned long long bench_prof_started, bench_prof_stopped;
static char bench_prof_handle;

static ncclResult_t bench_prof_event(void **eh, int type, void *phandle, int64_t id, void *data)
{
	(void)phandle;
	(void)id;
	(void)data;
	if (type == ncclProfilerNetEventStart) {
		*eh = &bench_prof_handle;
		bench_prof_started++;
	} else if (type == ncclProfilerNetEventStop) {
		bench_prof_stopped++;
	}
	return ncclSuccess;
}

static ncclResult_t bench_prof_isend(void *comm, void *data, int size, int tag, void *mh,
				     void **req)
{
	return bench_v10->isend(comm, data, (size_t)size, tag, mh, &bench_prof_handle, req);
}

static ncclResult_t bench_prof_irecv(void *comm, int n, void **data, int *sizes, int *tags,
				     void **mhs, void **req)
{
	size_t sizes64[NCCL_NET_MAX_REQUESTS];
	void *phandles[NCCL_NET_MAX_REQUESTS];

	for (int i = 0; i < n && i < NCCL_NET_MAX_REQUESTS; i++) {
		sizes64[i] = (size_t)sizes[i];
		phandles[i] = &bench_prof_handle;
	}
	return bench_v10->irecv(comm, n, data, sizes64, tags, mhs, phandles, req);
}

void bench_prof_counts(unsigned long long *started, unsigned long long *stopped)
{
	*started = bench_prof_started;
	*stopped = bench_prof_stopped;
}

/* Whether the kernel shows an RDMA device at all. */
static int bench_rdma_here(void)
{
	DIR *d = opendir("/sys/class/infiniband");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n > 0;
}

/* The plugin's init, or the run fails: on a machine without an RDMA device,
 * saying that in words. */
static void bench_init_check(ncclResult_t r)
{
	if (r == ncclSuccess)
		return;
	if (!bench_rdma_here())
		bench_die("the plugin did not start: this machine has no RDMA device "
			  "(/sys/class/infiniband is empty); gdx-doctor check says more");
	bench_net_fail("net->init(bench_logger)", (int)r);
}

const ncclNet_v7_t *bench_load(const char *path, int profiler)
{
	static const ncclNet_v7_t *loaded; /* once per process: init runs once */
	void *lib;
	const ncclNet_v7_t *net;

	if (loaded)
		return loaded;
	/* A plugin that is not there, not a library or not a plugin is an
	 * input that cannot be read (3), not a failure of the run (2). */
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		bench_fail(BENCH_EXIT_NO_INPUT, "cannot load %s: %s", path, dlerror());
	net = dlsym(lib, "ncclNetPlugin_v7");
	if (!net)
		bench_fail(BENCH_EXIT_NO_INPUT,
			   "%s has no ncclNetPlugin_v7: not an NCCL net plugin", path);
	if (!profiler) {
		bench_init_check(net->init(bench_logger));
		return loaded = net;
	}
	bench_v10 = dlsym(lib, "ncclNetPlugin_v10");
	if (!bench_v10)
		bench_fail(BENCH_EXIT_NO_INPUT,
			   "%s has no ncclNetPlugin_v10, which --profiler needs", path);
	bench_init_check(bench_v10->init(bench_logger, bench_prof_event));
	bench_prof_net = *net;
	bench_prof_net.isend = bench_prof_isend;
	bench_prof_net.irecv = bench_prof_irecv;
	return loaded = &bench_prof_net;
}

void bench_prof_report(const struct bench_opts *o, const char *end)
{
	if (o->profiler)
		fprintf(stderr, "gdx-bench: %s: %llu profiler events started, %llu stopped\n", end,
			bench_prof_started, bench_prof_stopped);
}

/* A device name the plugin does not have: its port that is not up, when
 * the machine has the device (the plugin takes active ports only), else
 * the names it has. */
static void bench_no_dev(const ncclNet_v7_t *net, const char *name, int ndev)
{
	char have[256] = "", path[512], state[64];
	ncclNetProperties_v7_t props;
	size_t len = 0;

	for (int port = 1; port <= 16 && !strchr(name, '/') && !strchr(name, '+'); port++) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/state", name, port);
		f = fopen(path, "r");
		if (!f)
			break;
		/* "1: DOWN": the state's name after its number */
		if (fgets(state, sizeof(state), f) && !strstr(state, "ACTIVE")) {
			char *w = strchr(state, ':') ? strchr(state, ':') + 1 : state;

			w += strspn(w, " ");
			w[strcspn(w, "\r\n")] = '\0';
			fclose(f);
			bench_die("%s port %d is %s: the plugin takes active ports only (bring its "
				  "link up; gdx-doctor check shows every port)",
				  name, port, w);
		}
		fclose(f);
	}
	for (int i = 0; i < ndev && len < sizeof(have) - 1; i++)
		if (net->getProperties(i, &props) == ncclSuccess)
			len += (size_t)snprintf(have + len, sizeof(have) - len, "%s%s",
						i ? ", " : "", props.name);
	bench_die("no device named %s: the plugin has %s (gdx-doctor check lists them)", name,
		  have);
}

int bench_dev(const ncclNet_v7_t *net, const char *name, int fallback, const struct bench_opts *o)
{
	ncclNetProperties_v7_t props;
	int ndev, dev = -1;

	NET_CHECK(net->devices(&ndev));
	if (ndev < 1)
		bench_die("the plugin found no device");
	if (!name)
		dev = fallback < ndev ? fallback : 0;
	for (int i = 0; dev < 0 && i < ndev; i++) {
		NET_CHECK(net->getProperties(i, &props));
		if (!strcmp(props.name, name))
			dev = i;
	}
	if (dev < 0)
		bench_no_dev(net, name, ndev);
	NET_CHECK(net->getProperties(dev, &props));
	if (o->cuda && !(props.ptrSupport & NCCL_PTR_CUDA))
		bench_die("%s does not take CUDA memory (no GPUDirect RDMA path: the plugin's "
			  "log line with NCCL_DEBUG=INFO and gdx-doctor say why)",
			  props.name);
	return dev;
}
