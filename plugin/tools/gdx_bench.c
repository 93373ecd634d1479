/* SPDX-License-Identifier: MIT */
/*
 * gdx-bench: drives the plugin through its ncclNetPlugin_v7 table, as NCCL's
 * proxy does, between two devices of this machine: a receiver process on
 * --dev and a sender process on --peer-dev, keeping --depth messages in
 * flight. Prints bandwidth per message size in nccl-tests' units.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <nccl/net.h>

struct bench_opts {
	const char *plugin;
	const char *dev, *peer_dev;
	size_t min_size, max_size;
	int factor;
	int iters, warmup, depth;
	int json;
};

static double bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void bench_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void bench_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "gdx-bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

#define NET_CHECK(call)                                                        \
	do {                                                                   \
		ncclResult_t _r = (call);                                      \
		if (_r != ncclSuccess)                                         \
			bench_die("%s failed: ncclResult %d", #call, (int)_r); \
	} while (0)

static const ncclNet_v7_t *bench_load(const char *path)
{
	void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	const ncclNet_v7_t *net;

	if (!lib)
		bench_die("cannot load %s: %s", path, dlerror());
	net = dlsym(lib, "ncclNetPlugin_v7");
	if (!net)
		bench_die("%s has no ncclNetPlugin_v7", path);
	NET_CHECK(net->init(NULL));
	return net;
}

static int bench_dev(const ncclNet_v7_t *net, const char *name, int fallback)
{
	ncclNetProperties_v7_t props;
	int ndev;

	NET_CHECK(net->devices(&ndev));
	if (!name)
		return fallback < ndev ? fallback : 0;
	for (int i = 0; i < ndev; i++) {
		NET_CHECK(net->getProperties(i, &props));
		if (!strcmp(props.name, name))
			return i;
	}
	bench_die("no device named %s (%d devices)", name, ndev);
}

static size_t bench_parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	switch (*end) {
	case 'k':
	case 'K': v *= 1024; break;
	case 'm':
	case 'M': v *= 1024 * 1024; break;
	case 'g':
	case 'G': v *= 1024.0 * 1024 * 1024; break;
	case '\0': break;
	default: bench_die("bad size \"%s\"", s);
	}
	if (v < 0 || v > (double)(1u << 30))
		bench_die("size \"%s\" out of range 0..1G", s);
	return (size_t)v;
}

static void bench_xfer(int fd, void *buf, size_t len, int writing)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = writing ? write(fd, (char *)buf + done, len - done)
				    : read(fd, (char *)buf + done, len - done);

		if (n <= 0)
			bench_die("side channel to the other process closed");
		done += (size_t)n;
	}
}

/* Receiver: keeps depth receives posted; times the messages after warm-up. */
static double bench_recv(const ncclNet_v7_t *net, void *recv, char *buf, void *mh, size_t size,
			 const struct bench_opts *o)
{
	void *reqs[NCCL_NET_MAX_REQUESTS] = {0};
	int total = o->warmup + o->iters, posted = 0, completed = 0;
	double start = 0;

	while (completed < total) {
		int progress = 0;

		for (int i = 0; i < o->depth; i++) {
			int done = 0, sz = (int)size, tag = 0;
			void *data = buf;

			if (!reqs[i] && posted < total) {
				NET_CHECK(net->irecv(recv, 1, &data, &sz, &tag, &mh, &reqs[i]));
				posted++;
			}
			if (!reqs[i])
				continue;
			NET_CHECK(net->test(reqs[i], &done, &sz));
			if (done) {
				reqs[i] = NULL;
				progress = 1;
				if (++completed == o->warmup)
					start = bench_now();
			}
		}
		/* Idle, as NCCL's proxy thread does: leave the CPU to the NIC (here,
		 * rxe's kernel threads on the same cores). */
		if (!progress)
			sched_yield();
	}
	return o->iters ? bench_now() - (o->warmup ? start : 0) : 0;
}

static void bench_send(const ncclNet_v7_t *net, void *send, char *buf, void *mh, size_t size,
		       const struct bench_opts *o)
{
	void *reqs[NCCL_NET_MAX_REQUESTS] = {0};
	int total = o->warmup + o->iters, posted = 0, completed = 0;

	while (completed < total) {
		int progress = 0;

		for (int i = 0; i < o->depth; i++) {
			int done = 0, sz;

			if (!reqs[i] && posted < total) {
				NET_CHECK(net->isend(send, buf, (int)size, 0, mh, &reqs[i]));
				if (reqs[i])
					posted++;
			}
			if (!reqs[i])
				continue;
			NET_CHECK(net->test(reqs[i], &done, &sz));
			if (done) {
				reqs[i] = NULL;
				progress = 1;
				completed++;
			}
		}
		if (!progress)
			sched_yield();
	}
}

static void bench_sender(const struct bench_opts *o, int in, int out)
{
	const ncclNet_v7_t *net = bench_load(o->plugin);
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	void *send = NULL, *mh;
	char *buf;
	int dev = bench_dev(net, o->peer_dev, 1);

	bench_xfer(in, handle, sizeof(handle), 0);
	while (!send)
		NET_CHECK(net->connect(dev, handle, &send, NULL));
	buf = calloc(1, o->max_size ? o->max_size : 1);
	NET_CHECK(net->regMr(send, buf, (int)(o->max_size ? o->max_size : 1), NCCL_PTR_HOST, &mh));
	for (size_t s = o->min_size;; s = s ? s * (size_t)o->factor : 1) {
		char go;

		bench_xfer(in, &go, 1, 0);
		bench_send(net, send, buf, mh, s, o);
		if (s >= o->max_size || o->factor < 2)
			break;
	}
	bench_xfer(out, handle, 1, 1);
	NET_CHECK(net->deregMr(send, mh));
	NET_CHECK(net->closeSend(send));
	free(buf);
}

static void bench_receiver(const struct bench_opts *o, int in, int out)
{
	const ncclNet_v7_t *net = bench_load(o->plugin);
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	void *listen, *recv = NULL, *mh;
	char *buf;
	int dev = bench_dev(net, o->dev, 0);
	ncclNetProperties_v7_t props;
	int first = 1;

	NET_CHECK(net->getProperties(dev, &props));
	NET_CHECK(net->listen(dev, handle, &listen));
	bench_xfer(out, handle, sizeof(handle), 1);
	while (!recv)
		NET_CHECK(net->accept(listen, &recv, NULL));
	buf = calloc(1, o->max_size ? o->max_size : 1);
	NET_CHECK(net->regMr(recv, buf, (int)(o->max_size ? o->max_size : 1), NCCL_PTR_HOST, &mh));
	if (o->json)
		printf("{\"device\": \"%s\", \"depth\": %d, \"results\": [", props.name, o->depth);
	else
		printf("# gdx-bench: device %s, depth %d, %d iterations after %d warm-up\n"
		       "# %12s %10s %10s %10s %12s\n",
		       props.name, o->depth, o->iters, o->warmup, "bytes", "time(us)", "GB/s",
		       "Gb/s", "msg/s");
	for (size_t s = o->min_size;; s = s ? s * (size_t)o->factor : 1) {
		char go = 1;
		double t, gbs;

		bench_xfer(out, &go, 1, 1);
		t = bench_recv(net, recv, buf, mh, s, o);
		gbs = t > 0 ? (double)s * o->iters / t / 1e9 : 0;
		if (o->json)
			printf("%s{\"bytes\": %zu, \"iters\": %d, \"seconds\": %.6f, \"GBps\": %.4f, "
			       "\"Gbps\": %.4f, \"msg_rate\": %.1f}",
			       first ? "" : ", ", s, o->iters, t, gbs, gbs * 8,
			       t > 0 ? o->iters / t : 0);
		else
			printf("  %12zu %10.2f %10.4f %10.4f %12.1f\n", s, t * 1e6 / o->iters, gbs,
			       gbs * 8, t > 0 ? o->iters / t : 0);
		fflush(stdout);
		first = 0;
		if (s >= o->max_size || o->factor < 2)
			break;
	}
	if (o->json)
		printf("]}\n");
	bench_xfer(in, handle, 1, 0);
	NET_CHECK(net->deregMr(recv, mh));
	NET_CHECK(net->closeRecv(recv));
	NET_CHECK(net->closeListen(listen));
	free(buf);
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
	printf("usage: gdx-bench [options]\n"
	       "Bandwidth through the plugin's NCCL API between two devices of this machine:\n"
	       "a receiver on --dev and a sender on --peer-dev, in two processes.\n\n"
	       "  -d, --dev NAME       receiving device (default: device 0)\n"
	       "  -D, --peer-dev NAME  sending device (default: device 1, else 0)\n"
	       "  -s, --size BYTES     one message size (K, M, G suffixes; default 1M)\n"
	       "  -b, --min BYTES      sweep from (with -e, -f)\n"
	       "  -e, --max BYTES      sweep to\n"
	       "  -f, --factor N       sweep factor (default 2)\n"
	       "  -n, --iters N        timed messages per size (default 1000)\n"
	       "  -w, --warmup N       untimed messages first (default 100)\n"
	       "  -t, --depth N        messages in flight, 1-32 (default 8, as NCCL)\n"
	       "  -p, --plugin PATH    the plugin (default: libnccl-net-gdx.so beside this\n"
	       "                       program, else in ../lib, else from the library path)\n"
	       "  -j, --json           one JSON object instead of the table\n"
	       "  -h, --help\n\n"
	       "GB/s is 10^9 bytes per second, as nccl-tests reports.\n");
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {{"dev", required_argument, NULL, 'd'},
						 {"peer-dev", required_argument, NULL, 'D'},
						 {"size", required_argument, NULL, 's'},
						 {"min", required_argument, NULL, 'b'},
						 {"max", required_argument, NULL, 'e'},
						 {"factor", required_argument, NULL, 'f'},
						 {"iters", required_argument, NULL, 'n'},
						 {"warmup", required_argument, NULL, 'w'},
						 {"depth", required_argument, NULL, 't'},
						 {"plugin", required_argument, NULL, 'p'},
						 {"json", no_argument, NULL, 'j'},
						 {"help", no_argument, NULL, 'h'},
						 {NULL, 0, NULL, 0}};
	struct bench_opts o = {.min_size = 1 << 20,
			       .max_size = 1 << 20,
			       .factor = 2,
			       .iters = 1000,
			       .warmup = 100,
			       .depth = 8};
	int to_recv[2], to_send[2], c, status;
	pid_t pid;

	while ((c = getopt_long(argc, argv, "d:D:s:b:e:f:n:w:t:p:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'd': o.dev = optarg; break;
		case 'D': o.peer_dev = optarg; break;
		case 's': o.min_size = o.max_size = bench_parse_size(optarg); break;
		case 'b': o.min_size = bench_parse_size(optarg); break;
		case 'e': o.max_size = bench_parse_size(optarg); break;
		case 'f': o.factor = atoi(optarg); break;
		case 'n': o.iters = atoi(optarg); break;
		case 'w': o.warmup = atoi(optarg); break;
		case 't': o.depth = atoi(optarg); break;
		case 'p': o.plugin = optarg; break;
		case 'j': o.json = 1; break;
		case 'h': bench_usage(); return 0;
		default: bench_usage(); return 2;
		}
	}
	if (!o.plugin)
		o.plugin = bench_default_plugin();
	if (o.depth < 1 || o.depth > NCCL_NET_MAX_REQUESTS)
		bench_die("--depth must be 1-%d", NCCL_NET_MAX_REQUESTS);
	if (o.iters < 1 || o.warmup < 0 || o.min_size > o.max_size || o.factor < 2)
		bench_die("need --iters >= 1, --warmup >= 0, --min <= --max, --factor >= 2");
	if (pipe(to_recv) || pipe(to_send))
		bench_die("pipe: %s", strerror(errno));
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		bench_die("fork: %s", strerror(errno));
	if (pid == 0) {
		bench_sender(&o, to_send[0], to_recv[1]);
		return 0;
	}
	bench_receiver(&o, to_recv[0], to_send[1]);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status))
		bench_die("the sending process failed");
	return 0;
}
