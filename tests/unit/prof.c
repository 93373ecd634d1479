/* SPDX-License-Identifier: MIT */
/* NCCL's profiler events (gdx_prof.c) on made-up comms: what an isend's
 * pieces, a grouped receive's buffers and an irecv's buffers start, with
 * which descriptor and pluginId; their stops; the bound per request; nothing
 * at all without a callback or a phandle, and no stop for an event NCCL did
 * not take. Each test runs in a process of its own: the callback is the
 * load's. */
#include <infiniband/verbs.h>

#include <nccl/profiler_net.h>
#include "comm/gdx_comm.h"
#include "data/gdx_prof.h"

#include "gdx_test.h"

#define MAX_SEEN 64

static struct {
	int type;
	void *phandle;
	int64_t id;
	ncclProfilerNetIbDescr_v1_t d;
	void *eh; /* stop: the handle it was given */
} seen[MAX_SEEN];
static int nseen;
static int tokens[MAX_SEEN]; /* what start hands back as the event */
static int take = 1;	     /* start sets *eHandle, as a profiler listening does */

static ncclResult_t cb(void **eh, int type, void *phandle, int64_t id, void *ext)
{
	ASSERT(nseen < MAX_SEEN);
	seen[nseen].type = type;
	seen[nseen].phandle = phandle;
	seen[nseen].id = id;
	if (type == ncclProfilerNetEventStart) {
		ASSERT(ext != NULL);
		seen[nseen].d = *(ncclProfilerNetIbDescr_v1_t *)ext;
		if (take)
			*eh = &tokens[nseen];
	} else {
		ASSERT(ext == NULL);
		seen[nseen].eh = *eh;
	}
	nseen++;
	return ncclSuccess;
}

static struct ibv_qp qps[GDX_MAX_RAILS][2];
static struct gdx_qp gqps[GDX_MAX_RAILS][2];
static struct gdx_request reqs[4];
static struct gdx_recv_comm rcomm;

/* nrails rails of 2 QPs, on members 0, 1, ...; QP numbers 0x100 * rail + q */
static struct gdx_comm *fake(struct gdx_comm *c, int nrails)
{
	memset(c, 0, sizeof(*c));
	c->ch.nrails = nrails;
	c->max_reqs = 4;
	c->reqs = reqs;
	for (int r = 0; r < nrails; r++) {
		c->ch.rails[r].member = r;
		c->ch.rails[r].nqps = 2;
		c->ch.rails[r].qps = gqps[r];
		for (int q = 0; q < 2; q++) {
			qps[r][q].qp_num = (uint32_t)(0x100 * r + q);
			gqps[r][q].qp = &qps[r][q];
			gqps[r][q].wr_posted = (uint32_t)(10 * r + q + 1);
		}
	}
	memset(reqs, 0, sizeof(reqs));
	for (int i = 0; i < 4; i++)
		reqs[i].comm = c;
	return c;
}

static void check_start(int i, void *phandle, int rail, int q, int opcode, uint64_t wr_id,
			uint64_t len)
{
	ASSERT_EQ(seen[i].type, ncclProfilerNetEventStart);
	ASSERT(seen[i].phandle == phandle);
	ASSERT_EQ(seen[i].id, NCCL_PROFILER_NET_TYPE_IB | NCCL_PROFILER_NET_IB_VER);
	ASSERT_EQ(seen[i].id, 0x10001);
	ASSERT_EQ(seen[i].d.type, ncclProfileQp);
	ASSERT_EQ(seen[i].d.qp.device, rail);
	ASSERT_EQ(seen[i].d.qp.qpNum, 0x100 * rail + q);
	ASSERT_EQ(seen[i].d.qp.opcode, opcode);
	ASSERT_EQ(seen[i].d.qp.wr_id, wr_id);
	ASSERT_EQ(seen[i].d.qp.length, len);
}

static void test_isend_pieces_start_and_stop(void)
{
	struct gdx_comm c_, *c = fake(&c_, 2);
	const struct gdx_piece p[4] = {
		{0, 0, 0, 4096}, {0, 1, 4096, 4096}, {1, 0, 8192, 4096}, {1, 1, 12288, 100}};
	struct gdx_request *req = &reqs[0];
	int ph;

	gdx_prof_set(cb);
	req->state = GDX_REQ_ACTIVE;
	gdx_prof_isend(c, req, &ph, p, 4);
	ASSERT_EQ(nseen, 4);
	ASSERT_EQ(req->prof_n, 4);
	for (int k = 0; k < 4; k++)
		check_start(k, &ph, p[k].rail, p[k].q, IBV_WR_RDMA_WRITE_WITH_IMM,
			    GDX_WRID(GDX_WRID_SEND, 0, p[k].q, 10 * p[k].rail + p[k].q + 1),
			    p[k].len);
	gdx_prof_done(req);
	ASSERT_EQ(nseen, 8);
	ASSERT_EQ(req->prof_n, 0);
	for (int k = 0; k < 4; k++) {
		ASSERT_EQ(seen[4 + k].type, ncclProfilerNetEventStop);
		ASSERT(seen[4 + k].phandle == NULL);
		ASSERT_EQ(seen[4 + k].id, 0);
		ASSERT(seen[4 + k].eh == &tokens[k]);
	}
	gdx_prof_done(req); /* given back once: nothing more */
	ASSERT_EQ(nseen, 8);
}

static void test_bound_per_request(void)
{
	struct gdx_comm c_, *c = fake(&c_, 1);
	struct gdx_piece p[GDX_PROF_MAX_EVENTS + 3];
	int ph;

	for (int k = 0; k < GDX_PROF_MAX_EVENTS + 3; k++)
		p[k] = (struct gdx_piece){0, (uint8_t)(k % 2), (uint64_t)k * 128, 128};
	gdx_prof_set(cb);
	gdx_prof_isend(c, &reqs[1], &ph, p, GDX_PROF_MAX_EVENTS + 3);
	ASSERT_EQ(nseen, GDX_PROF_MAX_EVENTS);
	ASSERT_EQ(reqs[1].prof_n, GDX_PROF_MAX_EVENTS);
	gdx_prof_done(&reqs[1]);
	ASSERT_EQ(nseen, 2 * GDX_PROF_MAX_EVENTS);
}

static void test_nothing_without_callback_or_phandle(void)
{
	struct gdx_comm c_, *c = fake(&c_, 1);
	const struct gdx_piece p = {0, 0, 0, 64};
	uint64_t sizes[2] = {10, 20};
	void *none[2] = {NULL, NULL};
	int ph;

	/* no callback from init (v6-v9, or NCCL gave none): a phandle changes nothing */
	gdx_prof_set(NULL);
	ASSERT(!gdx_prof_on(&ph));
	gdx_prof_isend(c, &reqs[0], &ph, &p, 1);
	ASSERT_EQ(reqs[0].prof_n, 0);
	/* a callback, and no phandle */
	gdx_prof_set(cb);
	gdx_prof_isend(c, &reqs[0], NULL, &p, 1);
	gdx_prof_hold(&reqs[1], NULL);
	reqs[1].size = 5;
	gdx_prof_grouped(c, &reqs[1], 0, 0);
	fake(&rcomm.base, 1);
	rcomm.base.reqs[2].n = 2;
	gdx_prof_irecv(&rcomm, &rcomm.base.reqs[2], NULL, sizes);
	gdx_prof_irecv(&rcomm, &rcomm.base.reqs[2], none, sizes);
	ASSERT_EQ(nseen, 0);
	/* a later init without one keeps it: started events are stopped through it */
	gdx_prof_set(NULL);
	ASSERT(gdx_prof_on(&ph));
}

static void test_event_not_taken_is_not_stopped(void)
{
	struct gdx_comm c_, *c = fake(&c_, 1);
	const struct gdx_piece p = {0, 1, 0, 64};
	int ph;

	gdx_prof_set(cb);
	take = 0; /* NCCL with no profiler, or one that does not want net events */
	gdx_prof_isend(c, &reqs[0], &ph, &p, 1);
	ASSERT_EQ(nseen, 1);
	ASSERT_EQ(reqs[0].prof_n, 0);
	gdx_prof_done(&reqs[0]);
	ASSERT_EQ(nseen, 1);
}

static void test_grouped_isend_starts_when_its_bytes_go(void)
{
	struct gdx_comm c_, *c = fake(&c_, 2);
	int ph;

	gdx_prof_set(cb);
	gdx_prof_hold(&reqs[3], &ph);
	ASSERT_EQ(nseen, 0);
	reqs[3].size = 777;
	gdx_prof_grouped(c, &reqs[3], 1, 1);
	ASSERT_EQ(nseen, 1);
	check_start(0, &ph, 1, 1, IBV_WR_RDMA_WRITE, GDX_WRID(GDX_WRID_SEND, 0, 1, 12), 777);
}

static void test_irecv_one_per_buffer_on_the_control_rail(void)
{
	struct gdx_comm *c = fake(&rcomm.base, 2);
	struct gdx_request *req = &reqs[2];
	uint64_t sizes[3] = {1000, 2000, 3000};
	int a, b;
	void *ph[3] = {&a, NULL, &b};

	gdx_prof_set(cb);
	c->ch.run[0].state = GDX_RAIL_DOWN; /* the clear-to-sends go on rail 1 */
	req->n = 3;
	req->seq = 41;
	gdx_prof_irecv(&rcomm, req, ph, sizes);
	ASSERT_EQ(nseen, 2);
	check_start(0, &a, 1, 0, IBV_WR_RDMA_WRITE, 41, 1000);
	check_start(1, &b, 1, 0, IBV_WR_RDMA_WRITE, 41, 3000);
	ASSERT_EQ(req->prof_n, 2);
}

static void test_comm_close_stops_what_is_left(void)
{
	struct gdx_comm c_, *c = fake(&c_, 1);
	const struct gdx_piece p = {0, 0, 0, 64};
	int ph;

	gdx_prof_set(cb);
	reqs[0].state = GDX_REQ_ACTIVE;
	reqs[1].state = GDX_REQ_ACTIVE;
	gdx_prof_isend(c, &reqs[0], &ph, &p, 1);
	gdx_prof_isend(c, &reqs[1], &ph, &p, 1);
	gdx_prof_comm_fini(c);
	ASSERT_EQ(nseen, 4);
	ASSERT_EQ(seen[2].type, ncclProfilerNetEventStop);
	ASSERT_EQ(seen[3].type, ncclProfilerNetEventStop);
	ASSERT_EQ(reqs[0].prof_n + reqs[1].prof_n, 0);
}

GDX_TESTS_MAIN(TEST(test_isend_pieces_start_and_stop, 10), TEST(test_bound_per_request, 10),
	       TEST(test_nothing_without_callback_or_phandle, 10),
	       TEST(test_event_not_taken_is_not_stopped, 10),
	       TEST(test_grouped_isend_starts_when_its_bytes_go, 10),
	       TEST(test_irecv_one_per_buffer_on_the_control_rail, 10),
	       TEST(test_comm_close_stops_what_is_left, 10))
