/* SPDX-License-Identifier: MIT */
/*
 * The largest message, through the net API's calls on comms of scripted
 * verbs (gdx_fake_nic.h): test reports a message's size in an int, so
 * maxP2pBytes is INT_MAX. A message of INT_MAX bytes goes and is reported
 * whole on both ends; one byte more is refused by isend and irecv, with a
 * line naming the size and the limit. 0.4.0 took 2 GiB and test reported
 * it as INT_MIN.
 *
 * The buffers are untouched address space (MAP_NORESERVE, never written:
 * the zero page when read): the made-up NIC moves no data bytes here, only
 * the control writes (the size record, the clear-to-send), which is what
 * carries the size; a debug build's records sum the zeros.
 */
#include <limits.h>
#include <sys/mman.h>

#include "net/gdx_net.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static void test_int_max_goes_and_one_more_is_refused(void)
{
	const size_t span = (size_t)INT_MAX + 4096;
	char *sbuf = mmap(NULL, span, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *rbuf = mmap(NULL, span, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	struct fake_pair p;
	struct gdx_mr smr, rmr;
	void *s = NULL, *r = NULL, *rdata = rbuf, *rmh = &rmr;
	size_t size = INT_MAX, over = (size_t)INT_MAX + 1;
	int tag = 3, rsize = -1, ssize = -1, done = 0;

	ASSERT(sbuf != MAP_FAILED && rbuf != MAP_FAILED);
	fake_init();
	fake_pair_make(&p, &(struct fake_opts){.nrails = 2, .nqps = 1, .no_copy = true});
	fake_mr(&p, sbuf, span, &smr);
	fake_mr(&p, rbuf, span, &rmr);

	/* one byte over: refused on both sides, by name */
	ASSERT_NE(gdx_net_irecv(p.r.rc, 1, &rdata, &over, &tag, &rmh, NULL, &r), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "irecv: 2147483648 bytes is more than maxP2pBytes (2147483647)");
	ASSERT_NE(gdx_net_isend(p.s.sc, sbuf, over, tag, &smr, NULL, &s), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "isend: 2147483648 bytes is more than maxP2pBytes (2147483647)");
	ASSERT(p.s.c->err == 0 && p.r.c->err == 0); /* a refused call fails nothing */
	gdx_test_log_clear();

	/* INT_MAX bytes: striped over both rails, reported whole */
	ASSERT_EQ(gdx_net_irecv(p.r.rc, 1, &rdata, &size, &tag, &rmh, NULL, &r), ncclSuccess);
	ASSERT(r != NULL);
	fake_run_all(&p);
	ASSERT_EQ(gdx_net_isend(p.s.sc, sbuf, size, tag, &smr, NULL, &s), ncclSuccess);
	ASSERT(s != NULL);
	for (int i = 0; i < 1000 && !done; i++) {
		fake_run_all(&p);
		ASSERT_EQ(gdx_net_test(r, &done, &rsize), ncclSuccess);
	}
	ASSERT(done);
	done = 0;
	for (int i = 0; i < 1000 && !done; i++) {
		fake_run_all(&p);
		ASSERT_EQ(gdx_net_test(s, &done, &ssize), ncclSuccess);
	}
	ASSERT(done);
	printf("  a message of INT_MAX bytes: receiver reports %d, sender %d\n", rsize, ssize);
	ASSERT_EQ(rsize, INT_MAX);
	ASSERT_EQ(ssize, INT_MAX);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	fake_pair_free(&p);
	munmap(sbuf, span);
	munmap(rbuf, span);
}

GDX_TESTS_MAIN(TEST(test_int_max_goes_and_one_more_is_refused, 60))
