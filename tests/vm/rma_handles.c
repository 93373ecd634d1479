/* SPDX-License-Identifier: MIT */
/*
 * The RMA tables (ncclRmaPlugin_v16) given back handles NCCL should not
 * give: a group of one rank (its connection to itself, on rxe0), two
 * collective comms of it, and every handle used after it was taken back or
 * with the wrong comm. Each misuse is an error with a WARN naming it, never
 * a read of freed memory (tests/vm/asan.sh runs this under ASan): a second
 * destroyContext, rmaProgress, queryLastError and iput after
 * destroyContext, test of a request whose context was destroyed, of a
 * completed request, of another comm's or of a made-up one, deregMrSym
 * twice, regMrSym (after closeColl in NCCL's order and out of it),
 * createContext, test and destroyContext after closeColl, closeColl with a
 * context and a window left (released, then ncclInvalidUsage: NCCL
 * destroys and deregisters first), a second closeColl, closeListen and
 * finalize, and listen after finalize.
 */
#include <stdlib.h>
#include <string.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_rma_drv.h"
#include "gdx_test.h"

#define WIN 4096

struct one {
	struct gdx_rdrv d;
	void *coll, *x, *mh;
	char *buf;
};

static void *xalloc(size_t n)
{
	void *p = NULL;

	ASSERT_EQ(posix_memalign(&p, 4096, n), 0);
	memset(p, 0, n);
	return p;
}

/* A group of one on device 0, as NCCL connects one: listen, connect,
 * closeListen; then a block of one context and a window. */
static void coll_up(struct one *o, void **coll, void **x, void **mh)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE] = {0};
	void *handles[1] = {handle}, *lc = NULL;

	ASSERT_EQ(gdx_rdrv_listen(&o->d, 0, handle, &lc), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_connect(&o->d, NULL, handles, 1, 0, lc, coll), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_listen(&o->d, lc), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_create_context(&o->d, *coll, 1, -1, 1, x), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_reg(&o->d, *coll, o->buf, WIN, 0, mh), ncclSuccess);
}

static void one_up(struct one *o)
{
	memset(o, 0, sizeof(*o));
	setenv("NCCL_GDX_RMA", "1", 1);
	gdx_rdrv_open(&o->d, 16);
	ASSERT_EQ(gdx_rdrv_init(&o->d, 0x5a), ncclSuccess);
	o->buf = xalloc(WIN);
	coll_up(o, &o->coll, &o->x, &o->mh);
	gdx_test_log_clear();
}

static void one_down(struct one *o)
{
	ASSERT_EQ(gdx_rdrv_finalize(&o->d), ncclSuccess);
	free(o->buf);
}

/* res is the refusal (ncclInvalidArgument unless said), its WARN says what. */
static void refused_as(ncclResult_t res, ncclResult_t want, const char *warning)
{
	ASSERT_EQ(res, want);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), warning);
	gdx_test_log_clear();
}

static void refused(ncclResult_t res, const char *warning)
{
	refused_as(res, ncclInvalidArgument, warning);
}

/* An 8-byte put to itself, in flight. */
static void *put(struct one *o, void *x, void *mh)
{
	void *req = NULL;

	ASSERT_EQ(gdx_rdrv_iput(&o->d, x, 0, 0, mh, 8, 64, mh, 0, 0, &req), ncclSuccess);
	ASSERT(req != NULL);
	return req;
}

static void test_destroyed_context(void)
{
	struct one o;
	void *req, *other = NULL;
	bool has = false;
	int done = 0;

	one_up(&o);
	req = put(&o, o.x, o.mh);
	/* destroyed with the put in flight: said, and the request goes with it */
	ASSERT_EQ(gdx_rdrv_destroy_context(&o.d, o.x), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "still in flight are dropped");
	gdx_test_log_clear();
	refused(gdx_rdrv_destroy_context(&o.d, o.x), "RMA destroyContext: ");
	refused(gdx_rdrv_progress(&o.d, o.x), "RMA rmaProgress: ");
	refused(gdx_rdrv_query_error(&o.d, o.x, &has), "RMA queryLastError: ");
	refused(gdx_rdrv_iput(&o.d, o.x, 0, 0, o.mh, 8, 0, o.mh, 0, 0, &other), "RMA iput: ");
	refused(gdx_rdrv_test(&o.d, o.coll, req, &done), "is not a request in flight");
	ASSERT(other == NULL && done == 0);
	ASSERT_EQ(gdx_rdrv_dereg(&o.d, o.coll, o.mh), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_coll(&o.d, o.coll), ncclSuccess);
	one_down(&o);
}

static void test_requests(void)
{
	struct one o;
	void *coll2 = NULL, *x2 = NULL, *mh2 = NULL, *req, *req2;
	char *buf2 = xalloc(WIN), made_up[256] = {0};
	int done = 0;

	one_up(&o);
	{
		char *keep = o.buf;

		o.buf = buf2;
		coll_up(&o, &coll2, &x2, &mh2);
		o.buf = keep;
	}
	req = put(&o, o.x, o.mh);
	req2 = put(&o, x2, mh2);
	/* another comm's request, and one that is no request */
	refused(gdx_rdrv_test(&o.d, o.coll, req2, &done), "is not a request in flight");
	refused(gdx_rdrv_test(&o.d, coll2, req, &done), "is not a request in flight");
	refused(gdx_rdrv_test(&o.d, o.coll, made_up, &done), "is not a request in flight");
	/* another comm's window */
	refused(gdx_rdrv_iput(&o.d, o.x, 0, 0, mh2, 8, 0, o.mh, 0, 0, &req2),
		"is not a registered window of this collective comm");
	ASSERT_EQ(gdx_rdrv_wait(&o.d, o.coll, o.x, req, 30), ncclSuccess);
	/* completed and tested: never again */
	refused(gdx_rdrv_test(&o.d, o.coll, req, &done), "is not a request in flight");
	ASSERT_EQ(done, 0);
	/* the other is still its comm's, and completes there */
	req2 = put(&o, x2, mh2);
	ASSERT_EQ(gdx_rdrv_wait(&o.d, coll2, x2, req2, 30), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_destroy_context(&o.d, x2), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_dereg(&o.d, coll2, mh2), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_coll(&o.d, coll2), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_destroy_context(&o.d, o.x), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_dereg(&o.d, o.coll, o.mh), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_coll(&o.d, o.coll), ncclSuccess);
	one_down(&o);
	free(buf2);
}

static void test_windows(void)
{
	struct one o;
	void *req = NULL;

	one_up(&o);
	ASSERT_EQ(gdx_rdrv_dereg(&o.d, o.coll, o.mh), ncclSuccess);
	refused(gdx_rdrv_dereg(&o.d, o.coll, o.mh), "is not a live window");
	refused(gdx_rdrv_iput(&o.d, o.x, 0, 0, o.mh, 8, 0, o.mh, 0, 0, &req),
		"is not a registered window");
	ASSERT(req == NULL);
	ASSERT_EQ(gdx_rdrv_destroy_context(&o.d, o.x), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_coll(&o.d, o.coll), ncclSuccess);
	one_down(&o);
}

/* A window a request in flight names stays registered: deregMrSym is
 * refused, and works once test has seen the request done (0.4.3 freed it
 * under the request, which then read it: no test caught it). */
static void test_window_of_a_request_in_flight(void)
{
	struct one o;
	void *req;
	int done = 0;

	one_up(&o);
	req = put(&o, o.x, o.mh);
	refused_as(gdx_rdrv_dereg(&o.d, o.coll, o.mh), ncclInvalidUsage,
		   "is named by 1 request(s) still in flight");
	for (double t0 = gdx_now_s(); !done && gdx_now_s() - t0 < 30;)
		ASSERT_EQ(gdx_rdrv_test(&o.d, o.coll, req, &done), ncclSuccess);
	ASSERT(done);
	ASSERT_EQ(gdx_rdrv_dereg(&o.d, o.coll, o.mh), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_destroy_context(&o.d, o.x), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_coll(&o.d, o.coll), ncclSuccess);
	one_down(&o);
}

static void test_closed_coll(void)
{
	struct one o;
	void *req, *mh = NULL, *x = NULL;
	ncclRmaProperties_v16_t props;
	int done = 0;

	one_up(&o);
	req = put(&o, o.x, o.mh);
	/* out of NCCL's order: what is left goes with it, and the call says so */
	refused_as(gdx_rdrv_close_coll(&o.d, o.coll), ncclInvalidUsage,
		   "1 context(s) not destroyed and 1 window(s) not deregistered first");
	refused(gdx_rdrv_reg(&o.d, o.coll, o.buf, WIN, 0, &mh), "RMA regMrSym: ");
	refused(gdx_rdrv_create_context(&o.d, o.coll, 1, -1, 1, &x), "RMA createContext: ");
	refused(gdx_rdrv_rma_props(&o.d, o.coll, &props), "RMA getRmaProperties: ");
	refused(gdx_rdrv_dereg(&o.d, o.coll, o.mh), "RMA deregMrSym: ");
	refused(gdx_rdrv_test(&o.d, o.coll, req, &done), "RMA test: ");
	/* its context went with it */
	refused(gdx_rdrv_destroy_context(&o.d, o.x), "RMA destroyContext: ");
	refused(gdx_rdrv_progress(&o.d, o.x), "RMA rmaProgress: ");
	refused(gdx_rdrv_close_coll(&o.d, o.coll), "RMA closeColl: ");
	ASSERT(mh == NULL && x == NULL);
	one_down(&o);
}

static void test_finalized(void)
{
	struct one o;
	char handle[NCCL_NET_HANDLE_MAXSIZE] = {0};
	void *lc = NULL, *lc2 = NULL;

	one_up(&o);
	ASSERT_EQ(gdx_rdrv_listen(&o.d, 0, handle, &lc), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_listen(&o.d, lc), ncclSuccess);
	refused(gdx_rdrv_close_listen(&o.d, lc), "RMA closeListen: ");
	ASSERT_EQ(gdx_rdrv_destroy_context(&o.d, o.x), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_dereg(&o.d, o.coll, o.mh), ncclSuccess);
	ASSERT_EQ(gdx_rdrv_close_coll(&o.d, o.coll), ncclSuccess);
	/* closed in NCCL's order, then used */
	refused(gdx_rdrv_reg(&o.d, o.coll, o.buf, WIN, 0, &lc2), "RMA regMrSym: ");
	one_down(&o);
	refused(gdx_rdrv_finalize(&o.d), "RMA finalize: ");
	refused(gdx_rdrv_listen(&o.d, 0, handle, &lc2), "RMA listen: ");
	ASSERT(lc2 == NULL);
}

GDX_TESTS_MAIN(TEST(test_destroyed_context, 60), TEST(test_requests, 60), TEST(test_windows, 60),
	       TEST(test_window_of_a_request_in_flight, 60), TEST(test_closed_coll, 60),
	       TEST(test_finalized, 60))
