/* SPDX-License-Identifier: MIT */
/*
 * A burst of real connects at one listener: 65 connects through the v7
 * table, one more than the handshakes a listener holds
 * (GDX_MAX_PENDING_ACCEPTS), each of which has sent its hello (the nonce)
 * and its rails before the listener's first accept. The listener takes 64,
 * all of which prove themselves as they are read, so the 65th is refused as
 * busy and closed unread (never stored past the 64: that was an
 * out-of-bounds write, which tests/vm/asan.sh runs this test to catch), its
 * connect connects again, and all 65 pairs carry bytes; the WARN says what
 * happened; descriptors and verbs objects go back to where they were. Runs
 * inside the VM (rxe0 <-> rxe1), and again from the ASan and UBSan build.
 */
#include <dirent.h>
#include <unistd.h>

#include "comm/gdx_comm.h"

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

enum { BURST = GDX_MAX_PENDING_ACCEPTS + 1 };

static struct gdx_plugin plugin;
static struct gdx_pair pairs[BURST];

static int count_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	int n = 0;

	ASSERT(dir != NULL);
	while (readdir(dir))
		n++;
	closedir(dir);
	return n;
}

/* Every pair carries bytes: a receive posted on each receive comm, then a
 * message from each send comm (its index the pattern's seed), each received
 * whole by exactly one receive comm. */
static void carry_bytes(const ncclNet_v7_t *n, void *const *recvs)
{
	enum { SIZE = 3000 };
	static struct gdx_buf rb[BURST], sb[BURST];
	static void *rreq[BURST];
	bool seen[BURST] = {false};

	for (int k = 0; k < BURST; k++) {
		void *data[1];
		int sizes[1] = {SIZE}, tags[1] = {7};

		gdx_buf_alloc(n, recvs[k], SIZE, 0, &rb[k]);
		data[0] = rb[k].mem;
		ASSERT_EQ(n->irecv(recvs[k], 1, data, sizes, tags, &rb[k].mh, &rreq[k]),
			  ncclSuccess);
		ASSERT(rreq[k] != NULL);
	}
	for (int i = 0; i < BURST; i++) {
		void *sreq = NULL;
		double t0 = gdx_now_s();
		int got;

		gdx_buf_alloc(n, pairs[i].send, SIZE, 0, &sb[i]);
		gdx_fill(sb[i].mem, SIZE, (uint32_t)i);
		/* NULL until the receiver's clear-to-send has landed */
		while (!sreq) {
			ASSERT_EQ(n->isend(pairs[i].send, sb[i].mem, SIZE, 7, sb[i].mh, &sreq),
				  ncclSuccess);
			ASSERT(gdx_now_s() - t0 < 10);
		}
		ASSERT_EQ(gdx_wait(n, sreq, &got, 10), ncclSuccess);
	}
	for (int k = 0; k < BURST; k++) {
		int got = -1, from = -1;

		ASSERT_EQ(gdx_wait(n, rreq[k], &got, 10), ncclSuccess);
		ASSERT_EQ(got, SIZE);
		for (int i = 0; i < BURST && from < 0; i++)
			if (gdx_check(rb[k].mem, SIZE, (uint32_t)i) < 0)
				from = i;
		ASSERT(from >= 0 && !seen[from]);
		seen[from] = true;
		gdx_buf_free(n, recvs[k], &rb[k]);
	}
	for (int i = 0; i < BURST; i++)
		gdx_buf_free(n, pairs[i].send, &sb[i]);
}

static void test_burst_one_past_the_queue(void)
{
	static char handles[BURST][NCCL_NET_HANDLE_MAXSIZE];
	const ncclNet_v7_t *n;
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	ncclNetDeviceHandle_v7_t *dev_send = NULL;
	int nsend = 0, nrecv = 0, fds, nrounds = 0;
	char verbs_before[2048], verbs_after[2048];
	void *listen, *recvs[BURST];
	double start;

	gdx_plugin_load(&plugin);
	n = plugin.v7;
	ASSERT_EQ(n->init(gdx_test_logger), ncclSuccess);
	/* the first pair makes what every later one shares: the baseline after it */
	gdx_pair_connect(n, 0, 1, &pairs[0]);
	gdx_pair_close(&pairs[0]);
	fds = count_fds();
	gdx_rdma_counts(verbs_before, sizeof(verbs_before));
	gdx_test_log_clear();

	memset(handle, 0, sizeof(handle));
	ASSERT_EQ(n->listen(0, handle, &listen), ncclSuccess);
	/* each connect has a handle buffer of its own: it names the attempt */
	for (int i = 0; i < BURST; i++) {
		memcpy(handles[i], handle, sizeof(handle));
		pairs[i] = (struct gdx_pair){.net = n, .listen = listen};
	}
	/* The connects alone, until each has sent its hello and rails: they
	 * then wait for the listener's answer, which never comes before its
	 * first accept. */
	for (start = gdx_now_s(); gdx_now_s() - start < 2; nrounds++) {
		for (int i = 0; i < BURST; i++)
			ASSERT_EQ(n->connect(1, handles[i], &pairs[i].send, &dev_send),
				  ncclSuccess);
		usleep(2000);
	}
	for (int i = 0; i < BURST; i++)
		ASSERT(pairs[i].send == NULL);
	/* Then both sides, as NCCL drives them, until every pair is made. */
	for (start = gdx_now_s(); nsend < BURST || nrecv < BURST;) {
		for (int i = 0; i < BURST; i++) {
			if (pairs[i].send)
				continue;
			ASSERT_EQ(n->connect(1, handles[i], &pairs[i].send, &dev_send),
				  ncclSuccess);
			nsend += pairs[i].send != NULL;
		}
		if (nrecv < BURST) {
			void *r = NULL;

			ASSERT_EQ(n->accept(listen, &r, NULL), ncclSuccess);
			if (r)
				recvs[nrecv++] = r;
		}
		if (gdx_now_s() - start > 60)
			gdx_test_fail(__FILE__, __LINE__,
				      "the burst did not connect in 60 s: %d sends, %d receives",
				      nsend, nrecv);
	}
	printf("  %d pairs made in %.1f s (%d rounds of connects first)\n", BURST,
	       gdx_now_s() - start, nrounds);
	ASSERT_STR_CONTAINS(
		gdx_test_warnings(),
		"refused 1 incoming connection(s) unread: the 64 handshakes held had all "
		"shown the nonce");
	ASSERT(!strstr(gdx_test_warnings(), "sent no hello"));
	ASSERT_STR_CONTAINS(gdx_test_infos(), "connecting again");
	ASSERT_EQ(n->closeListen(listen), ncclSuccess);
	carry_bytes(n, recvs);
	for (int i = 0; i < BURST; i++) {
		ASSERT_EQ(n->closeSend(pairs[i].send), ncclSuccess);
		ASSERT_EQ(n->closeRecv(recvs[i]), ncclSuccess);
	}
	ASSERT_EQ(count_fds(), fds);
	gdx_rdma_counts(verbs_after, sizeof(verbs_after));
	ASSERT_EQ(strcmp(verbs_after, verbs_before), 0);
}

GDX_TESTS_MAIN(TEST(test_burst_one_past_the_queue, 180))
