/* SPDX-License-Identifier: MIT */
/*
 * A receive comm's slots (sequence % 32), with scripted verbs
 * (gdx_fake_nic.h): irecv does not stage a slot whose receive is still in
 * flight. NCCL tests requests in any order (several senders sharing one
 * receive comm each test their own, PXN and NCCL_NET_SHARED_COMMS), so 31
 * later receives can complete and be given back while the slot's first is
 * still on its way: 0.4.0 staged the slot again over it, and that receive's
 * immediates were then dropped as stale; it never completed. irecv now
 * returns no request until the slot is free, and NCCL posts again.
 *
 * The script: one rail of two QPs, messages taking them in turn; message 0
 * (64 KiB) and every even one held on QP 0, the odd ones carried out on
 * QP 1 and tested newest first; then the 33rd receive is posted.
 */
#include <stdlib.h>

#include "data/gdx_cq.h"
#include "data/gdx_p2p.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define N     GDX_MAX_REQUESTS
#define BUF   (64u << 10)
#define BIG   BUF
#define SMALL 1024u

static size_t msg_size(int i)
{
	return i == 0 ? BIG : SMALL + (size_t)i;
}

static void fill(char *p, size_t n, int seed)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (char)(k * 13 + (size_t)seed * 7 + 1);
}

static void check(const char *p, size_t n, int seed, int i)
{
	for (size_t k = 0; k < n; k++)
		if (p[k] != (char)(k * 13 + (size_t)seed * 7 + 1))
			gdx_test_fail(__FILE__, __LINE__, "message %d: byte %zu is wrong", i, k);
}

static void test_irecv_waits_for_a_busy_slot(void)
{
	struct fake_pair p;
	struct gdx_mr smr, rmr;
	struct gdx_request *r[N + 1] = {0}, *s[N + 1] = {0};
	char *sbuf = malloc((size_t)(N + 1) * BUF), *rbuf = calloc(N + 1, BUF);
	int size = -1, polls = 0, done0 = 0;

	ASSERT(sbuf && rbuf);
	fake_init();
	fake_pair_make(&p, &(struct fake_opts){.nrails = 1, .nqps = 2});
	fake_mr(&p, sbuf, (uint64_t)(N + 1) * BUF, &smr);
	fake_mr(&p, rbuf, (uint64_t)(N + 1) * BUF, &rmr);
	for (int i = 0; i < N; i++) {
		r[i] = fake_irecv(&p, rbuf + (size_t)i * BUF, BUF, 0, &rmr);
		ASSERT(r[i] != NULL);
	}
	fake_run_all(&p); /* the 32 clear-to-sends land */
	for (int i = 0; i < N; i++) {
		fill(sbuf + (size_t)i * BUF, msg_size(i), i);
		s[i] = fake_isend(&p, sbuf + (size_t)i * BUF, msg_size(i), 0, &smr);
		ASSERT(s[i] != NULL);
	}
	/* the odd messages arrive, message 0 and the even ones are held */
	fake_run(fake_qp_of(&p.s, 0, 1), FAKE_SQ);
	for (int i = N - 1; i >= 1; i -= 2) {
		for (polls = 0; !fake_test(r[i], &size); polls++)
			ASSERT(polls < 1000);
		ASSERT_EQ(size, (int)msg_size(i));
		check(rbuf + (size_t)i * BUF, msg_size(i), i, i);
	}
	ASSERT_EQ(p.r.rc->recvs_active, N / 2);
	/* slot 0's receive is still in flight: no request for the 33rd */
	r[N] = fake_irecv(&p, rbuf + (size_t)N * BUF, BUF, 0, &rmr);
	printf("  the 33rd receive while the 1st is in flight: %s\n",
	       r[N] ? "a request (slot 0 staged over it)" : "no request, posted again later");
	ASSERT(r[N] == NULL);
	/* the rest arrives: receive 0 and every even one complete */
	fake_run_all(&p);
	for (polls = 0; polls < 1000 && !done0; polls++)
		done0 = fake_test(r[0], &size);
	printf("  receive 0 done? %d; immediates dropped as stale: %llu\n", done0,
	       (unsigned long long)p.r.c->stale_imms);
	ASSERT(done0);
	ASSERT_EQ(size, (int)BIG);
	check(rbuf, BIG, 0, 0);
	ASSERT_EQ(p.r.c->stale_imms, 0);
	for (int i = 2; i < N; i += 2) {
		for (polls = 0; !fake_test(r[i], &size); polls++)
			ASSERT(polls < 1000);
		check(rbuf + (size_t)i * BUF, msg_size(i), i, i);
	}
	/* now the 33rd is taken, and its message goes into it */
	r[N] = fake_irecv(&p, rbuf + (size_t)N * BUF, BUF, 0, &rmr);
	ASSERT(r[N] != NULL);
	fake_run_all(&p);
	fill(sbuf + (size_t)N * BUF, 4000, N);
	for (polls = 0; !(s[N] = fake_isend(&p, sbuf + (size_t)N * BUF, 4000, 0, &smr)); polls++)
		ASSERT(polls < 1000);
	for (polls = 0; !fake_test(r[N], &size); polls++) {
		fake_run_all(&p);
		ASSERT(polls < 1000);
	}
	ASSERT_EQ(size, 4000);
	check(rbuf + (size_t)N * BUF, 4000, N, N);
	for (int i = 0; i <= N; i++)
		for (polls = 0; !fake_test(s[i], NULL); polls++) {
			fake_run_all(&p);
			ASSERT(polls < 1000);
		}
	ASSERT_EQ(gdx_test_warning_count(), 0);
	fake_pair_free(&p);
	free(sbuf);
	free(rbuf);
}

/* Random order, many laps: every receive is completed exactly once, with
 * its bytes, whatever order its slot's neighbours are tested in. */
static void test_random_test_order_many_laps(void)
{
	enum { LAPS = 20, MSGS = LAPS * N };
	struct fake_pair p;
	struct gdx_mr smr, rmr;
	struct gdx_request *r[N] = {0}, *s[N] = {0};
	int rmsg[N], posted = 0, sent = 0, received = 0, guard = 0, refused = 0;
	char *sbuf = malloc((size_t)N * BUF), *rbuf = calloc(N, BUF);

	ASSERT(sbuf && rbuf);
	srandom(42);
	fake_init();
	fake_pair_make(&p, &(struct fake_opts){.nrails = 1, .nqps = 2});
	fake_mr(&p, sbuf, (uint64_t)N * BUF, &smr);
	fake_mr(&p, rbuf, (uint64_t)N * BUF, &rmr);
	while (received < MSGS) {
		ASSERT(++guard < 1000000);
		/* post into any free buffer; the plugin may say not now */
		for (int b = 0; b < N && posted < MSGS; b++) {
			if (r[b])
				continue;
			r[b] = fake_irecv(&p, rbuf + (size_t)b * BUF, BUF, 0, &rmr);
			if (!r[b]) {
				refused++; /* its slot's receive is in flight */
				break;
			}
			rmsg[b] = posted++;
		}
		for (int b = 0; b < N && sent < posted; b++) {
			if (s[b])
				continue;
			fill(sbuf + (size_t)b * BUF, msg_size(sent % N), sent);
			s[b] = fake_isend(&p, sbuf + (size_t)b * BUF, msg_size(sent % N), 0, &smr);
			if (!s[b])
				break;
			sent++;
		}
		/* QP 1 goes three times as often as QP 0, a random number of
		 * WRs each: messages overtake those on the other QP */
		fake_run(fake_qp_of(&p.s, 0, random() % 4 ? 1 : 0), (int)(random() % 3));
		fake_run(fake_qp_of(&p.r, 0, 0), FAKE_SQ);
		/* test one receive and one send at random */
		{
			int b = (int)(random() % N), size = -1;

			if (r[b] && fake_test(r[b], &size)) {
				ASSERT_EQ(size, (int)msg_size(rmsg[b] % N));
				check(rbuf + (size_t)b * BUF, msg_size(rmsg[b] % N), rmsg[b],
				      rmsg[b]);
				memset(rbuf + (size_t)b * BUF, 0, BUF);
				r[b] = NULL;
				received++;
			}
			b = (int)(random() % N);
			if (s[b] && fake_test(s[b], NULL))
				s[b] = NULL;
		}
	}
	printf("  %d messages received in random test order; %d irecv calls found their slot's "
	       "receive in flight; %llu stale immediates\n",
	       received, refused, (unsigned long long)p.r.c->stale_imms);
	ASSERT(refused > 0); /* the case arose */
	ASSERT_EQ(p.r.c->stale_imms, 0);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	fake_pair_free(&p);
	free(sbuf);
	free(rbuf);
}

/* A write of a grouped receive's further entries covers only slots whose
 * receive uses that row: slots 2 and 4 grouped (2 buffers), slot 3 single,
 * held (the sender has slots 0 and 1's) and written in one flush. 0.4.2
 * wrote row 1 of slots 2..4 in one write, slot 3's as an earlier lap left
 * it. */
static void test_grouped_rows_cover_only_their_slots(void)
{
	struct fake_pair p;
	struct gdx_mr mr;
	static char buf[5][2][SMALL];
	struct gdx_request *req[5];
	uint64_t row1 =
		offsetof(struct gdx_ctrl, fifo) + GDX_FIFO_INDEX(2, 1) * sizeof(struct gdx_cts);
	int covered[3] = {0};

	fake_init();
	fake_pair_make(&p, &(struct fake_opts){.nrails = 1, .nqps = 1});
	fake_mr(&p, buf, sizeof(buf), &mr);
	for (int s = 0; s < 5; s++) {
		int n = s == 2 || s == 4 ? 2 : 1, tags[2] = {5, 6};
		void *data[2] = {buf[s][0], buf[s][1]};
		uint64_t sizes[2] = {SMALL, SMALL};
		struct gdx_mr *mrs[2] = {&mr, &mr};

		req[s] = NULL;
		ASSERT_EQ(gdx_irecv(p.r.rc, n, data, sizes, tags, mrs, NULL, &req[s]), 0);
		ASSERT(req[s] != NULL);
		if (s == 1)
			fake_run(fake_qp_of(&p.r, 0, 0), FAKE_SQ); /* the sender has 0, 1 */
	}
	ASSERT_EQ(fake_qp_of(&p.r, 0, 0)->nlog, 2); /* 2, 3, 4 held */
	ASSERT_EQ(fake_test(req[4], NULL), 0);	    /* a held receive tested: they go */
	fake_run(fake_qp_of(&p.r, 0, 0), FAKE_SQ);
	for (unsigned k = 0; k < fake_qp_of(&p.r, 0, 0)->nlog; k++) {
		const struct fake_wr *w = &fake_qp_of(&p.r, 0, 0)->log[k];
		uint64_t at = w->raddr - p.r.c->remote_ctrl;

		for (int s = 0; s < 3; s++)
			if (at <= row1 + s * sizeof(struct gdx_cts) &&
			    row1 + (s + 1) * sizeof(struct gdx_cts) <= at + w->len)
				covered[s]++;
	}
	printf("  row 1 written for slot 2: %d time(s), slot 3 (single): %d, slot 4: %d\n",
	       covered[0], covered[1], covered[2]);
	ASSERT_EQ(covered[0], 1);
	ASSERT_EQ(covered[1], 0);
	ASSERT_EQ(covered[2], 1);
	fake_pair_free(&p);
}

GDX_TESTS_MAIN(TEST(test_irecv_waits_for_a_busy_slot, 60),
	       TEST(test_grouped_rows_cover_only_their_slots, 30),
	       TEST(test_random_test_order_many_laps, 120))
