/* SPDX-License-Identifier: MIT */
/* How a send comm cuts messages (gdx_stripe.c), on made-up rails: shares
 * that add up, 128-byte aligned, weighted by rate; a rail that is out gets
 * nothing; a rail's QPs in turn or all; small messages to the rail that
 * finishes first; rates measured from what was delivered. */
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "sys/gdx_param.h"
#include "rail/gdx_stripe.h"

#include "gdx_test.h"

static struct gdx_dev devs[GDX_MAX_RAILS];
static struct gdx_comm comm;

/* nrails rails of nqps QPs, every one up, at speed_mbps each */
static struct gdx_comm *fake_comm(int nrails, int nqps, int speed_mbps)
{
	ASSERT_EQ(gdx_params_load(), 0);
	memset(&comm, 0, sizeof(comm));
	comm.kind = GDX_KIND_SEND;
	comm.ch.nrails = nrails;
	comm.ch.nlive = nrails;
	for (int r = 0; r < nrails; r++) {
		devs[r].speed_mbps = speed_mbps;
		comm.ch.rails[r].dev = &devs[r];
		comm.ch.rails[r].nqps = nqps;
	}
	gdx_stripe_init(&comm.ch);
	return &comm;
}

static uint64_t total(const struct gdx_piece *p, int n)
{
	uint64_t off = 0;

	for (int i = 0; i < n; i++) {
		ASSERT_EQ(p[i].off, off); /* in order, no gap, no overlap */
		off += p[i].len;
	}
	return off;
}

static void test_shares(void)
{
	const double even[3] = {1, 1, 1}, two_to_one[2] = {2, 1}, none[2] = {0, 0};
	uint64_t s[3];

	gdx_stripe_shares(1 << 20, even, 3, s);
	ASSERT_EQ(s[0] % GDX_STRIPE_ALIGN, 0);
	ASSERT_EQ(s[1] % GDX_STRIPE_ALIGN, 0);
	ASSERT_EQ(s[0] + s[1] + s[2], 1 << 20);
	gdx_stripe_shares(3 << 20, two_to_one, 2, s);
	ASSERT_EQ(s[0] + s[1], 3 << 20);
	ASSERT(s[0] >= 2 << 20 && s[0] < (2 << 20) + GDX_STRIPE_ALIGN);
	gdx_stripe_shares(1000, none, 2, s); /* no rate known: even */
	ASSERT_EQ(s[0] + s[1], 1000);
	ASSERT_EQ(s[0], 512);
	gdx_stripe_shares(100, even, 3, s); /* smaller than one line: the first takes it */
	ASSERT_EQ(s[0], 100);
	ASSERT_EQ(s[1] + s[2], 0);
}

static void test_plan_weighted_and_out(void)
{
	struct gdx_comm *c = fake_comm(2, 1, 100000);
	struct gdx_piece p[GDX_MAX_QPS];
	int n;

	c->ch.run[0].rate = 3000; /* bytes per ms */
	c->ch.run[1].rate = 1000;
	n = gdx_stripe_plan(&c->ch, 4 << 20, 7, false, p);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(total(p, n), 4 << 20);
	ASSERT_EQ(p[0].rail, 0);
	ASSERT(p[0].len >= 3 << 20 && p[0].len < (3 << 20) + GDX_STRIPE_ALIGN);
	/* split evenly when asked to, as net_ib */
	setenv("NCCL_GDX_STRIPE_WEIGHTED", "0", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	n = gdx_stripe_plan(&c->ch, 4 << 20, 7, false, p);
	ASSERT_EQ(p[0].len, 2 << 20);
	unsetenv("NCCL_GDX_STRIPE_WEIGHTED");
	ASSERT_EQ(gdx_params_load(), 0);
	/* a rail that is out carries nothing */
	c->ch.run[0].state = GDX_RAIL_DOWN;
	c->ch.nlive = 1;
	n = gdx_stripe_plan(&c->ch, 4 << 20, 8, false, p);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(p[0].rail, 1);
	ASSERT_EQ(p[0].len, 4 << 20);
	ASSERT_EQ(gdx_stripe_pick(&c->ch, 10, 9), 1);
	c->ch.run[1].state = GDX_RAIL_PROBING; /* not up yet either */
	c->ch.nlive = 0;
	ASSERT_EQ(gdx_stripe_plan(&c->ch, 4 << 20, 9, false, p), 0);
	ASSERT_EQ(gdx_stripe_pick(&c->ch, 10, 9), -1);
}

static void test_plan_qps(void)
{
	struct gdx_comm *c = fake_comm(2, 4, 100000);
	struct gdx_piece p[GDX_MAX_QPS];
	int n, seen[4] = {0};

	/* round robin: one QP a rail, turning with the message */
	for (uint64_t seq = 0; seq < 8; seq++) {
		n = gdx_stripe_plan(&c->ch, 1 << 20, seq, false, p);
		ASSERT_EQ(n, 2);
		ASSERT_EQ(p[0].q, seq % 4);
		ASSERT_EQ(p[1].q, seq % 4);
		seen[p[0].q]++;
	}
	for (int q = 0; q < 4; q++)
		ASSERT_EQ(seen[q], 2);
	/* split: every QP of both rails, 8 pieces */
	c->ch.split = true;
	n = gdx_stripe_plan(&c->ch, 1 << 20, 3, false, p);
	ASSERT_EQ(n, 8);
	ASSERT_EQ(total(p, n), 1 << 20);
	for (int i = 0; i < n; i++)
		ASSERT_EQ(p[i].off % GDX_STRIPE_ALIGN, 0);
	/* too small to split into lines: one piece */
	n = gdx_stripe_plan(&c->ch, 300, 3, false, p);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(p[0].len, 300);
	/* a group stays on one rail */
	n = gdx_stripe_plan(&c->ch, 1 << 20, 3, true, p);
	for (int i = 0; i < n; i++)
		ASSERT_EQ(p[i].rail, p[0].rail);
}

static void test_pick_earliest_finish(void)
{
	struct gdx_comm *c = fake_comm(2, 1, 100000);
	int turns[2] = {0};

	/* equal and idle: they take turns */
	for (uint64_t seq = 0; seq < 10; seq++)
		turns[gdx_stripe_pick(&c->ch, 4096, seq)]++;
	ASSERT_EQ(turns[0], 5);
	ASSERT_EQ(turns[1], 5);
	/* rail 0 has 1 MiB queued: rail 1 finishes first */
	gdx_stripe_posted(&c->ch, 0, 1 << 20);
	for (uint64_t seq = 0; seq < 10; seq++)
		ASSERT_EQ(gdx_stripe_pick(&c->ch, 4096, seq), 1);
}

/* 4 MiB delivered over 40 ms of busy time: about 100 KiB per ms, learned in
 * a few windows; an idle gap between does not count as slow. */
static void test_rate_measured(void)
{
	struct gdx_comm *c = fake_comm(2, 1, 100000);
	double before = c->ch.run[0].rate;

	for (int i = 0; i < 12; i++) {
		gdx_stripe_posted(&c->ch, 0, 2 << 20);
		usleep(20000);
		gdx_stripe_delivered(&c->ch, 0, 2 << 20);
		usleep(30000); /* idle */
	}
	printf("# rate from %.0f to %.0f bytes/ms (2 MiB every 20 ms busy: ~100000)\n", before,
	       c->ch.run[0].rate);
	ASSERT(c->ch.run[0].rate > 50000 && c->ch.run[0].rate < 160000);
	/* back from an outage: not below the others */
	c->ch.run[1].rate = 200000;
	gdx_stripe_back(&c->ch, 0);
	ASSERT(c->ch.run[0].rate >= 200000);
	ASSERT_EQ(c->ch.run[0].inflight, 0);
}

/* A rail on a far NIC (gdx_comm.standby) carries no data while a near rail
 * is up, large messages or small, whatever its rate; once no near rail is
 * up it carries them all, and again none once one is back. */
static void test_far_rail_stands_by(void)
{
	struct gdx_comm *c = fake_comm(3, 1, 100000);
	struct gdx_piece p[GDX_MAX_QPS];
	int n;

	c->ch.standby = 1u << 2;		     /* rail 2 is far */
	c->ch.run[2].rate = 100 * c->ch.run[0].rate; /* and looks fast: no matter */
	n = gdx_stripe_plan(&c->ch, 4 << 20, 0, false, p);
	ASSERT_EQ(total(p, n), 4 << 20);
	for (int i = 0; i < n; i++)
		ASSERT(p[i].rail != 2);
	ASSERT_EQ(n, 2);
	for (uint64_t seq = 0; seq < 6; seq++)
		ASSERT(gdx_stripe_pick(&c->ch, 4096, seq) != 2);
	/* one near rail left: it takes everything, whole */
	c->ch.run[0].state = GDX_RAIL_DOWN;
	c->ch.nlive = 2;
	n = gdx_stripe_plan(&c->ch, 4 << 20, 1, false, p);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(p[0].rail, 1);
	/* no near rail up: the far one carries */
	c->ch.run[1].state = GDX_RAIL_DOWN;
	c->ch.nlive = 1;
	n = gdx_stripe_plan(&c->ch, 4 << 20, 2, false, p);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(p[0].rail, 2);
	ASSERT_EQ(gdx_stripe_pick(&c->ch, 4096, 3), 2);
	/* a near rail back: the far one stands by again */
	c->ch.run[0].state = GDX_RAIL_UP;
	c->ch.nlive = 2;
	n = gdx_stripe_plan(&c->ch, 4 << 20, 4, false, p);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(p[0].rail, 0);
	/* every rail far (no near member): all carry */
	c = fake_comm(2, 1, 100000);
	c->ch.standby = 3;
	ASSERT_EQ(gdx_stripe_plan(&c->ch, 4 << 20, 0, false, p), 2);
}

GDX_TESTS_MAIN(TEST(test_shares, 5), TEST(test_plan_weighted_and_out, 5), TEST(test_plan_qps, 5),
	       TEST(test_pick_earliest_finish, 5), TEST(test_rate_measured, 20),
	       TEST(test_far_rail_stands_by, 5))
