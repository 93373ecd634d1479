/* SPDX-License-Identifier: MIT */
/*
 * The wire goes down under a stream: the comms on it fail within a bounded
 * time (retries running out) and say why, the port's async event is reported,
 * and a comm on another device keeps working. Runs inside the VM with
 * --pairs 2; restores the link before it ends.
 */
#include <stdlib.h>
#include <unistd.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static void link_set(const char *ifname, const char *state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "ip link set %s %s", ifname, state);
	ASSERT_EQ(system(cmd), 0);
}

/* Every wire up, whatever an earlier test left behind when it failed. */
static void links_restore(void)
{
	static const char *const pairs[][2] = {
		{"veth0", "rxe0"}, {"veth1", "rxe1"}, {"veth2", "rxe2"}, {"veth3", "rxe3"}};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		link_set(pairs[i][0], "up");
		gdx_port_wait_active(pairs[i][1]);
	}
}

static void test_link_down_during_transfers(void)
{
	enum { SZ = 1 << 20, DEPTH = 8 };
	struct gdx_plugin plugin;
	const ncclNet_v7_t *n;
	struct gdx_pair a, b;
	struct gdx_buf s, r;
	void *sreq[DEPTH] = {0}, *rreq[DEPTH] = {0}, *data;
	int sdone[DEPTH] = {0}, rdone[DEPTH] = {0};
	ncclResult_t res = ncclSuccess;
	int size = SZ, tag = 0, got, done_msgs = 0;
	double t0 = 0, waited;

	links_restore();
	/* Short ack timeout, so the retries run out in well under a second. */
	setenv("NCCL_GDX_TIMEOUT", "14", 1);
	gdx_plugin_load(&plugin);
	n = plugin.v7;
	ASSERT_EQ(n->init(gdx_test_logger), ncclSuccess);
	gdx_pair_connect(n, 0, 1, &a); /* over veth0/veth1 */
	gdx_pair_connect(n, 2, 3, &b); /* over veth2/veth3 */
	gdx_transfer(&a, 100000, 100000, 0, 1);
	gdx_buf_alloc(n, a.send, SZ, 0, &s);
	gdx_buf_alloc(n, a.recv, SZ, 0, &r);
	data = r.mem;
	/* A stream with DEPTH messages in flight; the sender's wire goes down
	 * after 10 of them. Runs until a call fails. */
	while (res == ncclSuccess && (t0 == 0 || gdx_now_s() - t0 < 60)) {
		for (int i = 0; i < DEPTH && res == ncclSuccess; i++) {
			int done = 0;

			if (!rreq[i])
				res = n->irecv(a.recv, 1, &data, &size, &tag, &r.mh, &rreq[i]);
			if (res == ncclSuccess && !sreq[i] && !sdone[i])
				res = n->isend(a.send, s.mem, SZ, 0, s.mh, &sreq[i]);
			if (res == ncclSuccess && sreq[i]) {
				res = n->test(sreq[i], &done, &got);
				if (done) {
					sreq[i] = NULL;
					sdone[i] = 1;
				}
			}
			/* the receive side is driven too, as NCCL's proxy drives both */
			if (res == ncclSuccess && rreq[i] && !rdone[i])
				res = n->test(rreq[i], &rdone[i], &got);
			if (sdone[i] && rdone[i]) {
				rreq[i] = NULL;
				sdone[i] = rdone[i] = 0;
				if (++done_msgs == 10) {
					link_set("veth1", "down");
					t0 = gdx_now_s();
				}
			}
		}
	}
	waited = gdx_now_s() - t0;
	printf("  after %d messages, a call failed %.3f s after veth1 went down (result %d)\n",
	       done_msgs, waited, res);
	ASSERT(t0 > 0);
	ASSERT_NE(res, ncclSuccess);
	ASSERT(waited < 30);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "port 1 is down");
	/* the comm on the other wire is untouched */
	for (int i = 0; i < 5; i++)
		gdx_transfer(&b, 1000000, 1000000, 0, (uint32_t)i);
	link_set("veth1", "up");
	gdx_port_wait_active("rxe1");
	/* later calls on the comm that failed fail too (which end saw it first
	 * depends on timing); closing both works */
	{
		void *req = NULL;
		ncclResult_t rs = n->isend(a.send, s.mem, SZ, 0, s.mh, &req);
		ncclResult_t rr = n->irecv(a.recv, 1, &data, &size, &tag, &r.mh, &req);

		ASSERT(rs != ncclSuccess || rr != ncclSuccess);
	}
	gdx_buf_free(n, a.send, &s);
	gdx_buf_free(n, a.recv, &r);
	gdx_pair_close(&a);
	gdx_pair_close(&b);
	/* a new comm over the restored wire works */
	gdx_pair_connect(n, 0, 1, &a);
	gdx_transfer(&a, 300000, 300000, 0, 9);
	gdx_pair_close(&a);
}

/* Nothing of the sender's own on the wire (it waits for a clear-to-send)
 * when its port goes down: it fails once the port stays down longer than
 * its QP retries would have lasted. */
static void test_link_down_while_waiting_for_clear_to_send(void)
{
	struct gdx_plugin plugin;
	const ncclNet_v7_t *n;
	struct gdx_pair a;
	struct gdx_buf s;
	void *sreq = NULL;
	ncclResult_t res = ncclSuccess;
	double t0, waited;

	links_restore();
	setenv("NCCL_GDX_TIMEOUT", "14", 1);
	gdx_plugin_load(&plugin);
	n = plugin.v7;
	ASSERT_EQ(n->init(gdx_test_logger), ncclSuccess);
	gdx_pair_connect(n, 0, 1, &a);
	gdx_transfer(&a, 1000, 1000, 0, 1);
	gdx_buf_alloc(n, a.send, 4096, 0, &s);
	link_set("veth1", "down");
	t0 = gdx_now_s();
	while (res == ncclSuccess && !sreq && gdx_now_s() - t0 < 30)
		res = n->isend(a.send, s.mem, 4096, 0, s.mh, &sreq);
	waited = gdx_now_s() - t0;
	printf("  the waiting sender failed %.3f s after veth1 went down (result %d)\n", waited,
	       res);
	ASSERT_EQ(res, ncclSystemError);
	ASSERT(waited < 10);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "longer than the QP retries last");
	link_set("veth1", "up");
	gdx_port_wait_active("rxe1");
	gdx_buf_free(n, a.send, &s);
	gdx_pair_close(&a);
}

GDX_TESTS_MAIN(TEST(test_link_down_during_transfers, 240),
	       TEST(test_link_down_while_waiting_for_clear_to_send, 120))
