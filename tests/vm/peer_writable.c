/* SPDX-License-Identifier: MIT */
/*
 * What a connected peer can write into a comm, over real rxe devices: the
 * test plays the sender turned hostile, posting its own RDMA WRITEs with
 * the key and address the handshake gave it. rxe lands a write only inside
 * the registration that key names, so this shows the plugin registered as
 * remote-writable only what that peer may say (gdx_ctrl_span): a receive
 * comm's size records take the write, its clear-to-send offsets and its
 * staging do not (a remote access error, nothing changed). 0.4.1 registered
 * the whole control region, staged clear-to-sends included, and trusted
 * the posted sizes read back from there (issue 47, row 2). Runs in the VM.
 */
#include <endian.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#include "comm/gdx_comm.h"

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_test.h"

#define HOSTILE_WRID 0x686f7374696c65ULL /* "hostile" */

/* One signaled inline WRITE of 8 bytes on the sender's first QP into the
 * receiver's control region at offset off; the status of its completion,
 * read straight from the CQ (nothing else runs on it meanwhile). */
static enum ibv_wc_status hostile_write(struct gdx_comm *sc, size_t off, uint64_t value)
{
	struct gdx_rail *r = &sc->ch.rails[0];
	struct ibv_sge sge = {.addr = (uintptr_t)&value, .length = sizeof(value)};
	struct ibv_send_wr wr = {.wr_id = HOSTILE_WRID,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE},
			   *bad;
	double start = gdx_now_s();

	wr.wr.rdma.remote_addr = sc->remote_ctrl + off;
	wr.wr.rdma.rkey = sc->ch.ctrl_rkey[0];
	ASSERT_EQ(ibv_post_send(r->qps[0].qp, &wr, &bad), 0);
	while (gdx_now_s() - start < 30) {
		struct ibv_wc wc;

		if (ibv_poll_cq(r->cq, 1, &wc) == 1 && wc.wr_id == HOSTILE_WRID)
			return wc.status;
	}
	gdx_test_fail(__FILE__, __LINE__, "the hostile write never completed");
	return IBV_WC_GENERAL_ERR;
}

static void test_a_peer_writes_only_what_it_may_say(void)
{
	struct gdx_drv d_, *d = &d_;
	struct gdx_dpair p;
	struct gdx_comm *sc, *rc;
	struct gdx_ctrl before;
	struct gdx_stage *staged = malloc(sizeof(*staged));
	static char rbuf[2][4096];
	void *data[2] = {rbuf[0], rbuf[1]}, *mh, *req = NULL;
	size_t sizes[2] = {4096, 4096};
	int tags[2] = {1, 2};
	void *mhs[2];
	enum ibv_wc_status st;
	size_t rec =
		offsetof(struct gdx_ctrl, sizes) +
		((GDX_MAX_REQUESTS - 1) * GDX_MAX_RECVS + GDX_MAX_RECVS - 2) * sizeof(uint32_t);

	ASSERT(staged != NULL);
	gdx_drv_load(d, 10);
	gdx_drv_pair(d, 0, 1, &p);
	sc = p.s;
	rc = p.r;
	gdx_drv_transfer(d, &p, 4096, 7, 0); /* the pair works */
	gdx_drv_reg(d, p.r, rbuf, sizeof(rbuf), &mh);
	mhs[0] = mhs[1] = mh;
	/* a grouped receive staged: its clear-to-sends hold its posted sizes */
	ASSERT_EQ(gdx_drv_irecv(d, p.r, 2, data, sizes, tags, mhs, &req), ncclSuccess);
	ASSERT(req != NULL);
	memcpy(&before, rc->ctrl, sizeof(before));
	memcpy(staged, rc->stage, sizeof(*staged));

	/* what the sender may say: a slot's size record (an unused one) */
	st = hostile_write(sc, rec, 0x1122334455667788ULL);
	printf("  a write into a size record: %s\n", ibv_wc_status_str(st));
	ASSERT_EQ(st, IBV_WC_SUCCESS);
	ASSERT_EQ(memcmp((char *)rc->ctrl + rec, &(uint64_t){0x1122334455667788ULL}, 8), 0);
	memcpy((char *)&before + rec, (char *)rc->ctrl + rec, 8);

	/* what it may not: the posted size of the staged grouped receive */
	st = hostile_write(sc,
			   offsetof(struct gdx_ctrl, fifo) +
				   GDX_FIFO_INDEX(1, 0) * sizeof(struct gdx_cts) +
				   offsetof(struct gdx_cts, size),
			   htole64(0x7ffff000));
	printf("  a write into the receiver's clear-to-send offsets: %s\n", ibv_wc_status_str(st));
	ASSERT_EQ(st, IBV_WC_REM_ACCESS_ERR);
	ASSERT_EQ(memcmp(&before, rc->ctrl, sizeof(before)), 0);
	ASSERT_EQ(memcmp(staged, rc->stage, sizeof(*staged)), 0);
	ASSERT_EQ(le64toh(rc->stage->fifo[GDX_FIFO_INDEX(1, 0)].size), 4096);

	/* the sender's QP is in error now: the comms close all the same */
	gdx_drv_unpair(d, &p);
	free(staged);
}

GDX_TESTS_MAIN(TEST(test_a_peer_writes_only_what_it_may_say, 120))
