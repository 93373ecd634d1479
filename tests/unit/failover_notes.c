/* SPDX-License-Identifier: MIT */
/*
 * The notes of failover (gdx_failover.c) as they arrive when the receiver
 * is not polling, with scripted verbs (gdx_fake_nic.h). Two rails, failover
 * and recovery on, waits of 1 ms.
 *
 * The interleaving of issue 46: 32 small messages on rail 0, all
 * acknowledged and their completions taken by the sender (rail 0's segment
 * log is empty), their immediates still in the receiver's CQ; the sender
 * takes rail 0 out without a failed data completion (gdx_rail_failed, or an
 * async event on its QP), notes DOWN, and once its wait is over resets the
 * QPs and notes RESTORE into the same slot; only then does the receiver
 * poll. Before 0.4.3 it restored a rail it still had up, dropped the
 * immediates in its CQ as an earlier generation's, and 14 of the 32
 * receives never completed. The control polls once between the notes.
 *
 * The idle receiver: nothing posted while rail 0 (the control rail) goes
 * out and is restored, then one receive: its clear-to-send, posted on rail
 * 0 before the receiver read RESTORE, must reach the sender.
 *
 * And every note of the other end's arriving while this end is not polling,
 * in each state it can be in (the recovery model, gdx_failover.c).
 */
#include <stdlib.h>
#include <time.h>

#include "data/gdx_cq.h"
#include "data/gdx_failover.h"
#include "data/gdx_note.h"
#include "rail/gdx_post.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define NMSG  32
#define MSGSZ 64

static void setup(const char *start_ms)
{
	setenv("NCCL_GDX_FAILOVER", "1", 1);
	setenv("NCCL_GDX_RECOVERY_START_MS", start_ms, 1);
	setenv("NCCL_GDX_RECOVERY_MAX_MS", "2", 1);
	setenv("NCCL_GDX_RECOVERY_PROBES", "1", 1);
	fake_init();
}

static void pause_ms(int ms)
{
	nanosleep(&(struct timespec){0, ms * 1000000L}, NULL);
}

/* Carries out what one end posted (not while a restore's thread owns a QP). */
static void run_end(struct fake_pair *p, struct fake_end *e)
{
	if (fake_restoring(p))
		return;
	for (int k = 0; k < p->o.nrails * p->o.nqps; k++)
		fake_run(&e->qp[k], FAKE_SQ);
}

/* The sender alone, polled and its writes carried out, for ms: it goes on
 * with the outage by itself (the receiver's CQ and notes pile up). Returns
 * whether its rail 0 reached state want or one past it (without the
 * receiver it gets no further than RESTORING) meanwhile. */
static bool sender_alone(struct fake_pair *p, enum gdx_rail_state want, int ms)
{
	bool seen = false;

	for (int t = 0; t < ms; t++) {
		for (int i = 0; i < GDX_PORT_CHECK_POLLS; i++)
			gdx_cq_poll(p->s.c);
		run_end(p, &p->s);
		if (p->s.c->ch.run[0].state >= want) {
			seen = true;
			/* the note that took it there lands too */
			for (int i = 0; i < 100 && fake_restoring(p); i++)
				pause_ms(1);
			run_end(p, &p->s);
			return true;
		}
		pause_ms(1);
	}
	return seen;
}

/* Both ends, as NCCL's proxy drives them, for rounds or until every request
 * in reqs[0, n) is done (n > 0); returns how many are. */
static int drive_done(struct fake_pair *p, struct gdx_request **reqs, bool *done, int n, int rounds)
{
	int got = 0;

	for (int t = 0; t < rounds && (!n || got < n); t++) {
		gdx_cq_poll(p->s.c);
		gdx_cq_poll(p->r.c);
		run_end(p, &p->s);
		run_end(p, &p->r);
		for (int i = 0; i < n; i++)
			if (!done[i] && reqs[i] && fake_test(reqs[i], NULL)) {
				done[i] = true;
				got++;
			}
		if (t % 64 == 63)
			pause_ms(1);
	}
	return got;
}

enum how { BY_CALL, BY_ASYNC_EVENT };

/* The interleaving; poll_between: the receiver polls once between the
 * notes (the control). Returns the receives done after 3,000 rounds. */
static int interleaving(enum how how, bool poll_between)
{
	struct fake_pair p;
	struct gdx_mr smr, rmr;
	struct gdx_request *rr[NMSG], *sr[NMSG];
	bool rdone[NMSG] = {0}, sdone[NMSG] = {0};
	char *sbuf = malloc(NMSG * MSGSZ), *rbuf = calloc(1, NMSG * MSGSZ);
	int got;

	ASSERT(sbuf && rbuf);
	for (int i = 0; i < NMSG * MSGSZ; i++)
		sbuf[i] = (char)(i * 13 + 5);
	fake_pair_make(&p, &(struct fake_opts){.nrails = 2, .nqps = 1});
	/* rail 1 stands by (a far NIC of the device, NCCL_GDX_STANDBY): the
	 * data goes on rail 0 alone, so that its CQ holds more than a poll's
	 * batch */
	p.s.c->ch.standby = 1u << 1;
	fake_mr(&p, sbuf, NMSG * MSGSZ, &smr);
	fake_mr(&p, rbuf, NMSG * MSGSZ, &rmr);
	for (int i = 0; i < NMSG; i++) {
		rr[i] = fake_irecv(&p, rbuf + i * MSGSZ, MSGSZ, 1, &rmr);
		ASSERT(rr[i] != NULL);
	}
	ASSERT_EQ(fake_test(rr[NMSG - 1], NULL), 0); /* a held receive tested: they go */
	run_end(&p, &p.r);
	for (int i = 0; i < NMSG; i++) {
		/* as NCCL's proxy: isend again until it takes it */
		for (int t = 0;
		     t < 100 && !(sr[i] = fake_isend(&p, sbuf + i * MSGSZ, MSGSZ, 1, &smr)); t++) {
			run_end(&p, &p.s);
			gdx_cq_poll(p.s.c);
		}
		ASSERT(sr[i] != NULL);
	}
	run_end(&p, &p.s);
	ASSERT_EQ(p.r.cq[0].tail - p.r.cq[0].head, NMSG); /* every immediate on rail 0 */
	for (int i = 0; i < NMSG; i++)
		sdone[i] = fake_test(sr[i], NULL);
	for (int i = 0; i < NMSG; i++)
		ASSERT(sdone[i]); /* acknowledged: the sender's log is empty */
	ASSERT(p.s.c->ch.rails[0].qps[0].log->head == p.s.c->ch.rails[0].qps[0].log->tail);

	/* the sender takes rail 0 out; its DOWN note lands by rail 1 */
	if (how == BY_CALL)
		gdx_rail_failed(p.s.c, 0, "the test took it out");
	else
		__atomic_or_fetch(&p.s.c->ch.async_failed, 1u, __ATOMIC_RELAXED);
	ASSERT(sender_alone(&p, GDX_RAIL_DOWN, 100));
	if (poll_between) {
		ASSERT_EQ(p.s.c->ch.run[0].state, GDX_RAIL_DOWN);
		for (int i = 0; i < 2 * GDX_PORT_CHECK_POLLS; i++) {
			gdx_cq_poll(p.r.c);
			run_end(&p, &p.r);
		}
		ASSERT(p.r.c->ch.run[0].state != GDX_RAIL_UP); /* it read the DOWN */
	}
	/* the RESTORE lands in the same slot */
	ASSERT(sender_alone(&p, GDX_RAIL_RESTORING, 1000));
	got = drive_done(&p, rr, rdone, NMSG, 3000);
	printf("  %s, the receiver %s between the notes: %d of %d receives done after 3,000 "
	       "rounds; rail 0 %s on the sender\n",
	       how == BY_CALL ? "gdx_rail_failed" : "an async event",
	       poll_between ? "polled" : "idle", got, NMSG,
	       gdx_rail_state_name(p.s.c->ch.run[0].state));
	for (int i = 0; i < NMSG * MSGSZ && got == NMSG; i++)
		if (rbuf[i] != sbuf[i])
			gdx_test_fail(__FILE__, __LINE__,
				      "byte %d of the receives is 0x%02x, not 0x%02x", i,
				      (unsigned char)rbuf[i], (unsigned char)sbuf[i]);
	/* and the rail comes back, carrying again */
	if (got == NMSG) {
		for (int t = 0; t < 3000 && p.s.c->ch.run[0].state != GDX_RAIL_UP; t++)
			drive_done(&p, rr, rdone, 0, 64);
		ASSERT_EQ(p.s.c->ch.run[0].state, GDX_RAIL_UP);
		ASSERT_EQ(p.r.c->ch.run[0].state, GDX_RAIL_UP);
	}
	fake_pair_free(&p);
	free(sbuf);
	free(rbuf);
	return got;
}

static void test_restore_over_unread_down_by_call(void)
{
	setup("1");
	ASSERT_EQ(interleaving(BY_CALL, false), NMSG);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "its RESTORE note came before");
}

static void test_restore_over_unread_down_by_async_event(void)
{
	setup("1");
	ASSERT_EQ(interleaving(BY_ASYNC_EVENT, false), NMSG);
}

static void test_control_polled_between_the_notes(void)
{
	setup("50"); /* time to poll between the notes */
	ASSERT_EQ(interleaving(BY_CALL, true), NMSG);
}

/* The idle receiver: nothing posted while the sender takes rail 0, the
 * control rail, out and resets it; then one receive, whose clear-to-send
 * goes on rail 0, still up here; the receiver reads RESTORE before its NIC
 * has carried it (read_first), or after, when the sender's reset QP never
 * answered it. Either way the sender must find it, on rail 1. */
static void idle_receiver(bool read_first)
{
	struct fake_pair p;
	struct gdx_mr smr, rmr;
	struct gdx_request *r, *s = NULL;
	char sbuf[MSGSZ], rbuf[MSGSZ] = {0};
	bool done[2] = {0};

	for (int i = 0; i < MSGSZ; i++)
		sbuf[i] = (char)(i + 1);
	fake_pair_make(&p, &(struct fake_opts){.nrails = 2, .nqps = 1});
	fake_mr(&p, sbuf, MSGSZ, &smr);
	fake_mr(&p, rbuf, MSGSZ, &rmr);
	gdx_rail_failed(p.s.c, 0, "the test took it out");
	ASSERT(sender_alone(&p, GDX_RAIL_DOWN, 100));
	ASSERT(sender_alone(&p, GDX_RAIL_RESTORING, 1000));
	ASSERT_EQ(p.r.c->ch.run[0].state, GDX_RAIL_UP); /* it read nothing */
	r = fake_irecv(&p, rbuf, MSGSZ, 3, &rmr);
	ASSERT(r != NULL);
	ASSERT_EQ(fake_pending(fake_qp_of(&p.r, 0, 0)), 1); /* on rail 0 */
	if (read_first) {
		/* a healthy comm reads notes every GDX_PORT_CHECK_POLLS polls;
		 * a write no QP answers fails only after its retries, seconds */
		for (int i = 0; i < 2 * GDX_PORT_CHECK_POLLS; i++)
			gdx_cq_poll(p.r.c);
		ASSERT(p.r.c->ch.run[0].state != GDX_RAIL_UP);
	} else {
		run_end(&p, &p.r);
		ASSERT(fake_qp_of(&p.r, 0, 0)->error); /* the sender's QP never answered */
	}
	for (int t = 0; t < 3000 && !s; t++) {
		drive_done(&p, &r, done, 1, 1);
		s = fake_isend(&p, sbuf, MSGSZ, 3, &smr);
		pause_ms(1); /* a restore's thread works meanwhile */
	}
	printf("  the receiver read RESTORE %s its NIC carried the clear-to-send: the sender "
	       "%s it\n",
	       read_first ? "before" : "after", s ? "found" : "never found");
	ASSERT(s != NULL);
	{
		struct gdx_request *both[2] = {r, s};

		ASSERT_EQ(drive_done(&p, both, done, 2, 3000), 2);
	}
	ASSERT(memcmp(rbuf, sbuf, MSGSZ) == 0);
	fake_pair_free(&p);
}

static void test_idle_receiver_reads_restore_first(void)
{
	setup("1");
	idle_receiver(true);
}

static void test_idle_receiver_clear_to_send_unanswered(void)
{
	setup("1");
	idle_receiver(false);
}

GDX_TESTS_MAIN(TEST(test_restore_over_unread_down_by_call, 60),
	       TEST(test_restore_over_unread_down_by_async_event, 60),
	       TEST(test_control_polled_between_the_notes, 60),
	       TEST(test_idle_receiver_reads_restore_first, 60),
	       TEST(test_idle_receiver_clear_to_send_unanswered, 60))
