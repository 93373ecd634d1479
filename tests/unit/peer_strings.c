/* SPDX-License-Identifier: MIT */
/*
 * A hostile peer's strings in the plugin's own log lines (issue 47, rows 4
 * and 4b, S1), over scripted verbs (gdx_fake_nic.h): a peer that names its
 * device with byte-count words, a quote and a backslash, and sends a DOWN
 * note holding the same words. Each line that shows them must show them
 * quoted and escaped (gdx_log_quote), so that what follows the closing
 * quote is the plugin's: the peer-gone WARN, the stall WARN, and a rail
 * taken out for the peer's note.
 *
 * With GDX_TEST_NCCL_LOG=FILE the lines are also added to FILE as NCCL writes them
 * ("host:pid:tid [dev] NCCL WARN ..."): tests/check/doctor_log.sh reads
 * that log with gdx-doctor log, so that the forgery it refuses is the line
 * the plugin really writes, not one written by hand.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "data/gdx_cq.h"
#include "data/gdx_failover.h"
#include "rail/gdx_stall.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

/* The name and the note: the words of a comm's close line, then a quote
 * and a backslash, which the quoting must escape. */
#define HOSTILE_NAME "x\" closed: 0 bytes GPU-direct, 18446744073709551615 bytes \\"
#define HOSTILE_NOTE "x closed: 0 bytes GPU-direct, 18446744073709551615 bytes"
#define QUOTED_NAME  "\"x\\\" closed: 0 bytes GPU-direct, 18446744073709551615 bytes \\\\\""
/* An address of the shape the plugin writes (the fake's is words). */
#define PEER_ADDR "198.18.0.2:41767"

static FILE *nccl_log;

static void nccl_shaped_logger(ncclDebugLogLevel level, unsigned long flags, const char *file,
			       int line, const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gdx_test_logger(level, flags, file, line, "%s", msg);
	if (nccl_log && level == NCCL_LOG_WARN)
		fprintf(nccl_log, "node1:1234:1299 [0] %s:%d NCCL WARN %s\n", file, line, msg);
	else if (nccl_log)
		fprintf(nccl_log, "node1:1234:1299 [0] NCCL INFO %s\n", msg);
}

static void setup(void)
{
	static bool done;
	const char *path = getenv("GDX_TEST_NCCL_LOG");

	if (done)
		return;
	done = true;
	setenv("NCCL_GDX_FAILOVER", "1", 1);
	setenv("NCCL_GDX_STALL_MS", "100", 1);
	fake_init();
	gdx_log_set(nccl_shaped_logger);
	if (path) {
		nccl_log = fopen(path, "a"); /* each test in a process of its own */
		ASSERT(nccl_log != NULL);
		setvbuf(nccl_log, NULL, _IOLBF, 0);
	}
}

static void hostile_pair(struct fake_pair *p, int nrails)
{
	setup();
	fake_pair_make(p, &(struct fake_opts){.nrails = nrails, .nqps = 1});
	snprintf(p->s.c->peer, sizeof(p->s.c->peer), PEER_ADDR);
	snprintf(p->r.c->peer, sizeof(p->r.c->peer), PEER_ADDR);
	snprintf(p->s.c->peer_dev, sizeof(p->s.c->peer_dev), "%s", HOSTILE_NAME);
	snprintf(p->r.c->peer_dev, sizeof(p->r.c->peer_dev), "%s", HOSTILE_NAME);
	gdx_test_log_clear();
}

/* The first WARN holding needle, whole, or the test fails. */
static const char *warn_with(const char *needle)
{
	static char line[2048];
	const char *all = gdx_test_warnings(), *w = strstr(all, needle), *start;

	ASSERT(w != NULL);
	for (start = w; start > all && start[-1] != '\n'; start--)
		;
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(start, "\n"), start);
	return line;
}

static void test_peer_gone_quotes_its_name(void)
{
	struct fake_pair p;

	hostile_pair(&p, 1);
	close(p.r.sock[1]); /* the sender's process is gone */
	p.r.sock[1] = -1;
	p.r.c->last_check_ms = 0;
	gdx_cq_check_peer(p.r.c);
	ASSERT_STR_CONTAINS(warn_with("closed its connection with requests pending"),
			    "fake0: peer " PEER_ADDR " (" QUOTED_NAME ") closed its connection");
	fake_pair_free(&p);
}

static void test_stall_quotes_its_name(void)
{
	struct fake_pair p;
	struct gdx_qp *q;

	hostile_pair(&p, 1);
	/* one signaled WR out that never completes, looked at twice */
	q = &p.s.c->ch.rails[0].qps[0];
	q->wr_posted++;
	gdx_stall_check(&p.s.c->ch, 1000);
	gdx_stall_check(&p.s.c->ch, 1000 + 10 * (uint64_t)gdx_params.stall_ms);
	ASSERT_STR_CONTAINS(warn_with("has had no completion"),
			    "(rail 0) to " PEER_ADDR " (" QUOTED_NAME ") has had no completion");
	q->wr_posted--;
	fake_pair_free(&p);
}

/* The sender's rail 0 fails with the hostile words as what it saw; its
 * DOWN note takes them to the receiver, whose WARN quotes them as the
 * cause (and the peer's name before it). */
static void test_down_note_quoted(void)
{
	struct fake_pair p;
	const char *w;

	hostile_pair(&p, 2);
	gdx_rail_failed(p.s.c, 0, HOSTILE_NOTE);
	for (int t = 0; t < 2000 && !strstr(gdx_test_warnings(), "the sender saw"); t++) {
		gdx_cq_poll(p.s.c);
		gdx_cq_poll(p.r.c);
		if (!fake_restoring(&p))
			fake_run_all(&p);
		nanosleep(&(struct timespec){0, 100000}, NULL);
	}
	w = warn_with("the sender saw");
	ASSERT_STR_CONTAINS(w, "fake0+fake1: rail 0 (fake0 port 1, peer " QUOTED_NAME
			       ") taken out of the connection with " PEER_ADDR " at ");
	ASSERT_STR_CONTAINS(w, ": the sender saw: \"" HOSTILE_NOTE "\"; ");
	/* the sender's own line: its cause is its own words, the name quoted */
	ASSERT_STR_CONTAINS(warn_with("peer " QUOTED_NAME ") taken out"), HOSTILE_NOTE);
	fake_pair_free(&p);
}

GDX_TESTS_MAIN(TEST(test_peer_gone_quotes_its_name, 30), TEST(test_stall_quotes_its_name, 30),
	       TEST(test_down_note_quoted, 60))
