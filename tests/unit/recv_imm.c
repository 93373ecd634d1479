/* SPDX-License-Identifier: MIT */
/*
 * A one-rail comm's completions take a short path (gdx_cq.c: a small single
 * receive's immediate on the receiver, a signaled send on the sender) that
 * stops at the first completion it is not sure of and leaves the rest to
 * the full one. With scripted verbs (gdx_fake_nic.h), what a broken or
 * hostile sender puts on the wire (an immediate twice, one larger than its
 * receive, one for no receive, a single receive ended as a group, one of an
 * earlier generation of the QPs) and batches that mix the common
 * completions with others: each is taken as the full path takes it, and
 * every byte of the messages around it arrives.
 */
#include <endian.h>
#include <stdlib.h>

#include "data/gdx_cq.h"
#include "data/gdx_p2p.h"
#include "wire/gdx_wire.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define BUF (256u << 10)

struct rig {
	struct fake_pair p;
	struct gdx_mr smr, rmr;
	char *sbuf, *rbuf;
};

static void rig_make(struct rig *g, bool ar)
{
	g->sbuf = malloc(4 * BUF);
	g->rbuf = calloc(4, BUF);
	ASSERT(g->sbuf && g->rbuf);
	for (size_t i = 0; i < 4 * BUF; i++)
		g->sbuf[i] = (char)(i * 7 + 5);
	fake_init();
	fake_pair_make(&g->p, &(struct fake_opts){.nrails = 1, .nqps = 1, .ar = ar});
	fake_mr(&g->p, g->sbuf, 4 * BUF, &g->smr);
	fake_mr(&g->p, g->rbuf, 4 * BUF, &g->rmr);
}

static void rig_free(struct rig *g)
{
	fake_pair_free(&g->p);
	free(g->sbuf);
	free(g->rbuf);
}

/* The sender's QP carries a zero-byte WRITE_WITH_IMM of imm that its comm
 * never posted, as a broken or hostile peer would send it. */
static void peer_sends_imm(struct rig *g, uint32_t imm)
{
	struct fake_qp *q = fake_qp_of(&g->p.s, 0, 0);
	struct ibv_send_wr wr = {.opcode = IBV_WR_RDMA_WRITE_WITH_IMM, .imm_data = htobe32(imm)};
	struct ibv_send_wr *bad;

	ASSERT_EQ(ibv_post_send(&q->qp, &wr, &bad), 0);
	ASSERT_EQ(fake_run(q, 1), 1);
}

/* Buffer b's receive of size bytes, then the sender's message of len into
 * it, sent and carried out: the request of each. */
static struct gdx_request *message(struct rig *g, int b, uint64_t size, uint64_t len,
				   struct gdx_request **send)
{
	struct gdx_request *r = fake_irecv(&g->p, g->rbuf + (size_t)b * BUF, size, 0, &g->rmr);

	ASSERT(r != NULL);
	fake_run_all(&g->p); /* its clear-to-send lands */
	*send = fake_isend(&g->p, g->sbuf + (size_t)b * BUF, len, 0, &g->smr);
	ASSERT(*send != NULL);
	return r;
}

static void received(struct rig *g, struct gdx_request *r, int b, uint64_t len)
{
	int size = -1, polls;

	for (polls = 0; !fake_test(r, &size); polls++) {
		fake_run_all(&g->p);
		ASSERT(polls < 100);
	}
	ASSERT_EQ(size, (int)len);
	for (uint64_t i = 0; i < len; i++)
		if (g->rbuf[(size_t)b * BUF + i] != g->sbuf[(size_t)b * BUF + i])
			gdx_test_fail(__FILE__, __LINE__, "buffer %d: byte %llu is wrong", b,
				      (unsigned long long)i);
}

static void sent(struct rig *g, struct gdx_request *s)
{
	for (int polls = 0; !fake_test(s, NULL); polls++) {
		fake_run_all(&g->p);
		ASSERT(polls < 100);
	}
}

/* What the receive's test says once the hostile immediate is in the CQ. */
static int test_result(struct gdx_request *r)
{
	int done = 0, sizes[GDX_MAX_RECVS] = {0};

	return gdx_test(r, &done, sizes);
}

static void test_an_immediate_twice_counts_once(void)
{
	struct rig g;
	struct gdx_request *r, *s;

	rig_make(&g, false);
	r = fake_irecv(&g.p, g.rbuf, 64, 0, &g.rmr);
	ASSERT(r != NULL);
	/* both in one poll: the second finds the slot free, the receive done */
	peer_sends_imm(&g, gdx_imm_small(0, 8));
	peer_sends_imm(&g, gdx_imm_small(0, 8));
	ASSERT_EQ(fake_test(r, NULL), 1);
	printf("  two copies of one immediate: the receive done once, %llu dropped\n",
	       (unsigned long long)g.p.r.c->stale_imms);
	ASSERT_EQ(g.p.r.c->stale_imms, 1);
	ASSERT_EQ(g.p.r.rc->recvs_active, 0);
	/* the comm carries on: the sender's own message for receive 0 is one
	 * more for no receive in flight, and receive 1 gets its message */
	fake_run_all(&g.p);
	s = fake_isend(&g.p, g.sbuf, 8, 0, &g.smr);
	ASSERT(s != NULL);
	fake_run_all(&g.p);
	sent(&g, s);
	r = message(&g, 1, 4096, 4000, &s);
	received(&g, r, 1, 4000);
	sent(&g, s);
	ASSERT_EQ(g.p.r.c->stale_imms, 2);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	rig_free(&g);
}

static void test_an_immediate_for_no_receive_is_dropped(void)
{
	struct rig g;
	struct gdx_request *r, *s;

	rig_make(&g, false);
	r = fake_irecv(&g.p, g.rbuf, 4096, 0, &g.rmr);
	ASSERT(r != NULL);
	peer_sends_imm(&g, gdx_imm_small(5, 8)); /* slot 5: nothing posted */
	ASSERT_EQ(fake_test(r, NULL), 0);
	ASSERT_EQ(g.p.r.c->stale_imms, 1);
	fake_run_all(&g.p);
	s = fake_isend(&g.p, g.sbuf, 1000, 0, &g.smr);
	ASSERT(s != NULL);
	received(&g, r, 0, 1000);
	sent(&g, s);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	rig_free(&g);
}

static void test_an_immediate_larger_than_its_receive_fails_the_comm(void)
{
	struct rig g;
	struct gdx_request *r;
	int ret;

	rig_make(&g, false);
	r = fake_irecv(&g.p, g.rbuf, 64, 0, &g.rmr);
	ASSERT(r != NULL);
	peer_sends_imm(&g, gdx_imm_small(0, 4096));
	ret = test_result(r);
	printf("  4096 bytes said into a receive of 64: test returns %d; %s", ret,
	       gdx_test_warnings());
	ASSERT_EQ(ret, -EPROTO);
	ASSERT_EQ(g.p.r.c->err, -EPROTO);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "sent 4096 bytes into a receive of 64");
	rig_free(&g);
}

static void test_a_single_receive_ended_as_a_group_fails_the_comm(void)
{
	struct rig g;
	struct gdx_request *r;

	rig_make(&g, false);
	r = fake_irecv(&g.p, g.rbuf, 64, 0, &g.rmr);
	ASSERT(r != NULL);
	peer_sends_imm(&g, gdx_imm_chunk(0, 0, 1, GDX_IMM_F_GROUP));
	ASSERT_EQ(test_result(r), -EPROTO);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "a single receive ended as a group");
	rig_free(&g);
}

/* A completion of the QPs before a reset (another generation in its
 * wr_id) is dropped, even one that would complete a receive in flight. */
static void test_an_earlier_generation_completes_nothing(void)
{
	struct rig g;
	struct gdx_request *r, *s;
	struct fake_cq *cq = &g.p.r.cq[0];
	uint16_t gen;

	rig_make(&g, false);
	gen = gdx_rail_gen(&g.p.r.c->ch.rails[0]);
	r = fake_irecv(&g.p, g.rbuf, 4096, 0, &g.rmr);
	ASSERT(r != NULL);
	cq->wc[cq->tail++ % FAKE_CQ] = (struct ibv_wc){
		.wr_id = GDX_WRID(GDX_WRID_RECV, (uint16_t)(gen + 1), 0, 0),
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
		.wc_flags = IBV_WC_WITH_IMM,
		.imm_data = htobe32(gdx_imm_small(0, 8)),
	};
	ASSERT_EQ(fake_test(r, NULL), 0);
	fake_run_all(&g.p);
	s = fake_isend(&g.p, g.sbuf, 3000, 0, &g.smr);
	ASSERT(s != NULL);
	received(&g, r, 0, 3000);
	sent(&g, s);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	rig_free(&g);
}

/* One poll finds a small message's immediate, then a chunked one's (adaptive
 * routing: the bytes, then a zero-byte immediate), then a small one's: the
 * short path takes the first, the full path the rest. Every receive
 * completes once, with its bytes; the sender's signaled completions come
 * back the same way, mixed. */
static void test_a_mixed_batch_is_taken_whole(void)
{
	const uint64_t len[3] = {100, BUF, 200};
	struct rig g;
	struct gdx_request *r[3], *s[3];

	rig_make(&g, true);
	for (int b = 0; b < 3; b++) {
		r[b] = fake_irecv(&g.p, g.rbuf + (size_t)b * BUF, BUF, 0, &g.rmr);
		ASSERT(r[b] != NULL);
	}
	fake_run_all(&g.p);
	for (int b = 0; b < 3; b++) {
		s[b] = fake_isend(&g.p, g.sbuf + (size_t)b * BUF, len[b], 0, &g.smr);
		ASSERT(s[b] != NULL);
	}
	fake_run_all(&g.p);
	ASSERT_EQ(g.p.r.cq[0].tail - g.p.r.cq[0].head, 3u); /* one poll takes all three */
	received(&g, r[2], 2, len[2]);
	received(&g, r[0], 0, len[0]);
	received(&g, r[1], 1, len[1]);
	for (int b = 2; b >= 0; b--)
		sent(&g, s[b]);
	ASSERT_EQ(g.p.r.c->stale_imms, 0);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	rig_free(&g);
}

/* The sender's short path stops at a failed completion: the full path
 * names it and fails the comm (one rail: nowhere to go). */
static void test_a_failed_send_completion_fails_the_comm(void)
{
	struct rig g;
	struct gdx_request *r, *s;
	int done = 0, ret;

	rig_make(&g, false);
	r = message(&g, 0, BUF, BUF, &s);
	fake_fail(fake_qp_of(&g.p.s, 0, 0), IBV_WC_RETRY_EXC_ERR);
	ret = gdx_test(s, &done, NULL);
	printf("  a send completion failed: test returns %d\n", ret);
	ASSERT(ret < 0);
	ASSERT(!done);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "completion failed");
	(void)r;
	rig_free(&g);
}

GDX_TESTS_MAIN(TEST(test_an_immediate_twice_counts_once, 30),
	       TEST(test_an_immediate_for_no_receive_is_dropped, 30),
	       TEST(test_an_immediate_larger_than_its_receive_fails_the_comm, 30),
	       TEST(test_a_single_receive_ended_as_a_group_fails_the_comm, 30),
	       TEST(test_an_earlier_generation_completes_nothing, 30),
	       TEST(test_a_mixed_batch_is_taken_whole, 30),
	       TEST(test_a_failed_send_completion_fails_the_comm, 30))
