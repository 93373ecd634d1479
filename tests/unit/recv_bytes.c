/* SPDX-License-Identifier: MIT */
/*
 * The receive side's debug invariant (gdx_req.h), with scripted verbs
 * (gdx_fake_nic.h): a piece whose immediate arrives while its bytes are not
 * in the buffer stops a debug build there and then, naming the piece and
 * the QP; counts alone would have completed the receive. The made-up NIC
 * carries a piece's bulk WRITE out without placing its bytes, as a WRITE
 * gone to another QP would be. Debug builds (make DEBUG=1, the sanitizer
 * builds) must abort; a release build shows the fault is real: the receive
 * completes with the buffer's old bytes. Each mode the data path ends a
 * piece in: adaptive routing (bulk, then a zero-byte immediate), a chunked
 * piece whose last WRITE carries the immediate, and a grouped receive.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "data/gdx_cq.h"
#include "data/gdx_p2p.h"

#include "gdx_fake_nic.h"
#include "gdx_test.h"

#define PART (16u << 10)

/* Sends and receives n buffers (a group when n > 1; else one message
 * striped over both rails) with rail 1's first data WRITE astray; returns
 * the first wrong byte of the receive once it completes, or -1. */
static long run(int n, bool ar)
{
	struct fake_pair p;
	struct gdx_mr smr, rmr;
	struct gdx_request *r = NULL, *s[GDX_MAX_RECVS] = {0};
	size_t total = (size_t)n * PART;
	char *sbuf = malloc(total), *rbuf = calloc(1, total);
	void *data[GDX_MAX_RECVS];
	uint64_t sizes[GDX_MAX_RECVS];
	int tags[GDX_MAX_RECVS], done = 0, got[GDX_MAX_RECVS];
	struct gdx_mr *mrs[GDX_MAX_RECVS];
	long bad = -1;

	ASSERT(sbuf && rbuf);
	for (size_t i = 0; i < total; i++)
		sbuf[i] = (char)(i * 5 + 3);
	fake_pair_make(&p, &(struct fake_opts){.nrails = 2, .nqps = 1, .ar = ar});
	fake_mr(&p, sbuf, total, &smr);
	fake_mr(&p, rbuf, total, &rmr);
	for (int i = 0; i < n; i++) {
		data[i] = rbuf + (size_t)i * PART;
		sizes[i] = PART;
		tags[i] = i;
		mrs[i] = &rmr;
	}
	ASSERT_EQ(gdx_irecv(p.r.rc, n, data, sizes, tags, mrs, NULL, &r), 0);
	ASSERT(r != NULL);
	fake_run_all(&p);
	for (int i = 0; i < n; i++) {
		ASSERT_EQ(gdx_isend(p.s.sc, sbuf + (size_t)i * PART, n > 1 ? PART : total, i, &smr,
				    NULL, &s[i]),
			  0);
		ASSERT(s[i] != NULL);
	}
	/* a group goes on one rail: its first buffer astray, wherever */
	for (int rail = 0; rail < 2; rail++)
		if (n == 1 ? rail == 1 : fake_pending(fake_qp_of(&p.s, rail, 0)) > 0) {
			fake_drop_bytes(fake_qp_of(&p.s, rail, 0), 1);
			break;
		}
	for (int i = 0; i < 100 && !done; i++) {
		fake_run_all(&p);
		ASSERT_EQ(gdx_test(r, &done, got), 0);
	}
	ASSERT(done);
	for (size_t i = 0; i < total && bad < 0; i++)
		if (rbuf[i] != sbuf[i])
			bad = (long)i;
	fake_pair_free(&p);
	free(sbuf);
	free(rbuf);
	return bad;
}

/* In a child: a debug build must die of SIGABRT saying what broke. */
static void expect(int n, bool ar, const char *what)
{
	char out[4096] = "";
	int fds[2], status;
	size_t len = 0;
	ssize_t k;
	pid_t child;

	setenv("NCCL_GDX_STRIPE_MIN", "4096", 1);
	setenv("NCCL_GDX_STRIPE_WEIGHTED", "0", 1);
	fake_init();
#ifndef GDX_DEBUG
	{
		long bad = run(n, ar);

		printf("  release build, %s: the receive completes; byte %ld is wrong\n", what,
		       bad);
		ASSERT(bad >= 0);
		return;
	}
#endif
	ASSERT_EQ(pipe(fds), 0);
	fflush(stdout);
	child = fork();
	ASSERT(child >= 0);
	if (child == 0) {
		dup2(fds[1], 2);
		run(n, ar);
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (k = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)k;
	out[len] = '\0';
	close(fds[0]);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	printf("  debug build, %s: %s\n", what, strstr(out, "invariant broken") ?: out);
	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	ASSERT_STR_CONTAINS(out, "invariant broken: piece");
	ASSERT_STR_CONTAINS(out, "were not all placed when its immediate came by rail");
}

static void test_adaptive_routing_piece_without_its_bytes(void)
{
	expect(1, true, "adaptive routing");
}

static void test_chunked_piece_without_its_bytes(void)
{
	expect(1, false, "chunked, the immediate on the last WRITE");
}

static void test_grouped_buffer_without_its_bytes(void)
{
	expect(4, false, "a grouped receive of 4");
}

GDX_TESTS_MAIN(TEST(test_adaptive_routing_piece_without_its_bytes, 60),
	       TEST(test_chunked_piece_without_its_bytes, 60),
	       TEST(test_grouped_buffer_without_its_bytes, 60))
