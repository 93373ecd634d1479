/* SPDX-License-Identifier: MIT */
/*
 * Failover over three rails, with scripted verbs (gdx_fake_nic.h): a piece
 * that a failed rail leaves undelivered is posted again whole on one (rail,
 * QP), or not at all until there is room for all of it. A piece of several
 * segments (adaptive routing's bulk WRITE then zero-byte WRITE_WITH_IMM;
 * piece 0 of a chunked message, its size record first) split over two
 * rails lets its immediate land before its bytes or its record: the
 * receive completes without them.
 *
 * The script, after 0.4.0's defect: a message striped over rails 0, 1, 2;
 * rail F fails before anything of it is carried out; the two rails left
 * have room for one more WR each when the receiver's counts come, so the
 * piece fits on neither; the rail a re-send began on (or, when none began,
 * rail 2) fails too; then the last one gets its room back. Every WR then
 * goes one at a time and the receive is tested after each: when test says
 * done, every byte and the size must be right. And over everything the NIC
 * carried out: each piece's immediate landed on the (rail, QP) that carried
 * its bytes, after them.
 */
#include <endian.h>
#include <stdlib.h>

#include "data/gdx_cq.h"
#include "rail/gdx_post.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define MSG (3 * 4096)

static void poll_both(struct fake_pair *p)
{
	for (int i = 0; i < 2 * GDX_PORT_CHECK_POLLS; i++) {
		gdx_cq_poll(p->s.c);
		gdx_cq_poll(p->r.c);
	}
}

static void run_end(struct fake_end *e)
{
	for (int i = 0; i < e->c->ch.nrails * e->c->ch.qps_per_rail; i++)
		fake_run(&e->qp[i], FAKE_SQ);
}

/* Posts zero-byte control writes on the sender's rail until it has room
 * for exactly one more WR: nothing the NIC carries out yet. */
static unsigned fill_to_one(struct fake_pair *p, int rail)
{
	struct gdx_comm *c = p->s.c;
	struct gdx_qp *q = &c->ch.rails[rail].qps[0];
	unsigned n = 0;

	while (gdx_qp_room(&c->ch.rails[rail], q, 2)) {
		ASSERT_EQ(gdx_post_ctrl_write(&c->ch, rail, 0, NULL, 0, c->remote_ctrl, false), 0);
		n++;
	}
	ASSERT(gdx_qp_room(&c->ch.rails[rail], q, 1));
	return n;
}

/* Each delivered immediate of a chunked piece of message 0, and the data
 * bytes delivered on its QP since that QP's previous immediate: they must
 * be the piece's, and the pieces together the whole message. */
static void check_pieces_whole(struct fake_pair *p, const char *rbuf)
{
	char covered[MSG] = {0};
	int pieces = 0;

	for (int i = 0; i < p->o.nrails * p->o.nqps; i++) {
		const struct fake_qp *q = &p->s.qp[i];
		uint64_t lo = UINT64_MAX, hi = 0;

		for (unsigned k = 0; k < q->nlog; k++) {
			const struct fake_wr *w = &q->log[k];
			struct gdx_imm im;

			if (!w->delivered)
				continue;
			if (w->len && w->raddr >= (uintptr_t)rbuf &&
			    w->raddr < (uintptr_t)rbuf + MSG) {
				lo = w->raddr < lo ? w->raddr : lo;
				hi = w->raddr + w->len > hi ? w->raddr + w->len : hi;
			}
			if (w->opcode != IBV_WR_RDMA_WRITE_WITH_IMM ||
			    gdx_imm_decode(w->imm, &im) || !im.chunked)
				continue;
			if (lo >= hi)
				gdx_test_fail(
					__FILE__, __LINE__,
					"piece %u of message %u: its immediate landed on rail "
					"%d QP %d with none of its bytes before it there",
					im.piece, im.seq, q->rail, q->q);
			printf("  piece %u: its immediate on rail %d QP %d after bytes [%llu, %llu) "
			       "there\n",
			       im.piece, q->rail, q->q, (unsigned long long)(lo - (uintptr_t)rbuf),
			       (unsigned long long)(hi - (uintptr_t)rbuf));
			memset(covered + (lo - (uintptr_t)rbuf), 1, hi - lo);
			lo = UINT64_MAX;
			hi = 0;
			pieces++;
		}
	}
	ASSERT_EQ(pieces, 3);
	for (int i = 0; i < MSG; i++)
		if (!covered[i])
			gdx_test_fail(__FILE__, __LINE__,
				      "byte %d landed after no immediate of its piece", i);
}

/* The sender's rail that the re-send of rail `failed` went to, if any
 * began: it holds more than the fill left there. */
static int resend_began_on(struct fake_pair *p, int failed, const unsigned *filled)
{
	for (int r = 0; r < 3; r++)
		if (r != failed && fake_pending(fake_qp_of(&p->s, r, 0)) > filled[r])
			return r;
	return -1;
}

static void scenario(int first)
{
	struct fake_pair p;
	struct gdx_mr smr, rmr;
	struct gdx_request *s, *r;
	char *sbuf = malloc(MSG), *rbuf = calloc(1, MSG);
	unsigned filled[3] = {0};
	int size = -1, second, last, steps = 0;

	ASSERT(sbuf && rbuf);
	for (int i = 0; i < MSG; i++)
		sbuf[i] = (char)(i * 7 + 1);
	fake_pair_make(&p, &(struct fake_opts){.nrails = 3, .nqps = 1, .ar = true});
	fake_mr(&p, sbuf, MSG, &smr);
	fake_mr(&p, rbuf, MSG, &rmr);
	r = fake_irecv(&p, rbuf, MSG, 7, &rmr);
	ASSERT(r != NULL);
	run_end(&p.r); /* the clear-to-send lands in the sender's FIFO */
	s = fake_isend(&p, sbuf, MSG, 7, &smr);
	ASSERT(s != NULL);
	for (int rail = 0; rail < 3; rail++)
		ASSERT(fake_pending(fake_qp_of(&p.s, rail, 0)) >= 2); /* a piece on each */

	/* rail `first` fails before anything of it is carried out; the others
	 * deliver their pieces and the sender's DOWN note */
	fake_fail(fake_qp_of(&p.s, first, 0), IBV_WC_RETRY_EXC_ERR);
	ASSERT_EQ(fake_test(s, NULL), 0);
	for (int rail = 0; rail < 3; rail++)
		if (rail != first)
			fake_run(fake_qp_of(&p.s, rail, 0), FAKE_SQ);
	/* the receiver counts what it took on the failed rail and notes it */
	poll_both(&p);
	ASSERT_EQ(p.r.c->ch.run[first].state, GDX_RAIL_DOWN);
	{
		/* the rail's QPs, one line each, as it is taken out (NCCL #2181) */
		char line[256];

		snprintf(line, sizeof(line),
			 "fake0+fake1+fake2 rail %d (fake%d/1), peer the other end: qp 0x%x ERR, "
			 "last failed completion transport retry counter exceeded (status 12); no "
			 "NIC counters (its rail taken out)",
			 first, first, fake_qp_of(&p.s, first, 0)->qp.qp_num);
		ASSERT_STR_CONTAINS(gdx_test_infos(), line);
	}
	/* room for one WR on each rail left, then the counts land */
	for (int rail = 0; rail < 3; rail++)
		if (rail != first)
			filled[rail] = fill_to_one(&p, rail);
	run_end(&p.r);
	poll_both(&p);
	/* the rail a re-send began on fails too (0.4.0 had posted part of the
	 * piece there); else rail 2 */
	second = resend_began_on(&p, first, filled);
	printf("  rail %d failed first; the re-send began on %s%d\n", first,
	       second < 0 ? "no rail: it waits for room for the whole piece; failing rail "
			  : "rail ",
	       second < 0 ? 2 : second);
	if (second < 0)
		second = first == 2 ? 1 : 2;
	last = 3 - first - second;
	fake_fail(fake_qp_of(&p.s, second, 0), IBV_WC_RETRY_EXC_ERR);
	/* everything goes one WR at a time now, the receive tested after each */
	for (;;) {
		bool any = false;

		for (int i = 0; i < 3; i++) {
			any |= fake_run(&p.s.qp[i], 1) > 0;
			any |= fake_run(&p.r.qp[i], 1) > 0;
			gdx_cq_poll(p.s.c);
			steps++;
			if (fake_test(r, &size))
				goto done;
		}
		if (!any)
			poll_both(&p);
		ASSERT(steps < 100000);
	}
done:
	printf("  receive done after %d steps, by rail %d alone at the end: %d bytes reported\n",
	       steps, last, size);
	ASSERT_EQ(size, MSG);
	for (int i = 0; i < MSG; i++)
		if (rbuf[i] != sbuf[i])
			gdx_test_fail(__FILE__, __LINE__,
				      "byte %d of the receive is 0x%02x when test says done, the "
				      "sender's is 0x%02x",
				      i, (unsigned char)rbuf[i], (unsigned char)sbuf[i]);
	/* the send completes too, and nothing is left */
	for (int i = 0; i < 100 && !fake_test(s, NULL); i++) {
		fake_run_all(&p);
		poll_both(&p);
	}
	ASSERT_EQ(p.r.c->stale_imms, 0);
	check_pieces_whole(&p, rbuf);
	fake_pair_free(&p);
	free(sbuf);
	free(rbuf);
}

static void setup(void)
{
	setenv("NCCL_GDX_FAILOVER", "1", 1);
	setenv("NCCL_GDX_ADAPTIVE_ROUTING", "1", 1);
	setenv("NCCL_GDX_AR_THRESHOLD", "0", 1);
	setenv("NCCL_GDX_STRIPE_WEIGHTED", "0", 1);
	setenv("NCCL_GDX_STRIPE_MIN", "4096", 1);
	setenv("NCCL_GDX_RECOVERY_MAX_MS", "0", 1); /* no restore: nobody answers it */
	fake_init();
}

/* Piece 1 (bulk WRITE, zero-byte WRITE_WITH_IMM) on the rail that fails. */
static void test_piece_resent_whole_bulk_then_immediate(void)
{
	setup();
	scenario(1);
}

/* Piece 0 (size record, bulk, immediate) on the rail that fails. */
static void test_piece_resent_whole_with_its_size_record(void)
{
	setup();
	scenario(0);
}

GDX_TESTS_MAIN(TEST(test_piece_resent_whole_bulk_then_immediate, 60),
	       TEST(test_piece_resent_whole_with_its_size_record, 60))
