/* SPDX-License-Identifier: MIT */
/*
 * Bringing a failed rail back, with scripted verbs (gdx_fake_nic.h), as
 * NCCL's resiliency settings (their twins) ask: the probes a restored rail
 * must deliver before traffic returns to it (NCCL_GDX_RECOVERY_PROBES, the
 * twin of NCCL_IB_RESILIENCY_PORT_RECOVERY_ALIVE_MSG_SEQUENCE_SIZE); a cap on
 * the failed attempts of one outage (NCCL_GDX_RECOVERY_ATTEMPTS, of
 * ..._ATTEMPTS_MAX), after which the rail stays out, where unset there is
 * none; and no recovery at all (NCCL_GDX_RECOVERY=0, of
 * NCCL_IB_RESILIENCY_PORT_RECOVERY=0). The waits between attempts are made
 * short (NCCL_GDX_RECOVERY_START_MS=1, NCCL_GDX_RECOVERY_MAX_MS=2).
 */
#include <stdlib.h>
#include <time.h>

#include "data/gdx_cq.h"
#include "data/gdx_failover.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static void setup(const char *probes, const char *attempts, const char *recovery)
{
	setenv("NCCL_GDX_FAILOVER", "1", 1);
	setenv("NCCL_GDX_RECOVERY_START_MS", "1", 1);
	setenv("NCCL_GDX_RECOVERY_MAX_MS", "2", 1);
	setenv("NCCL_GDX_RECOVERY_PROBES", probes, 1);
	setenv("NCCL_GDX_RECOVERY_ATTEMPTS", attempts, 1);
	setenv("NCCL_GDX_RECOVERY", recovery, 1);
	fake_init();
}

static void pause_ms(int ms)
{
	nanosleep(&(struct timespec){0, ms * 1000000L}, NULL);
}

/* Polls both ends and carries out what they post (not while a restore's
 * thread works on a QP), until the sender's rail 0 is in state want or
 * max_ms pass; returns whether it got there. Probes on rail 0 are carried
 * out only when deliver_probes. */
static bool drive_until(struct fake_pair *p, enum gdx_rail_state want, int max_ms,
			bool deliver_probes)
{
	for (int t = 0; t < max_ms; t++) {
		for (int i = 0; i < 4; i++) {
			gdx_cq_poll(p->s.c);
			gdx_cq_poll(p->r.c);
			if (fake_restoring(p))
				continue;
			for (int k = 0; k < p->o.nrails * p->o.nqps; k++) {
				if (k > 0 || deliver_probes ||
				    p->s.c->ch.run[0].state != GDX_RAIL_PROBING)
					fake_run(&p->s.qp[k], FAKE_SQ);
				fake_run(&p->r.qp[k], FAKE_SQ);
			}
		}
		if (p->s.c->ch.run[0].state == want)
			return true;
		pause_ms(1);
	}
	return p->s.c->ch.run[0].state == want;
}

/* Rail 0 fails under the sender; the receiver's counts come back by rail 1. */
static void fail_rail0(struct fake_pair *p)
{
	fake_pair_make(p, &(struct fake_opts){.nrails = 2, .nqps = 1});
	gdx_rail_failed(p->s.c, 0, "the test took it out");
	/* out, drained, and on its way back: DOWN or past it (a restore with
	 * waits of 1 ms may pass DOWN between two looks); its probes held, so
	 * it cannot be back yet */
	for (int t = 0; t < 2000 && p->s.c->ch.run[0].state < GDX_RAIL_DOWN; t += 10)
		drive_until(p, GDX_RAIL_DOWN, 10, false);
	ASSERT(p->s.c->ch.run[0].state >= GDX_RAIL_DOWN);
}

/* Until attempt n probes the rail (its probes held): the states between
 * two attempts pass too fast under a sanitizer to be seen one by one. */
static bool probing_attempt(struct fake_pair *p, uint32_t n)
{
	for (int t = 0; t < 2000; t += 10) {
		drive_until(p, GDX_RAIL_PROBING, 10, false);
		if (p->s.c->ch.run[0].attempts >= n && p->s.c->ch.run[0].state == GDX_RAIL_PROBING)
			return true;
	}
	return false;
}

/* Three probes per QP: the rail is back only once all three are delivered. */
static void test_probes_per_qp(void)
{
	struct fake_pair p;

	setup("3", "0", "1");
	fail_rail0(&p);
	ASSERT(drive_until(&p, GDX_RAIL_PROBING, 2000, false));
	ASSERT_EQ(fake_pending(fake_qp_of(&p.s, 0, 0)), 3);
	ASSERT_EQ(p.s.c->ch.run[0].probes, 3);
	fake_run(fake_qp_of(&p.s, 0, 0), 2);
	ASSERT(!drive_until(&p, GDX_RAIL_UP, 20, false));
	ASSERT(drive_until(&p, GDX_RAIL_UP, 2000, true));
	ASSERT_STR_CONTAINS(gdx_test_infos(), "back in the connection");
	fake_pair_free(&p);
}

/* Every attempt's probes are lost: with a cap of 2 the rail stays out after
 * the second, with one WARN, however long one waits. */
static void test_attempts_capped(void)
{
	struct fake_pair p;

	setup("1", "2", "1");
	fail_rail0(&p);
	for (int a = 0; a < 2; a++) {
		ASSERT(probing_attempt(&p, (uint32_t)a + 1));
		fake_fail(fake_qp_of(&p.s, 0, 0), IBV_WC_RETRY_EXC_ERR);
	}
	ASSERT(drive_until(&p, GDX_RAIL_DOWN, 2000, true)); /* and it stays there */
	ASSERT(p.s.c->ch.run[0].gave_up);
	ASSERT(!drive_until(&p, GDX_RAIL_RESTORING, 300, true));
	ASSERT_EQ(p.s.c->ch.run[0].attempts, 2);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "2 restore attempt(s) failed, the most "
						 "NCCL_GDX_RECOVERY_ATTEMPTS");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "it stays out of the connection");
	fake_pair_free(&p);
}

/* Unset, there is no cap: ten attempts fail, and the eleventh brings the
 * rail back. */
static void test_attempts_never_end(void)
{
	struct fake_pair p;

	setup("1", "0", "1");
	fail_rail0(&p);
	for (int a = 0; a < 10; a++) {
		ASSERT(probing_attempt(&p, (uint32_t)a + 1));
		fake_fail(fake_qp_of(&p.s, 0, 0), IBV_WC_RETRY_EXC_ERR);
	}
	ASSERT(drive_until(&p, GDX_RAIL_UP, 2000, true));
	ASSERT_EQ(p.s.c->ch.run[0].attempts, 11);
	ASSERT(!strstr(gdx_test_warnings(), "stays out"));
	fake_pair_free(&p);
}

/* NCCL_GDX_RECOVERY=0: the rail stays out, and nothing is attempted. */
static void test_no_recovery(void)
{
	struct fake_pair p;

	setup("1", "0", "0");
	fail_rail0(&p);
	ASSERT(!drive_until(&p, GDX_RAIL_RESTORING, 300, true));
	ASSERT_EQ(p.s.c->ch.run[0].attempts, 0);
	fake_pair_free(&p);
}

GDX_TESTS_MAIN(TEST(test_probes_per_qp, 30), TEST(test_attempts_capped, 30),
	       TEST(test_attempts_never_end, 60), TEST(test_no_recovery, 30))
