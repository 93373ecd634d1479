/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's ordering on scripted verbs (gdx_fake_nic.h): the test
 * decides when each QP's work requests are carried out, in any order across
 * QPs, and the plugin's engine must still never let a signal's atomic reach
 * the target before the puts it covers (a strong signal: every earlier put
 * and signal of its context to that peer, and its own; a weak one: its
 * own), on every rail and QP; never complete a request while the NIC still
 * reads its source; hold the doorbell on the aggregate hint without
 * changing the order; keep requests past its work-request pool in order;
 * and on a rail that fails either carry on over the others (failover) or
 * report the failure (queryLastError), never losing it.
 */
#include <stdlib.h>

#include <nccl/rma.h>
#include "rma/gdx_rma_post.h"
#include "rma/gdx_rma_progress.h"

#include "gdx_fake_nic.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define DATA (4u << 20)
#define SIGS 4096

struct rig {
	struct fake_rma f;
	char *mem[2], *sig[2];
	struct fake_window data, sigw;
};

static void rig_make(struct rig *g, int nrails, int nqps)
{
	struct fake_opts o = {.nrails = nrails, .nqps = nqps};

	fake_init();
	fake_rma_make(&g->f, &o);
	for (int i = 0; i < 2; i++) {
		g->mem[i] = calloc(1, DATA);
		g->sig[i] = calloc(1, SIGS);
		ASSERT(g->mem[i] && g->sig[i]);
	}
	fake_rma_window(&g->f, g->mem[0], g->mem[1], DATA, &g->data);
	fake_rma_window(&g->f, g->sig[0], g->sig[1], SIGS, &g->sigw);
}

static void rig_free(struct rig *g)
{
	fake_rma_free(&g->f);
	for (int i = 0; i < 2; i++) {
		free(g->mem[i]);
		free(g->sig[i]);
	}
}

static struct gdx_rma_ctx *X(struct rig *g)
{
	return &g->f.r[0].x;
}

/* Rank 0 puts [off, +len) of its buffer to the same place of rank 1's,
 * with a signal at sig_off when signal (strong or not). */
static struct gdx_rma_req *put(struct rig *g, uint64_t off, uint64_t len, int signal,
			       uint64_t sig_off, bool strong, bool hold)
{
	struct gdx_rma_req *r = NULL;

	if (signal)
		ASSERT_EQ(gdx_rma_iput_signal(X(g), 0, off, len ? &g->data.mh[0] : NULL, len, off,
					      len ? &g->data.mh[0] : NULL, 1, sig_off,
					      &g->sigw.mh[0], 0, NCCL_NET_SIGNAL_OP_INC, strong,
					      hold, &r),
			  0);
	else
		ASSERT_EQ(gdx_rma_iput(X(g), 0, off, &g->data.mh[0], len, off, &g->data.mh[0], 1,
				       hold, &r),
			  0);
	return r;
}

static uint64_t sigword(struct rig *g, uint64_t off)
{
	return *(uint64_t *)(g->sig[1] + off);
}

static int test_once(struct gdx_rma_req *r)
{
	int done = 0;

	ASSERT_EQ(gdx_rma_test(r, &done), 0);
	return done;
}

static void drain(struct rig *g, struct gdx_rma_req *r)
{
	for (int i = 0; i < 1000; i++) {
		fake_rma_run_all(&g->f);
		if (test_once(r))
			return;
	}
	gdx_test_fail(__FILE__, __LINE__, "request %p never completed", (void *)r);
}

/* A striped put with a strong signal: the atomic waits for the part on
 * the other rail, then goes behind the last part, on its QP. Both ways. */
static void test_strong_signal_waits_for_the_other_rail(void)
{
	for (int first = 0; first < 2; first++) {
		struct rig g;
		struct fake_qp *q[2];
		struct gdx_rma_req *r;
		int last = 1 - first;

		rig_make(&g, 2, 1);
		q[0] = fake_rma_qp(&g.f, 0, 0, 0);
		q[1] = fake_rma_qp(&g.f, 0, 1, 0);
		gdx_fill(g.mem[0], 131072, 7);
		r = put(&g, 0, 131072, 1, 0, true, false);
		ASSERT_EQ(fake_pending(q[0]), 1);
		ASSERT_EQ(fake_pending(q[1]), 1); /* a part each, no atomic yet */
		ASSERT_EQ(test_once(r), 0);
		ASSERT_EQ(fake_pending(q[0]) + fake_pending(q[1]), 2);
		ASSERT_EQ(fake_run(q[first], 1), 1);
		ASSERT_EQ(sigword(&g, 0), 0);
		ASSERT_EQ(test_once(r), 0); /* takes the completion: the atomic is made */
		ASSERT_EQ(fake_pending(q[first]), 0);
		ASSERT_EQ(fake_pending(q[last]), 2); /* behind the last part */
		ASSERT_EQ(fake_run(q[last], 1), 1);
		ASSERT_EQ(sigword(&g, 0), 0);
		ASSERT_EQ(fake_run(q[last], 1), 1);
		ASSERT_EQ(sigword(&g, 0), 1);
		ASSERT_EQ(gdx_check(g.mem[1], 131072, 7), -1);
		ASSERT_EQ(q[last]->log[q[last]->nlog - 1].opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
		drain(&g, r);
		rig_free(&g);
	}
}

/* With failover the atomic waits for every part but the home QP's, and
 * goes there: a failure of another rail never holds a signal. */
static void test_failover_signals_on_the_home_rail(void)
{
	struct rig g;
	struct fake_qp *q0, *q1;
	struct gdx_rma_req *r;

	setenv("NCCL_GDX_FAILOVER", "1", 1);
	rig_make(&g, 2, 1);
	q0 = fake_rma_qp(&g.f, 0, 0, 0);
	q1 = fake_rma_qp(&g.f, 0, 1, 0);
	r = put(&g, 0, 131072, 1, 0, false, false);
	ASSERT_EQ(fake_run(q0, 1), 1); /* the home part first */
	ASSERT_EQ(test_once(r), 0);
	ASSERT_EQ(fake_pending(q0) + fake_pending(q1), 1); /* not behind q1's part */
	ASSERT_EQ(fake_run(q1, 1), 1);
	ASSERT_EQ(test_once(r), 0);
	ASSERT_EQ(fake_pending(q0), 1);
	ASSERT_EQ(q0->sq[q0->sq_head % FAKE_SQ].opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
	drain(&g, r);
	ASSERT_EQ(sigword(&g, 0), 1);
	rig_free(&g);
	unsetenv("NCCL_GDX_FAILOVER");
}

/* Weak covers its own put only; a strong signal alone covers what came
 * before, puts and signals, on every rail. */
static void test_weak_and_strong_cover_what_they_say(void)
{
	struct rig g;
	struct fake_qp *q0, *q1;
	struct gdx_rma_req *a, *b, *c;

	rig_make(&g, 2, 1);
	q0 = fake_rma_qp(&g.f, 0, 0, 0);
	q1 = fake_rma_qp(&g.f, 0, 1, 0);
	gdx_fill(g.mem[0], 200000, 1);
	a = put(&g, 0, 131072, 0, 0, false, false);  /* striped */
	b = put(&g, 131072, 64, 1, 8, false, false); /* weak, small: home QP */
	ASSERT_EQ(fake_pending(q0), 3);		     /* a's part, b's put, b's atomic */
	ASSERT_EQ(fake_pending(q1), 1);
	c = put(&g, 0, 0, 1, 16, true, false); /* strong, alone */
	ASSERT_EQ(fake_pending(q0) + fake_pending(q1), 4);
	ASSERT_EQ(fake_run(q0, 3), 3); /* b signaled: its own put is there */
	ASSERT_EQ(sigword(&g, 8), 1);
	ASSERT(!memcmp(g.mem[1] + 131072, g.mem[0] + 131072, 64));
	gdx_rma_progress(X(&g), 0);
	/* c covers a's part still on q1: it goes behind it there */
	ASSERT_EQ(fake_pending(q0), 0);
	ASSERT_EQ(fake_pending(q1), 2);
	ASSERT_EQ(sigword(&g, 16), 0);
	ASSERT_EQ(fake_run(q1, 2), 2);
	ASSERT_EQ(sigword(&g, 16), 1);
	ASSERT(!memcmp(g.mem[1], g.mem[0], 131072 + 64));
	drain(&g, a);
	drain(&g, b);
	drain(&g, c);
	rig_free(&g);
}

/* Random work over 3 rails of 2 QPs (puts from 4 KiB on striped), carried
 * out in a random order across QPs, one of them held back at a time: whenever a signal word
 * changes, what that signal covers is in place byte for byte; a source refilled as soon as test
 * says done never reaches the target; every signal is added once. */
#define OPS  400
#define SLOT 10240
static void random_order(bool failover)
{
	struct op {
		struct gdx_rma_req *r;
		uint64_t off, len;
		int signal; /* 0 none, else the signal word's index + 1 */
		bool strong, done, seen, placed;
		uint32_t seed;
	} *ops = calloc(OPS, sizeof(*ops));
	struct rig g;
	unsigned seed = 37;
	int issued = 0, finished = 0, nsig = 0, checked = 0, step = 0, fav = 0;

	ASSERT(ops);
	setenv("NCCL_GDX_STRIPE_MIN", "4096", 1);
	if (failover)
		setenv("NCCL_GDX_FAILOVER", "1", 1); /* signals on the home QP only */
	rig_make(&g, 3, 2);
	while (finished < OPS) {
		int k = rand_r(&seed) % 4;

		/* issue, while fewer than 12 are in flight: mostly striped puts
		 * (their parts on every QP), some small ones (the home QP) */
		if (issued < OPS && issued - finished < 12 && k) {
			struct op *o = &ops[issued];
			int kind = rand_r(&seed) % 4;

			o->off = (uint64_t)issued * SLOT;
			o->len = rand_r(&seed) % 8 == 0
					 ? 1 + (uint64_t)(rand_r(&seed) % 200)
					 : 4096 + (uint64_t)(rand_r(&seed) % (SLOT - 4096));
			o->seed = (uint32_t)issued * 2654435761u + 1;
			o->signal = kind >= 2 ? ++nsig : 0;
			o->strong = kind == 3;
			gdx_fill(g.mem[0] + o->off, o->len, o->seed);
			o->r = put(&g, o->off, o->len, o->signal,
				   o->signal ? (o->signal - 1) * 8 : 0, o->strong, false);
			issued++;
		}
		/* one WR of a QP, never the one held back, which changes every
		 * 20 steps: the others run ahead of it */
		if (step++ % 20 == 0)
			fav = rand_r(&seed) % 6;
		for (int tries = 0; tries < 12; tries++) {
			int qi = rand_r(&seed) % 6;

			if (qi == fav && tries < 11)
				continue;
			struct fake_qp *q = fake_rma_qp(&g.f, 0, qi / 2, qi % 2);

			if (fake_pending(q)) {
				fake_run(q, 1);
				break;
			}
		}
		/* a signal word that changed: what it covers is there */
		for (int i = 0; i < issued; i++) {
			struct op *s = &ops[i];

			if (!s->signal || s->seen || !sigword(&g, (uint64_t)(s->signal - 1) * 8))
				continue;
			s->seen = true;
			for (int j = s->strong ? 0 : i; j <= i; j++) {
				struct op *p = &ops[j];

				if (p->placed)
					continue;
				if (gdx_check(g.mem[1] + p->off, p->len, p->seed) != -1)
					gdx_test_fail(
						__FILE__, __LINE__,
						"the %s signal of op %d is seen before op %d's "
						"bytes are placed",
						s->strong ? "strong" : "weak", i, j);
				p->placed = true;
				checked++;
			}
		}
		if (rand_r(&seed) % 3 == 0)
			gdx_rma_progress(X(&g), 0);
		/* test what is in flight; a finished source is refilled at once */
		for (int i = finished; i < issued; i++) {
			struct op *o = &ops[i];

			if (!o->done && test_once(o->r)) {
				o->done = true;
				memset(g.mem[0] + o->off, 0xee, o->len);
			}
		}
		while (finished < issued && ops[finished].done)
			finished++;
		if (issued == OPS && finished < OPS)
			fake_rma_run_all(&g.f);
	}
	for (int i = 0; i < issued; i++) {
		ASSERT_EQ(gdx_check(g.mem[1] + ops[i].off, ops[i].len, ops[i].seed), -1);
		if (ops[i].signal)
			ASSERT_EQ(sigword(&g, (uint64_t)(ops[i].signal - 1) * 8), 1);
	}
	printf("  %d ops, %d signals, %d puts checked as their signal was seen\n", issued, nsig,
	       checked);
	ASSERT(checked > OPS / 4);
	rig_free(&g);
	free(ops);
	unsetenv("NCCL_GDX_STRIPE_MIN");
	unsetenv("NCCL_GDX_FAILOVER");
}

static void test_random_order_never_signals_early(void)
{
	random_order(false);
}

static void test_random_order_never_signals_early_failover(void)
{
	random_order(true);
}

/* The aggregate hint holds the doorbell: nothing reaches the NIC until a
 * call without it, or progress; then in the order issued. */
static void test_aggregate_hint_holds_the_doorbell(void)
{
	struct rig g;
	struct fake_qp *q0;
	struct gdx_rma_req *a, *b, *c;

	rig_make(&g, 1, 1);
	q0 = fake_rma_qp(&g.f, 0, 0, 0);
	a = put(&g, 0, 100, 0, 0, false, true);
	b = put(&g, 100, 100, 1, 0, true, true);
	ASSERT_EQ(fake_pending(q0), 0);
	gdx_rma_progress(X(&g), 0);
	ASSERT_EQ(fake_pending(q0), 3);
	c = put(&g, 200, 100, 0, 0, false, true);
	ASSERT_EQ(fake_pending(q0), 3);
	ASSERT_EQ(test_once(c), 0); /* test rings it too */
	ASSERT_EQ(fake_pending(q0), 4);
	ASSERT_EQ(q0->sq[(q0->sq_head + 2) % FAKE_SQ].opcode, IBV_WR_ATOMIC_FETCH_AND_ADD);
	drain(&g, a);
	drain(&g, b);
	drain(&g, c);
	rig_free(&g);
}

/* Requests that need more work requests than the connection's pool holds
 * wait, in order, and a strong signal behind them waits for all of them. */
static void test_backlog_keeps_order(void)
{
	struct fake_opts o = {.nrails = 2, .nqps = 1, .no_copy = true};
	struct fake_rma f;
	struct fake_window w, s;
	struct gdx_rma_req *r[40], *sr = NULL;
	char *sig[2] = {calloc(1, SIGS), calloc(1, SIGS)};
	uint64_t size = GDX_RMA_MAX_BYTES;
	int writes = 0;
	bool seen = false;

	fake_init();
	fake_rma_make(&f, &o);
	/* address ranges only: nothing is copied */
	fake_rma_window(&f, (void *)(uintptr_t)(1ULL << 44), (void *)(uintptr_t)(1ULL << 45), size,
			&w);
	fake_rma_window(&f, sig[0], sig[1], SIGS, &s);
	for (int i = 0; i < 40; i++)
		ASSERT_EQ(
			gdx_rma_iput(&f.r[0].x, 0, 0, &w.mh[0], size, 0, &w.mh[0], 1, false, &r[i]),
			0);
	ASSERT(f.r[0].conns[1]->bl_head != GDX_RMA_NIL);
	ASSERT_EQ(gdx_rma_iput_signal(&f.r[0].x, 0, 0, NULL, 0, 0, NULL, 1, 0, &s.mh[0], 5,
				      NCCL_NET_SIGNAL_OP_ADD, true, false, &sr),
		  0);
	/* a WR at a time on each QP: when the signal lands, every write of
	 * the 40 puts has been carried out */
	for (int k = 0, left = 41; left; k++) {
		ASSERT(k < 100000);
		for (int qi = 0; qi < 2; qi++) {
			struct fake_qp *q = fake_rma_qp(&f, 0, qi, 0);

			if (!fake_run(q, 1))
				continue;
			if (q->log[q->nlog - 1].opcode == IBV_WR_RDMA_WRITE)
				writes++;
			if (*(uint64_t *)sig[1] && !seen) {
				seen = true;
				ASSERT_EQ(writes, 40 * 16);
			}
		}
		left = 0;
		for (int i = 0; i < 41; i++) {
			struct gdx_rma_req *x = i < 40 ? r[i] : sr;
			int done = 0;

			if (!x)
				continue;
			ASSERT_EQ(gdx_rma_test(x, &done), 0);
			if (done) {
				if (i < 40)
					r[i] = NULL;
				else
					sr = NULL;
			} else {
				left++;
			}
		}
	}
	ASSERT(seen);
	ASSERT_EQ(*(uint64_t *)sig[1], 5);
	fake_rma_free(&f);
	free(sig[0]);
	free(sig[1]);
}

/* A rail fails under a striped put and its signal: with failover its part
 * goes again on the other rail, every byte arrives, the signal is added
 * once, and nothing is reported. */
static void test_failover_carries_on(void)
{
	struct rig g;
	struct gdx_rma_req *r;
	bool has;

	setenv("NCCL_GDX_FAILOVER", "1", 1);
	rig_make(&g, 2, 1);
	gdx_fill(g.mem[0], 300000, 3);
	r = put(&g, 0, 300000, 1, 0, true, false);
	fake_fail(fake_rma_qp(&g.f, 0, 1, 0), IBV_WC_RETRY_EXC_ERR);
	gdx_test_log_clear();
	drain(&g, r);
	ASSERT_EQ(gdx_check(g.mem[1], 300000, 3), -1);
	ASSERT_EQ(sigword(&g, 0), 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "rail 1 taken out of the connection");
	ASSERT_EQ(gdx_rma_ctx_error(X(&g)) != NULL, 0);
	/* and what follows uses the rail left */
	gdx_fill(g.mem[0], 300000, 4);
	r = put(&g, 0, 300000, 1, 0, false, false);
	drain(&g, r);
	ASSERT_EQ(gdx_check(g.mem[1], 300000, 4), -1);
	ASSERT_EQ(sigword(&g, 0), 2);
	has = gdx_rma_ctx_error(X(&g)) != NULL;
	ASSERT(!has);
	rig_free(&g);
	unsetenv("NCCL_GDX_FAILOVER");
}

/* A flush reads through each NIC whose rail of the connection to itself is
 * in; a NIC whose rail is out gets no read through another NIC's QP (it
 * would order nothing that NIC wrote), and a WARN says what is not ordered.
 * The rig has no connection to itself: the one to rank 1 stands for it. */
static void test_flush_reads_through_no_other_nic(void)
{
	struct rig g;
	struct gdx_rma_req *r;
	struct gdx_rma_conn *conn;
	unsigned before;

	setenv("NCCL_GDX_FAILOVER", "1", 1);
	setenv("NCCL_GDX_GDR_FLUSH", "2", 1); /* host memory: flushed anyway */
	rig_make(&g, 2, 1);
	gdx_fill(g.mem[0], 300000, 3);
	r = put(&g, 0, 300000, 1, 0, true, false);
	fake_fail(fake_rma_qp(&g.f, 0, 1, 0), IBV_WC_RETRY_EXC_ERR);
	drain(&g, r);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "rail 1 taken out of the connection");
	conn = gdx_rma_conn_of(X(&g), 0, 1);
	X(&g)->conns[0] = conn;
	before = fake_pending(fake_rma_qp(&g.f, 0, 0, 0));
	ASSERT_EQ(gdx_rma_iflush(X(&g), 0, &g.data.mh[0], 1, &r), 0);
	printf("  a flush with rail 1 out: %u read(s) through fake0's QP\n",
	       fake_pending(fake_rma_qp(&g.f, 0, 0, 0)) - before);
	ASSERT_EQ(fake_pending(fake_rma_qp(&g.f, 0, 0, 0)) - before, 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "iflush cannot read through fake1, its rail to "
						 "itself is out");
	drain(&g, r);
	X(&g)->conns[0] = NULL;
	rig_free(&g);
	unsetenv("NCCL_GDX_FAILOVER");
	unsetenv("NCCL_GDX_GDR_FLUSH");
}

/* Without failover the failure is the request's error and queryLastError's,
 * with a WARN that names the rail and its QP. */
static void test_failure_is_reported(void)
{
	struct rig g;
	struct gdx_rma_req *r, *later = NULL;
	int done = 0, ret = 0;

	unsetenv("NCCL_GDX_FAILOVER");
	rig_make(&g, 2, 1);
	r = put(&g, 0, 300000, 1, 0, true, false);
	fake_fail(fake_rma_qp(&g.f, 0, 1, 0), IBV_WC_RETRY_EXC_ERR);
	gdx_test_log_clear();
	for (int i = 0; i < 100 && !ret; i++) {
		fake_rma_run_all(&g.f);
		ret = gdx_rma_test(r, &done);
	}
	ASSERT_EQ(ret, -EREMOTEIO);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "rail 1 (fake1) qp 0x310");
	ASSERT_STR_CONTAINS(gdx_rma_ctx_error(X(&g)), "transport retry counter exceeded");
	ASSERT_EQ(sigword(&g, 0), 0);
	/* the connection stays failed */
	ASSERT_EQ(gdx_rma_iput(X(&g), 0, 0, &g.data.mh[0], 8, 0, &g.data.mh[0], 1, false, &later),
		  -EREMOTEIO);
	rig_free(&g);
}

/* A rail fails with a signal's atomic on it: the target may or may not have
 * added it; it is not sent again (twice would be wrong), its request fails
 * and queryLastError says why. */
static void test_atomic_in_doubt_is_not_sent_twice(void)
{
	struct rig g;
	struct gdx_rma_req *r;
	int done = 0, ret = 0;

	setenv("NCCL_GDX_FAILOVER", "1", 1);
	rig_make(&g, 2, 1);
	r = put(&g, 0, 100, 1, 0, true, false); /* home QP: put and atomic */
	ASSERT_EQ(fake_pending(fake_rma_qp(&g.f, 0, 0, 0)), 2);
	ASSERT_EQ(fake_run(fake_rma_qp(&g.f, 0, 0, 0), 1), 1);
	fake_fail(fake_rma_qp(&g.f, 0, 0, 0), IBV_WC_RETRY_EXC_ERR);
	for (int i = 0; i < 100 && !ret; i++) {
		fake_rma_run_all(&g.f);
		ret = gdx_rma_test(r, &done);
	}
	ASSERT_EQ(ret, -EREMOTEIO);
	ASSERT_STR_CONTAINS(gdx_rma_ctx_error(X(&g)), "may or may not have been added");
	ASSERT_EQ(sigword(&g, 0), 0);
	rig_free(&g);
	unsetenv("NCCL_GDX_FAILOVER");
}

/* Gets read what the peer has, striped when large; a done get's bytes are
 * all there. */
static void test_get_reads_every_byte(void)
{
	struct rig g;
	struct gdx_rma_req *r = NULL;

	rig_make(&g, 3, 1);
	gdx_fill(g.mem[1], 1 << 20, 9);
	ASSERT_EQ(gdx_rma_iget(X(&g), 0, 0, &g.data.mh[0], 1 << 20, 0, &g.data.mh[0], 1, false, &r),
		  0);
	for (int q = 0; q < 3; q++)
		ASSERT_EQ(fake_pending(fake_rma_qp(&g.f, 0, q, 0)), 1);
	drain(&g, r);
	ASSERT_EQ(gdx_check(g.mem[0], 1 << 20, 9), -1);
	rig_free(&g);
}

GDX_TESTS_MAIN(TEST(test_strong_signal_waits_for_the_other_rail, 30),
	       TEST(test_failover_signals_on_the_home_rail, 30),
	       TEST(test_weak_and_strong_cover_what_they_say, 30),
	       TEST(test_random_order_never_signals_early, 60),
	       TEST(test_random_order_never_signals_early_failover, 60),
	       TEST(test_aggregate_hint_holds_the_doorbell, 30), TEST(test_backlog_keeps_order, 60),
	       TEST(test_failover_carries_on, 30), TEST(test_flush_reads_through_no_other_nic, 30),
	       TEST(test_failure_is_reported, 30), TEST(test_atomic_in_doubt_is_not_sent_twice, 30),
	       TEST(test_get_reads_every_byte, 30))
