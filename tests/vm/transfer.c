/* SPDX-License-Identifier: MIT */
/*
 * Transfers through the plugin's ncclNetPlugin_v7 table over two real rxe
 * devices (rxe0 on veth0, rxe1 on veth1), every byte verified. Runs inside
 * the VM: scripts/vm-run.sh -- build/tests/vm/transfer
 */
#include <dirent.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sys/gdx_log.h"

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static struct gdx_plugin plugin;

static const ncclNet_v7_t *net_up(void)
{
	int ndev = 0;

	gdx_plugin_load(&plugin);
	ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
	ASSERT_EQ(plugin.v7->devices(&ndev), ncclSuccess);
	ASSERT(ndev >= 2);
	return plugin.v7;
}

/* Frees count send buffers and count receive buffers of p. */
static void bufs_free(const ncclNet_v7_t *n, const struct gdx_pair *p, struct gdx_buf *s,
		      struct gdx_buf *r, int count)
{
	for (int i = 0; i < count; i++) {
		gdx_buf_free(n, p->send, &s[i]);
		gdx_buf_free(n, p->recv, &r[i]);
	}
}

static void test_properties(void)
{
	const ncclNet_v7_t *n = net_up();
	ncclNetProperties_v7_t a, b;

	ASSERT_EQ(n->getProperties(0, &a), ncclSuccess);
	ASSERT_EQ(n->getProperties(1, &b), ncclSuccess);
	ASSERT_EQ(strcmp(a.name, "rxe0"), 0);
	ASSERT_EQ(strcmp(b.name, "rxe1"), 0);
	ASSERT(a.pciPath == NULL); /* rxe has no PCI parent */
	ASSERT_EQ(a.ptrSupport, NCCL_PTR_HOST);
	ASSERT(a.speed > 0);
	ASSERT_EQ(a.port, 1);
	ASSERT(a.maxComms > 0);
	ASSERT_EQ(a.maxRecvs, 8);
	ASSERT_EQ(a.netDeviceType, NCCL_NET_DEVICE_HOST);
	ASSERT_EQ(a.netDeviceVersion, 0);
	ASSERT(a.guid != 0);
	/* Strings stay valid and identical across calls. */
	ASSERT_EQ(n->getProperties(0, &b), ncclSuccess);
	ASSERT(a.name == b.name);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "device 0: rxe0 port 1, RoCE");
	ASSERT_STR_CONTAINS(gdx_test_infos(), "out-of-band interface");
	/* no GPU here: host memory only, and the log says why */
	ASSERT_STR_CONTAINS(gdx_test_infos(),
			    "rxe0: staged through host memory: no NVIDIA GPU (no CUDA driver)");
	/* init again is harmless */
	ASSERT_EQ(n->init(gdx_test_logger), ncclSuccess);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_connect_one_thread(void)
{
	const ncclNet_v7_t *n = net_up();
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	void *l = NULL, *s = NULL, *r = NULL;
	struct gdx_pair p;

	/* dev_comm arguments NULL itself, as NCCL's GDR probe passes them */
	ASSERT_EQ(n->listen(0, handle, &l), ncclSuccess);
	for (int i = 0; (!s || !r) && i < 200000; i++) {
		if (!s)
			ASSERT_EQ(n->connect(1, handle, &s, NULL), ncclSuccess);
		if (!r)
			ASSERT_EQ(n->accept(l, &r, NULL), ncclSuccess);
	}
	ASSERT(s && r);
	p = (struct gdx_pair){n, l, s, r};
	gdx_transfer(&p, 4096, 4096, 0, 1);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static const size_t sizes[] = {0,	1,	  2,	    3,	     7,	      8,       63,
			       64,	65,	  127,	    128,     129,     4095,    4096,
			       4097,	65535,	  65536,    65537,   1048575, 1048576, 1048577,
			       4194307, 16777216, 33554431, 67108864};

static void all_sizes(int listen_dev, int connect_dev)
{
	const ncclNet_v7_t *n = net_up();
	struct gdx_pair p;

	gdx_pair_connect(n, listen_dev, connect_dev, &p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		gdx_transfer(&p, sizes[i], sizes[i], i % 8, (uint32_t)i + 100);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_all_sizes_rxe1_to_rxe0(void)
{
	all_sizes(0, 1);
}

static void test_all_sizes_rxe0_to_rxe1(void)
{
	all_sizes(1, 0);
}

static void test_32_in_flight(void)
{
	enum { N = NCCL_NET_MAX_REQUESTS, SZ = 65536 + 3 };
	const ncclNet_v7_t *n = net_up();
	struct gdx_buf s[N], r[N];
	void *sreq[N], *rreq[N], *extra = NULL;
	int rdone[N], oldest;
	struct gdx_pair p;

	gdx_pair_connect(n, 0, 1, &p);
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			int size = SZ, tag = i;
			void *data;

			gdx_buf_alloc(n, p.send, SZ, (size_t)i, &s[i]);
			gdx_buf_alloc(n, p.recv, SZ, (size_t)i, &r[i]);
			gdx_fill(s[i].mem, SZ, (uint32_t)(round * N + i));
			data = r[i].mem;
			ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r[i].mh, &rreq[i]),
				  ncclSuccess);
			ASSERT(rreq[i]);
		}
		if (round == 0) {
			/* a 33rd receive is refused, not queued or crashed */
			int size = SZ, tag = 0;
			void *data = r[0].mem;

			ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r[0].mh, &extra),
				  ncclInternalError);
			ASSERT_STR_CONTAINS(gdx_test_warnings(),
					    "more than 32 receive requests in flight");
			gdx_test_log_clear();
		}
		/* As NCCL's proxy loop does, the oldest receive is tested while
		 * the sends wait: the receiver sends clear-to-sends in batches and
		 * counts on being polled. */
		memset(rdone, 0, sizeof(rdone));
		oldest = 0;
		for (int i = 0; i < N; i++) {
			sreq[i] = NULL;
			for (double t0 = gdx_now_s(); !sreq[i] && gdx_now_s() - t0 < 20;) {
				int done = 0, got = -1;

				ASSERT_EQ(n->isend(p.send, s[i].mem, SZ, i, s[i].mh, &sreq[i]),
					  ncclSuccess);
				if (sreq[i] || oldest == N)
					continue;
				ASSERT_EQ(n->test(rreq[oldest], &done, &got), ncclSuccess);
				if (done) {
					ASSERT_EQ(got, SZ);
					rdone[oldest++] = 1;
				}
			}
			ASSERT(sreq[i]);
		}
		/* the rest in reverse order: completion does not depend on test order */
		for (int i = N - 1; i >= 0; i--) {
			int got = SZ;

			if (!rdone[i])
				ASSERT_EQ(gdx_wait(n, rreq[i], &got, 60), ncclSuccess);
			ASSERT_EQ(got, SZ);
			ASSERT_EQ(gdx_wait(n, sreq[i], &got, 60), ncclSuccess);
			ASSERT_EQ(gdx_check(r[i].mem, SZ, (uint32_t)(round * N + i)), -1);
		}
		bufs_free(n, &p, s, r, N);
	}
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* Packets all rxe devices have sent so far (their hw_counters). */
static long rxe_sent_packets(void)
{
	long total = 0;

	for (int d = 0; d < 8; d++) {
		char path[128];
		long v = 0;
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/rxe%d/ports/1/hw_counters/sent_pkts", d);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%ld", &v) == 1)
			total += v;
		fclose(f);
	}
	return total;
}

/* 32 receives posted at once: their clear-to-sends go in a few batched
 * writes, not 32; the ones held back go as soon as a receive is tested, and
 * every message then arrives intact. */
static void test_cts_batched(void)
{
	enum { N = NCCL_NET_MAX_REQUESTS, SZ = 4096 };
	const ncclNet_v7_t *n = net_up();
	struct gdx_buf s[N], r[N];
	void *sreq[N] = {0}, *rreq[N];
	int sent = 0, got = -1;
	struct gdx_pair p;
	long before;

	gdx_pair_connect(n, 0, 1, &p);
	for (int i = 0; i < N; i++) {
		gdx_buf_alloc(n, p.send, SZ, 0, &s[i]);
		gdx_buf_alloc(n, p.recv, SZ, 0, &r[i]);
		gdx_fill(s[i].mem, SZ, (uint32_t)i);
	}
	usleep(100 * 1000); /* the connection's own packets are through */
	before = rxe_sent_packets();
	for (int i = 0; i < N; i++) {
		int size = SZ, tag = 0;
		void *data = r[i].mem;

		ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r[i].mh, &rreq[i]), ncclSuccess);
		ASSERT(rreq[i]);
	}
	usleep(100 * 1000);
	/* a write of a few entries and its acknowledgement: 2 packets each */
	printf("  32 clear-to-sends took %ld packets\n", rxe_sent_packets() - before);
	ASSERT(rxe_sent_packets() - before <= 2 * 8);
	/* Without a receive-side call the sender gets the batches sent so far:
	 * at least two, and not all (the last ones are held back). */
	for (int i = 0; i < N; i++) {
		for (int k = 0; k < 1000 && !sreq[i]; k++)
			ASSERT_EQ(n->isend(p.send, s[i].mem, SZ, 0, s[i].mh, &sreq[i]),
				  ncclSuccess);
		if (!sreq[i])
			break;
		sent++;
	}
	printf("  the sender found %d of %d before the receiver was polled\n", sent, N);
	ASSERT(sent >= 2 && sent < N);
	/* Testing the newest receive, one held back, sends what was held. */
	ASSERT_EQ(n->test(rreq[N - 1], &(int){0}, &got), ncclSuccess);
	for (int i = sent; i < N; i++) {
		for (double t0 = gdx_now_s(); !sreq[i] && gdx_now_s() - t0 < 20;)
			ASSERT_EQ(n->isend(p.send, s[i].mem, SZ, 0, s[i].mh, &sreq[i]),
				  ncclSuccess);
		ASSERT(sreq[i]);
	}
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(gdx_wait(n, rreq[i], &got, 60), ncclSuccess);
		ASSERT_EQ(got, SZ);
		ASSERT_EQ(gdx_wait(n, sreq[i], &got, 60), ncclSuccess);
		ASSERT_EQ(gdx_check(r[i].mem, SZ, (uint32_t)i), -1);
	}
	bufs_free(n, &p, s, r, N);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* NCCL_GDX_CTS_BATCH=1, for a driver that does not keep testing its
 * receives: every clear-to-send goes at once, and the sender finds all 32
 * without the receive side being called again. */
static void test_cts_unbatched(void)
{
	enum { N = NCCL_NET_MAX_REQUESTS, SZ = 4096 };
	const ncclNet_v7_t *n;
	struct gdx_buf s, r;
	void *sreq[N] = {0}, *rreq[N];
	struct gdx_pair p;
	int got = -1;

	setenv("NCCL_GDX_CTS_BATCH", "1", 1);
	n = net_up();
	gdx_pair_connect(n, 0, 1, &p);
	gdx_buf_alloc(n, p.send, SZ, 0, &s);
	gdx_buf_alloc(n, p.recv, SZ, 0, &r);
	gdx_fill(s.mem, SZ, 7);
	for (int i = 0; i < N; i++) {
		int size = SZ, tag = 0;
		void *data = r.mem;

		ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r.mh, &rreq[i]), ncclSuccess);
	}
	for (int i = 0; i < N; i++) {
		for (double t0 = gdx_now_s(); !sreq[i] && gdx_now_s() - t0 < 20;)
			ASSERT_EQ(n->isend(p.send, s.mem, SZ, 0, s.mh, &sreq[i]), ncclSuccess);
		ASSERT(sreq[i]);
	}
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(gdx_wait(n, rreq[i], &got, 60), ncclSuccess);
		ASSERT_EQ(got, SZ);
		ASSERT_EQ(gdx_wait(n, sreq[i], &got, 60), ncclSuccess);
	}
	ASSERT_EQ(gdx_check(r.mem, SZ, 7), -1);
	gdx_buf_free(n, p.send, &s);
	gdx_buf_free(n, p.recv, &r);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* Small host-memory sends go inline: the provider copies the bytes when they
 * are posted, so the send is done at its first test and its buffer may be
 * overwritten at once. 3,000 of them, 32 in flight, keep the send queue
 * turning over (they go unsignaled but one in 16), every one arrives as it
 * was when posted, and a send comm closed right after its last send still
 * delivers it. */
static void test_inline_sends_done_at_post(void)
{
	enum { N = NCCL_NET_MAX_REQUESTS, SZ = 48, MSGS = 3000 };
	const ncclNet_v7_t *n = net_up();
	struct gdx_buf s, r[N];
	void *rreq[N];
	struct gdx_pair p;
	int got = -1;

	gdx_pair_connect(n, 0, 1, &p);
	gdx_buf_alloc(n, p.send, SZ, 0, &s);
	for (int i = 0; i < N; i++)
		gdx_buf_alloc(n, p.recv, SZ, 0, &r[i]);
	for (int m = 0; m < MSGS + N; m++) {
		int k = m % N, size = SZ, tag = 0, done = 0;
		void *data = r[k].mem, *sreq = NULL;

		if (m >= N) { /* the receive of message m - N is due */
			ASSERT_EQ(gdx_wait(n, rreq[k], &got, 60), ncclSuccess);
			ASSERT_EQ(got, SZ);
			ASSERT_EQ(gdx_check(r[k].mem, SZ, (uint32_t)(m - N)), -1);
		}
		if (m >= MSGS)
			continue;
		ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r[k].mh, &rreq[k]), ncclSuccess);
		gdx_fill(s.mem, SZ, (uint32_t)m);
		for (double t0 = gdx_now_s(); !sreq && gdx_now_s() - t0 < 20;) {
			ASSERT_EQ(n->isend(p.send, s.mem, SZ, 0, s.mh, &sreq), ncclSuccess);
			/* the receiver sends held-back clear-to-sends when tested;
			 * this receive cannot complete before its send */
			if (!sreq)
				ASSERT_EQ(n->test(rreq[k], &done, &got), ncclSuccess);
		}
		ASSERT_EQ(done, 0);
		ASSERT(sreq);
		ASSERT_EQ(n->test(sreq, &done, &got), ncclSuccess);
		ASSERT_EQ(done, 1); /* at the first test: no completion to wait for */
		ASSERT_EQ(got, SZ);
		memset(s.mem, 0xee, SZ); /* the bytes on their way are a copy */
	}
	/* The last message, then the send comm goes at once: it still arrives. */
	{
		int size = SZ, tag = 0, done = 0;
		void *data = r[0].mem, *sreq = NULL;

		ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r[0].mh, &rreq[0]), ncclSuccess);
		gdx_fill(s.mem, SZ, 99999);
		for (double t0 = gdx_now_s(); !sreq && gdx_now_s() - t0 < 20;) {
			ASSERT_EQ(n->isend(p.send, s.mem, SZ, 0, s.mh, &sreq), ncclSuccess);
			if (!sreq)
				ASSERT_EQ(n->test(rreq[0], &done, &got), ncclSuccess);
		}
		ASSERT_EQ(done, 0);
		ASSERT(sreq);
		ASSERT_EQ(n->test(sreq, &done, &got), ncclSuccess);
		ASSERT_EQ(done, 1);
		gdx_buf_free(n, p.send, &s);
		ASSERT_EQ(n->closeSend(p.send), ncclSuccess);
		p.send = NULL;
		ASSERT_EQ(gdx_wait(n, rreq[0], &got, 60), ncclSuccess);
		ASSERT_EQ(got, SZ);
		ASSERT_EQ(gdx_check(r[0].mem, SZ, 99999), -1);
	}
	for (int i = 0; i < N; i++)
		gdx_buf_free(n, p.recv, &r[i]);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

/* A send comm whose peer has closed its end, with an inline send it reported
 * done: closing it does not wait for a delivery that cannot come (nor for the
 * transport's retries). */
static void test_close_after_inline_send_to_gone_peer(void)
{
	const ncclNet_v7_t *n = net_up();
	struct gdx_buf s, r;
	void *sreq = NULL, *rreq, *data;
	int size = 64, tag = 0, done = 0, got = -1;
	struct gdx_pair p;
	double t0;

	gdx_pair_connect(n, 0, 1, &p);
	gdx_buf_alloc(n, p.send, 64, 0, &s);
	gdx_buf_alloc(n, p.recv, 64, 0, &r);
	data = r.mem;
	ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r.mh, &rreq), ncclSuccess);
	ASSERT_EQ(n->test(rreq, &done, &got), ncclSuccess); /* its clear-to-send goes */
	usleep(100 * 1000);
	gdx_buf_free(n, p.recv, &r);
	ASSERT_EQ(n->closeRecv(p.recv), ncclSuccess);
	p.recv = NULL;
	for (t0 = gdx_now_s(); !sreq && gdx_now_s() - t0 < 20;)
		ASSERT_EQ(n->isend(p.send, s.mem, 8, 0, s.mh, &sreq), ncclSuccess);
	ASSERT(sreq);
	ASSERT_EQ(n->test(sreq, &done, &got), ncclSuccess);
	ASSERT_EQ(done, 1);
	gdx_buf_free(n, p.send, &s);
	t0 = gdx_now_s();
	ASSERT_EQ(n->closeSend(p.send), ncclSuccess);
	p.send = NULL;
	printf("  closing took %.2f s\n", gdx_now_s() - t0);
	ASSERT(gdx_now_s() - t0 < 0.5);
	gdx_pair_close(&p);
}

static void test_receive_larger_than_send(void)
{
	const ncclNet_v7_t *n = net_up();
	struct gdx_pair p;

	gdx_pair_connect(n, 0, 1, &p);
	gdx_transfer(&p, 1000, 1 << 20, 0, 5);
	gdx_transfer(&p, 0, 4096, 3, 6);
	gdx_transfer(&p, 65537, 65540, 1, 7);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_send_larger_than_receive(void)
{
	const ncclNet_v7_t *n = net_up();
	struct gdx_buf s, r;
	struct gdx_pair p;
	void *sreq = NULL, *rreq = NULL, *data;
	int size = 100, tag = 1;
	ncclResult_t res = ncclSuccess;
	double t0;

	gdx_pair_connect(n, 0, 1, &p);
	gdx_buf_alloc(n, p.send, 200, 0, &s);
	gdx_buf_alloc(n, p.recv, 100, 0, &r);
	data = r.mem;
	ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r.mh, &rreq), ncclSuccess);
	for (t0 = gdx_now_s(); res == ncclSuccess && !sreq && gdx_now_s() - t0 < 20;)
		res = n->isend(p.send, s.mem, 200, 1, s.mh, &sreq);
	ASSERT_EQ(res, ncclInvalidUsage);
	ASSERT(sreq == NULL);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "send of 200 bytes");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "(100 bytes)");
	/* The receiver is told too, instead of waiting forever. */
	t0 = gdx_now_s();
	ASSERT_NE(gdx_wait(n, rreq, &size, 10), ncclSuccess);
	ASSERT(gdx_now_s() - t0 < 5);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "refused to send into a 100-byte receive");
	/* Every later call on the failed comms reports the error. */
	ASSERT_NE(n->isend(p.send, s.mem, 10, 1, s.mh, &sreq), ncclSuccess);
	gdx_buf_free(n, p.send, &s);
	gdx_buf_free(n, p.recv, &r);
	gdx_pair_close(&p);
}

static void test_several_comms(void)
{
	enum { PAIRS = 4, MSGS = 8, SZ = 300001 };
	const ncclNet_v7_t *n = net_up();
	struct gdx_pair p[PAIRS];
	struct gdx_buf s[PAIRS], r[PAIRS];

	for (int i = 0; i < PAIRS; i++) {
		gdx_pair_connect(n, i % 2, 1 - i % 2, &p[i]);
		gdx_buf_alloc(n, p[i].send, SZ, 0, &s[i]);
		gdx_buf_alloc(n, p[i].recv, SZ, 0, &r[i]);
	}
	for (int m = 0; m < MSGS; m++) {
		void *sreq[PAIRS] = {0}, *rreq[PAIRS];

		for (int i = 0; i < PAIRS; i++) {
			int size = SZ, tag = 0;
			void *data = r[i].mem;

			gdx_fill(s[i].mem, SZ, (uint32_t)(m * PAIRS + i));
			ASSERT_EQ(n->irecv(p[i].recv, 1, &data, &size, &tag, &r[i].mh, &rreq[i]),
				  ncclSuccess);
		}
		for (int pending = PAIRS; pending;) {
			pending = 0;
			for (int i = 0; i < PAIRS; i++) {
				if (!sreq[i])
					ASSERT_EQ(n->isend(p[i].send, s[i].mem, SZ, 0, s[i].mh,
							   &sreq[i]),
						  ncclSuccess);
				pending += !sreq[i];
			}
		}
		for (int i = 0; i < PAIRS; i++) {
			int got;

			ASSERT_EQ(gdx_wait(n, sreq[i], &got, 60), ncclSuccess);
			ASSERT_EQ(gdx_wait(n, rreq[i], &got, 60), ncclSuccess);
			ASSERT_EQ(got, SZ);
			ASSERT_EQ(gdx_check(r[i].mem, SZ, (uint32_t)(m * PAIRS + i)), -1);
		}
	}
	for (int i = 0; i < PAIRS; i++) {
		gdx_buf_free(n, p[i].send, &s[i]);
		gdx_buf_free(n, p[i].recv, &r[i]);
		gdx_pair_close(&p[i]);
	}
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_unaligned_buffers(void)
{
	const ncclNet_v7_t *n = net_up();
	struct gdx_pair p;

	gdx_pair_connect(n, 0, 1, &p);
	for (size_t off = 1; off < 8; off += 2)
		gdx_transfer(&p, 123457, 123460, off, (uint32_t)off);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_misuse(void)
{
	const ncclNet_v7_t *n = net_up();
	struct gdx_buf s, r;
	struct gdx_pair p;
	void *mh = NULL, *sreq = NULL, *rreq = NULL, *data;
	int size = 64, tag = 0, done = 0, got;
	char *hole;

	gdx_pair_connect(n, 0, 1, &p);
	gdx_buf_alloc(n, p.send, 64, 0, &s);
	gdx_buf_alloc(n, p.recv, 64, 0, &r);
	/* registration of nothing, or of memory that is not mapped */
	ASSERT_NE(n->regMr(p.send, s.mem, 0, NCCL_PTR_HOST, &mh), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "empty range");
	hole = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(hole != MAP_FAILED);
	munmap(hole, 1 << 20);
	ASSERT_NE(n->regMr(p.send, hole, 1 << 20, NCCL_PTR_HOST, &mh), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "ibv_reg_mr");
	/* CUDA memory is not advertised, so it is refused by name */
	ASSERT_NE(n->regMr(p.send, s.mem, 64, NCCL_PTR_CUDA, &mh), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "registration of GPU memory refused: rxe1 does not advertise it");
	/* wrong comm kinds */
	ASSERT_EQ(n->isend(p.recv, s.mem, 64, 0, s.mh, &sreq), ncclInternalError);
	ASSERT_EQ(n->irecv(p.send, 1, &data, &size, &tag, &r.mh, &rreq), ncclInternalError);
	ASSERT_EQ(n->accept(p.send, &rreq, NULL), ncclInternalError);
	/* a buffer outside its registration */
	data = r.mem + 1;
	ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r.mh, &rreq), ncclInternalError);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "outside its registration");
	/* a request tested after it completed */
	data = r.mem;
	ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r.mh, &rreq), ncclSuccess);
	while (!sreq)
		ASSERT_EQ(n->isend(p.send, s.mem, 64, 0, s.mh, &sreq), ncclSuccess);
	ASSERT_EQ(gdx_wait(n, sreq, &got, 20), ncclSuccess);
	ASSERT_EQ(gdx_wait(n, rreq, &got, 20), ncclSuccess);
	gdx_test_log_clear();
	ASSERT_EQ(n->test(rreq, &done, &got), ncclInternalError);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "not in flight");
	/* the comm still works after all that */
	gdx_transfer(&p, 5000, 5000, 0, 9);
	gdx_buf_free(n, p.send, &s);
	gdx_buf_free(n, p.recv, &r);
	gdx_pair_close(&p);
	/* double close */
	ASSERT_EQ(n->closeSend(p.send), ncclInternalError);
	ASSERT_EQ(n->closeListen(p.listen), ncclInternalError);
}

static void test_close_with_requests_in_flight(void)
{
	const ncclNet_v7_t *n = net_up();

	for (int round = 0; round < 3; round++) {
		struct gdx_buf s, r;
		struct gdx_pair p;
		void *sreq = NULL, *rreq[4], *data;
		int size = 1 << 20, tag = 0;

		gdx_pair_connect(n, 0, 1, &p);
		gdx_buf_alloc(n, p.send, 1 << 20, 0, &s);
		gdx_buf_alloc(n, p.recv, 1 << 20, 0, &r);
		data = r.mem;
		for (int i = 0; i < 4; i++)
			ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r.mh, &rreq[i]),
				  ncclSuccess);
		while (!sreq)
			ASSERT_EQ(n->isend(p.send, s.mem, 1 << 20, 0, s.mh, &sreq), ncclSuccess);
		/* round 0: receiver first; round 1: sender first; round 2: both at once */
		if (round == 1)
			ASSERT_EQ(n->closeSend(p.send), ncclSuccess);
		ASSERT_EQ(n->closeRecv(p.recv), ncclSuccess);
		if (round != 1)
			ASSERT_EQ(n->closeSend(p.send), ncclSuccess);
		ASSERT_EQ(n->closeListen(p.listen), ncclSuccess);
		gdx_buf_free(n, p.send, &s);
		gdx_buf_free(n, p.recv, &r);
	}
	/* and the device still serves new comms */
	struct gdx_pair p;

	gdx_pair_connect(n, 0, 1, &p);
	gdx_transfer(&p, 77777, 77777, 0, 3);
	gdx_pair_close(&p);
}

static void test_reload(void)
{
	for (int i = 0; i < 3; i++) {
		struct gdx_pair p;

		gdx_plugin_load(&plugin);
		ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
		gdx_pair_connect(plugin.v7, 0, 1, &p);
		gdx_transfer(&p, 1 << 20, 1 << 20, 0, (uint32_t)i);
		gdx_pair_close(&p);
		gdx_plugin_unload(&plugin);
	}
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_iflush_host_memory_is_null(void)
{
	const ncclNet_v7_t *n = net_up();
	struct gdx_buf r;
	struct gdx_pair p;
	void *req = (void *)1, *data;
	int size = 4096;

	gdx_pair_connect(n, 0, 1, &p);
	gdx_buf_alloc(n, p.recv, 4096, 0, &r);
	data = r.mem;
	ASSERT_EQ(n->iflush(p.recv, 1, &data, &size, &r.mh, &req), ncclSuccess);
	ASSERT(req == NULL);
	gdx_buf_free(n, p.recv, &r);
	gdx_pair_close(&p);
}

/* NCCL_GDX_GDR_FLUSH=2 runs the flush reads on host memory too: the loopback
 * QPs and the 1-byte RDMA READ, over rxe, as they run on GPU memory. */
static void test_iflush_read_when_forced(void)
{
	const ncclNet_v7_t *n;
	struct gdx_buf s, r;
	struct gdx_pair p;
	void *req = NULL, *sreq = NULL, *data;
	int size = 100000, tag = 0, got, zero = 0;

	setenv("NCCL_GDX_GDR_FLUSH", "2", 1);
	gdx_plugin_load(&plugin);
	n = plugin.v7;
	ASSERT_EQ(n->init(gdx_test_logger), ncclSuccess);
	gdx_pair_connect(n, 0, 1, &p);
	gdx_buf_alloc(n, p.send, 100000, 0, &s);
	gdx_buf_alloc(n, p.recv, 100000, 0, &r);
	data = r.mem;
	ASSERT_EQ(n->irecv(p.recv, 1, &data, &size, &tag, &r.mh, &req), ncclSuccess);
	while (!sreq)
		ASSERT_EQ(n->isend(p.send, s.mem, 100000, 0, s.mh, &sreq), ncclSuccess);
	ASSERT_EQ(gdx_wait(n, sreq, &got, 20), ncclSuccess);
	ASSERT_EQ(gdx_wait(n, req, &got, 20), ncclSuccess);
	req = NULL;
	ASSERT_EQ(n->iflush(p.recv, 1, &data, &got, &r.mh, &req), ncclSuccess);
	ASSERT(req != NULL);
	ASSERT_EQ(gdx_wait(n, req, NULL, 20), ncclSuccess);
	/* nothing received: nothing to flush */
	req = (void *)1;
	ASSERT_EQ(n->iflush(p.recv, 1, &data, &zero, &r.mh, &req), ncclSuccess);
	ASSERT(req == NULL);
	gdx_buf_free(n, p.send, &s);
	gdx_buf_free(n, p.recv, &r);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	ASSERT(d != NULL);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static void test_resources_return_to_baseline(void)
{
	const ncclNet_v7_t *n = net_up();
	char before[1024], after[1024];
	int fds = 0;

	for (int i = 0; i < 21; i++) {
		struct gdx_pair p;

		if (i == 1) {
			fds = count_fds();
			gdx_rdma_counts(before, sizeof(before));
		}
		gdx_pair_connect(n, i % 2, 1 - i % 2, &p);
		gdx_transfer(&p, 100000, 100000, 0, (uint32_t)i);
		gdx_pair_close(&p);
	}
	gdx_rdma_counts(after, sizeof(after));
	printf("  after 20 connect/transfer/close cycles:\n%s", after);
	ASSERT_EQ(count_fds(), fds);
	if (strcmp(before, after))
		gdx_test_fail(__FILE__, __LINE__, "rdma resources changed:\n%s--- to ---\n%s",
			      before, after);
}

/*
 * What NCCL prints of a connection's whole life at its default subsystems
 * (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS unset: INIT, with BOOTSTRAP and ENV
 * in newer releases): the two INIT lines when the plugin starts (the
 * version and the file, said before anything can fail; then net_ib's one
 * line, the devices and the interface), nothing while a connection opens, carries and closes (its
 * lines are NET's), and when the last comm closes (before v11, the job's last ncclCommDestroy) one
 * summary per NIC port it used.
 */
static void test_log_at_default_subsystems(void)
{
	const unsigned long deflt = NCCL_INIT | 4096 /* NCCL_BOOTSTRAP, 2.2x on */ | NCCL_ENV;
	const ncclNet_v7_t *n;
	struct gdx_pair p;
	int env;

	gdx_test_log_clear();
	n = net_up();
	printf("  at init, NCCL_DEBUG_SUBSYS=INIT shows:\n");
	gdx_test_log_print(NCCL_LOG_INFO, NCCL_INIT);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, NULL), 2);
	ASSERT_EQ(gdx_test_log_index(NCCL_LOG_INFO, GDX_LOG_PREFIX
				     "starting libnccl-net-gdx " GDX_VERSION ", loaded from \""),
		  0);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT,
				     GDX_LOG_PREFIX "libnccl-net-gdx " GDX_VERSION
						    ", wire protocol "),
		  1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT,
				     "; using [0]rxe0:1/RoCE/staged [1]rxe1:1/RoCE/staged"),
		  1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, "; OOB "), 1);
	/* newer NCCLs show ENV too: only the values the user set, as NCCL's own */
	env = gdx_test_log_count(NCCL_LOG_INFO, NCCL_ENV, NULL);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_ENV, " set by "), env);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, deflt, NULL), 2 + env);
	/* the details are NET's: each device, the verdicts, the interface */
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_NET, "device 0: rxe0 port 1, RoCE"), 1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_NET,
				     "rxe1: staged through host memory: no NVIDIA GPU"),
		  1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_NET, "out-of-band interface "), 1);

	gdx_test_log_clear();
	gdx_pair_connect(n, 0, 1, &p);
	gdx_transfer(&p, 1 << 20, 1 << 20, 0, 77);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, deflt, NULL), 0);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_NET, "connected rxe1 to "), 1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_NET, "accepted "), 1);
	gdx_pair_close(&p);
	printf("  a connection's life, NCCL_DEBUG_SUBSYS=INIT shows:\n");
	gdx_test_log_print(NCCL_LOG_INFO, NCCL_INIT);
	printf("  and NET:\n");
	gdx_test_log_print(NCCL_LOG_INFO, NCCL_NET);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_NET, " comm with "), 2);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, " comm with "), 0);
	/* the summary: one line per port, at INIT */
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, deflt, NULL), 2);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT,
				     "rxe0 port 1: 1 comm(s) closed, 0 bytes GPU-direct, 1048576 "
				     "bytes through host memory, 0 rail failover(s)"),
		  1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT,
				     "rxe1 port 1: 1 comm(s) closed, 0 bytes GPU-direct, 1048576 "
				     "bytes through host memory, 0 rail failover(s)"),
		  1);
	/* unloading says nothing more: the summary was said */
	gdx_plugin_unload(&plugin);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, deflt, NULL), 2);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

GDX_TESTS_MAIN(TEST(test_properties, 30), TEST(test_log_at_default_subsystems, 60),
	       TEST(test_connect_one_thread, 60), TEST(test_all_sizes_rxe1_to_rxe0, 600),
	       TEST(test_all_sizes_rxe0_to_rxe1, 600), TEST(test_32_in_flight, 300),
	       TEST(test_cts_batched, 120), TEST(test_cts_unbatched, 120),
	       TEST(test_inline_sends_done_at_post, 300),
	       TEST(test_close_after_inline_send_to_gone_peer, 60),
	       TEST(test_receive_larger_than_send, 60), TEST(test_send_larger_than_receive, 60),
	       TEST(test_several_comms, 300), TEST(test_unaligned_buffers, 60),
	       TEST(test_misuse, 60), TEST(test_close_with_requests_in_flight, 120),
	       TEST(test_reload, 120), TEST(test_iflush_host_memory_is_null, 30),
	       TEST(test_iflush_read_when_forced, 60), TEST(test_resources_return_to_baseline, 300))
