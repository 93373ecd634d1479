/* SPDX-License-Identifier: MIT */
/*
 * Connections at scale, as a large job opens them: 1,000 send/receive pairs
 * in one process through the v7 table (listen, connect and accept driven
 * together, then closeListen, as NCCL does), all held open at once, data
 * verified on the first, a middle and the last, then all closed: descriptors,
 * threads and verbs objects back to where they were. And handshakes a peer
 * abandons half way cost the listener nothing lasting. Runs inside the VM
 * (rxe0 <-> rxe1).
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dev/gdx_gid.h"
#include "wire/gdx_wire.h"

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static struct gdx_plugin plugin;

static const ncclNet_v7_t *net_up(void)
{
	gdx_plugin_load(&plugin);
	ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
	return plugin.v7;
}

static int count_dir(const char *path)
{
	DIR *dir = opendir(path);
	int n = 0;

	ASSERT(dir != NULL);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

struct baseline {
	int fds, threads;
	char verbs[2048];
};

static void baseline_take(struct baseline *b)
{
	b->fds = count_dir("/proc/self/fd");
	b->threads = count_dir("/proc/self/task");
	gdx_rdma_counts(b->verbs, sizeof(b->verbs));
}

static void baseline_check(const struct baseline *b, const char *when)
{
	struct baseline now;

	baseline_take(&now);
	if (now.fds != b->fds || now.threads != b->threads || strcmp(now.verbs, b->verbs))
		gdx_test_fail(__FILE__, __LINE__,
			      "%s: %d fds (were %d), %d threads (were %d), verbs objects:\n%s"
			      "were:\n%s",
			      when, now.fds, b->fds, now.threads, b->threads, now.verbs, b->verbs);
}

static void test_thousand_pairs(void)
{
	enum { N = 1000 };
	static struct gdx_pair pairs[N];
	const ncclNet_v7_t *n = net_up();
	struct baseline before;
	struct rlimit fds;
	double t0, slowest = 0;

	/* two descriptors a pair (the out-of-band sockets, kept as the liveness
	 * signal, as NCCL's own transport keeps them): more than 1,024 */
	ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &fds), 0);
	fds.rlim_cur = fds.rlim_max;
	ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &fds), 0);
	ASSERT(fds.rlim_cur > 2 * N + 64);
	/* the first pair makes what every later one shares (protection
	 * domains, caches): the baseline is taken after it is gone */
	gdx_pair_connect(n, 0, 1, &pairs[0]);
	gdx_transfer(&pairs[0], 1000, 1000, 0, 1);
	gdx_pair_close(&pairs[0]);
	baseline_take(&before);
	t0 = gdx_now_s();
	for (int i = 0; i < N; i++) {
		double t = gdx_now_s();

		gdx_pair_connect(n, 0, 1, &pairs[i]);
		/* as NCCL: the listen comm goes once its one connection is made */
		ASSERT_EQ(n->closeListen(pairs[i].listen), ncclSuccess);
		pairs[i].listen = NULL;
		t = gdx_now_s() - t;
		slowest = t > slowest ? t : slowest;
	}
	printf("  %d pairs open in %.1f s (slowest %.1f ms), %d descriptors\n", N, gdx_now_s() - t0,
	       slowest * 1e3, count_dir("/proc/self/fd") - before.fds);
	ASSERT_EQ(count_dir("/proc/self/fd") - before.fds, 2 * N);
	gdx_transfer(&pairs[0], 70000, 70000, 1, 2);
	gdx_transfer(&pairs[N / 2], 1 << 20, 1 << 20, 2, 3);
	gdx_transfer(&pairs[N - 1], 4097, 8192, 3, 4);
	t0 = gdx_now_s();
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(n->closeSend(pairs[i].send), ncclSuccess);
		ASSERT_EQ(n->closeRecv(pairs[i].recv), ncclSuccess);
	}
	printf("  closed in %.2f s\n", gdx_now_s() - t0);
	baseline_check(&before, "after closing all");
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/*
 * A peer that opens the out-of-band connection, sends a valid hello (and
 * then its rails too), then goes away: the listener drops the handshake and
 * keeps nothing of it (no descriptor, no QP), and serves the next peer.
 */
static void abandon_after(int with_meta)
{
	const ncclNet_v7_t *n = net_up();
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	struct gdx_handle h;
	struct gdx_wire_hello hello;
	struct gdx_wire_meta meta;
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct baseline before;
	struct gdx_pair real;
	void *l, *r = NULL;
	int fd;

	ASSERT_EQ(n->listen(0, handle, &l), ncclSuccess);
	memcpy(&h, handle, sizeof(h));
	baseline_take(&before);
	a.sin_port = h.port;
	memcpy(&a.sin_addr, h.addr, 4);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ASSERT(fd >= 0);
	ASSERT_EQ(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	gdx_wire_hello_pack(&hello, le64toh(h.nonce), 1);
	ASSERT_EQ(write(fd, &hello, sizeof(hello)), (ssize_t)sizeof(hello));
	if (with_meta) {
		/* rails that look real (rxe1's address, a QP number no QP has):
		 * the listener makes its QPs and answers */
		char gid[64] = "";
		FILE *f = fopen("/sys/class/infiniband/rxe1/ports/1/gids/1", "r");

		ASSERT(f && fgets(gid, sizeof(gid), f));
		fclose(f);
		memset(&meta, 0, sizeof(meta));
		ASSERT_EQ(gdx_gid_parse(gid, meta.rails[0].gid), 0);
		meta.nrails = 1;
		meta.qps_per_rail = 1;
		meta.max_recvs = 8;
		meta.qpn[0] = 0x1234;
		meta.rails[0].link_layer = 2;
		meta.rails[0].mtu = 3;
		gdx_wire_meta_pack(&meta, &meta);
		ASSERT_EQ(write(fd, &meta, sizeof(meta)), (ssize_t)sizeof(meta));
	}
	for (int i = 0; i < 200; i++) { /* the listener reads it all */
		ASSERT_EQ(n->accept(l, &r, NULL), ncclSuccess);
		ASSERT(r == NULL);
		usleep(1000);
	}
	close(fd);
	for (int i = 0; i < 200; i++) { /* and sees it go */
		ASSERT_EQ(n->accept(l, &r, NULL), ncclSuccess);
		ASSERT(r == NULL);
		usleep(1000);
	}
	baseline_check(&before, with_meta ? "after a peer left before its ready word"
					  : "after a peer left after its hello");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "closed during the handshake");
	ASSERT_EQ(n->closeListen(l), ncclSuccess);
	/* a real peer still connects */
	gdx_pair_connect(n, 0, 1, &real);
	gdx_transfer(&real, 5000, 5000, 0, 9);
	gdx_pair_close(&real);
}

static void test_abandoned_after_hello(void)
{
	abandon_after(0);
}

static void test_abandoned_after_rails(void)
{
	abandon_after(1);
}

/*
 * A connect whose connection the listener closes unread connects again.
 * The listener's backlog is filled by clients that say nothing, so the
 * connect's first call cannot get its hello out; the listener takes it once
 * there is room and, the connect not being called again before the hello
 * deadline, closes it with a refusal. The next calls read the refusal,
 * connect again, and the pair carries bytes.
 */
static void test_connect_again_when_closed_unread(void)
{
	enum { FLOOD = 140 };
	const ncclNet_v7_t *n;
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	struct gdx_handle h;
	struct sockaddr_in a = {.sin_family = AF_INET};
	struct baseline before;
	struct gdx_pair p = {0};
	int flood[FLOOD];

	setenv("NCCL_GDX_HELLO_TIMEOUT_MS", "200", 1);
	n = net_up();
	/* what every pair shares is made first, as in test_thousand_pairs */
	gdx_pair_connect(n, 0, 1, &p);
	gdx_transfer(&p, 1000, 1000, 0, 1);
	gdx_pair_close(&p);
	memset(&p, 0, sizeof(p));
	ASSERT_EQ(n->listen(0, handle, &p.listen), ncclSuccess);
	memcpy(&h, handle, sizeof(h));
	baseline_take(&before);
	a.sin_port = h.port;
	memcpy(&a.sin_addr, h.addr, 4);
	for (int i = 0; i < FLOOD; i++) { /* more than the backlog holds */
		flood[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		ASSERT(flood[i] >= 0);
		ASSERT(connect(flood[i], (struct sockaddr *)&a, sizeof(a)) == 0 ||
		       errno == EINPROGRESS);
	}
	ASSERT_EQ(n->connect(1, handle, &p.send, NULL), ncclSuccess);
	ASSERT(p.send == NULL);
	/* only the listener runs, past the SYNs sent again (1 s) and the deadline */
	for (double t0 = gdx_now_s(); gdx_now_s() - t0 < 2.5;) {
		ASSERT_EQ(n->accept(p.listen, &p.recv, NULL), ncclSuccess);
		ASSERT(p.recv == NULL);
		usleep(2000);
	}
	for (double t0 = gdx_now_s(); !p.send || !p.recv;) {
		ASSERT(gdx_now_s() - t0 < 20);
		if (!p.send)
			ASSERT_EQ(n->connect(1, handle, &p.send, NULL), ncclSuccess);
		if (!p.recv)
			ASSERT_EQ(n->accept(p.listen, &p.recv, NULL), ncclSuccess);
	}
	ASSERT_STR_CONTAINS(gdx_test_infos(), "connecting again");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "incoming connection(s) that sent no hello");
	p.net = n;
	gdx_transfer(&p, 100000, 100000, 5, 6);
	ASSERT_EQ(n->closeSend(p.send), ncclSuccess);
	ASSERT_EQ(n->closeRecv(p.recv), ncclSuccess);
	for (int i = 0; i < FLOOD; i++)
		close(flood[i]);
	for (int i = 0; i < 100; i++) { /* the listener drops what the flood left */
		void *r = NULL;

		ASSERT_EQ(n->accept(p.listen, &r, NULL), ncclSuccess);
		ASSERT(r == NULL);
		usleep(1000);
	}
	baseline_check(&before, "after the connect made again and the flood");
	ASSERT_EQ(n->closeListen(p.listen), ncclSuccess);
}

GDX_TESTS_MAIN(TEST(test_thousand_pairs, 900), TEST(test_connect_again_when_closed_unread, 60),
	       TEST(test_abandoned_after_hello, 60), TEST(test_abandoned_after_rails, 60))
