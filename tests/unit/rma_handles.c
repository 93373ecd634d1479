/* SPDX-License-Identifier: MIT */
/*
 * What the RMA tables do with a handle the plugin never handed out, or
 * took back: each of ncclRmaPlugin_v16's entry points given one (an init
 * context, a listen comm, a collective comm, a block of contexts) whose
 * first word is the right kind, live or freed, refuses it with
 * ncclInvalidArgument and a WARN naming the call, without reading it (the
 * freed ones would be a use-after-free under ASan). And a neighbour's status
 * word in createContext's and regMrSym's exchanges that no errno could be
 * (0x80000000, whose negation as an int overflows, and the other extremes)
 * is a malformed record, refused, in well-defined arithmetic (UBSan).
 * tests/vm/rma_handles.c drives the same misuse on real handles.
 */
#include <stdlib.h>

#include <nccl/rma.h>
#include "sys/gdx_log.h"
#include "rma/gdx_rma_boot.h"
#include "rma/gdx_rma_comm.h"
#include "rma/gdx_rma_conn.h"
#include "rma/gdx_rma_reg.h"

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

extern const ncclRma_v16_t ncclRmaPlugin_v16;
#define T (&ncclRmaPlugin_v16)

/* Look-alikes of what init, listen, connect and createContext return. */
struct forged {
	struct gdx_rma_init *init;
	struct gdx_rma_listen *lc;
	struct gdx_rma_coll *coll;
	struct gdx_rma_ctx *x;
};

static void forge(struct forged *f)
{
	f->init = calloc(1, sizeof(*f->init));
	f->lc = calloc(1, sizeof(*f->lc));
	f->coll = calloc(1, sizeof(*f->coll));
	f->x = calloc(1, sizeof(*f->x));
	ASSERT(f->init && f->lc && f->coll && f->x);
	f->init->kind = GDX_KIND_RMA_INIT;
	f->lc->kind = GDX_KIND_RMA_LISTEN;
	f->lc->owner = f->init;
	f->coll->kind = GDX_KIND_RMA_COLL;
	f->coll->owner = f->init;
	f->coll->nranks = 1;
	f->x->kind = GDX_KIND_RMA_CTX;
	f->x->coll = f->coll;
	f->x->ncontexts = 1;
}

static void unforge(struct forged *f)
{
	free(f->init);
	free(f->lc);
	free(f->coll);
	free(f->x);
}

/* res is the refusal, and its WARN names call. */
static void refused(ncclResult_t res, const char *call)
{
	ASSERT_EQ(res, ncclInvalidArgument);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), call);
	gdx_test_log_clear();
}

/* Every entry point that takes one of f's handles, given it. */
static void every_call(const struct forged *f)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE] = {0}, buf[64];
	void *handles[1] = {handle}, *out = NULL, *req = NULL;
	ncclRmaConfig_v16_t cfg = {.nContexts = 1, .trafficClass = -1, .rankStride = 1};
	ncclRmaProperties_v16_t props;
	bool has = false;
	int done = 0;

	gdx_test_log_clear();
	refused(T->listen(f->init, 0, handle, &out), "RMA listen");
	refused(T->connect(NULL, handles, 1, 0, f->lc, &out), "RMA connect");
	refused(T->getRmaProperties(f->coll, &props), "RMA getRmaProperties");
	refused(T->createContext(f->coll, &cfg, &out), "RMA createContext");
	refused(T->regMrSym(f->coll, buf, sizeof(buf), NCCL_PTR_HOST, 0, &out), "RMA regMrSym");
	refused(T->regMrSymDmaBuf(f->coll, buf, sizeof(buf), NCCL_PTR_HOST, 0, -1, 0, &out),
		"RMA regMrSymDmaBuf");
	refused(T->deregMrSym(f->coll, buf), "RMA deregMrSym");
	refused(T->test(f->coll, buf, &done), "RMA test");
	refused(T->iput(f->x, 0, 0, buf, 8, 0, buf, 0, 0, &req), "RMA iput");
	refused(T->iputSignal(f->x, 0, 0, NULL, 0, 0, NULL, 0, 0, buf, 1, NCCL_NET_SIGNAL_OP_INC,
			      true, 0, &req),
		"RMA iputSignal");
	refused(T->iget(f->x, 0, 0, buf, 8, 0, buf, 0, 0, &req), "RMA iget");
	refused(T->iflush(f->x, 0, buf, 0, &req), "RMA iflush");
	refused(T->rmaProgress(f->x), "RMA rmaProgress");
	refused(T->queryLastError(f->x, &has), "RMA queryLastError");
	refused(T->destroyContext(f->x), "RMA destroyContext");
	refused(T->closeColl(f->coll), "RMA closeColl");
	refused(T->closeListen(f->lc), "RMA closeListen");
	refused(T->finalize(f->init), "RMA finalize");
	/* and each handle where another kind is asked for */
	refused(T->rmaProgress(f->coll), "RMA rmaProgress");
	refused(T->regMrSym(f->x, buf, sizeof(buf), NCCL_PTR_HOST, 0, &out), "RMA regMrSym");
	refused(T->closeColl(f->lc), "RMA closeColl");
	ASSERT(out == NULL && req == NULL);
}

/* Live memory with the right first word: still not the plugin's. */
static void test_foreign_handles_refused(void)
{
	struct forged f;

	gdx_log_set(gdx_test_logger);
	forge(&f);
	every_call(&f);
	every_call(&f); /* nothing was taken the first time round */
	unforge(&f);
}

/* Freed, as a handle is once closed: never read (ASan would say). */
static void test_freed_handles_refused(void)
{
	struct forged f;

	gdx_log_set(gdx_test_logger);
	forge(&f);
	unforge(&f);
	every_call(&f);
}

static const uint32_t bad_words[] = {0x80000000u, 0xffffffffu, 0x7fffffffu, 0x80000001u,
				     GDX_RMA_ERRNO_MAX + 1};

/* createContext's status words: rank 1's bad word fails the call with
 * -EPROTO and says which rank; an errno is passed on as it is. */
static void test_context_status_words(void)
{
	struct gdx_rma_rank ranks[3] = {0};
	struct gdx_rma_coll c = {.nranks = 3, .rank = 0, .ranks = ranks};
	uint8_t all[3 * 8];

	gdx_log_set(gdx_test_logger);
	snprintf(ranks[1].addr, sizeof(ranks[1].addr), "10.0.0.2:7000");
	for (size_t i = 0; i < sizeof(bad_words) / sizeof(bad_words[0]); i++) {
		memset(all, 0, sizeof(all));
		gdx_rma_put32(all + 8, bad_words[i]);
		gdx_test_log_clear();
		ASSERT_EQ(gdx_rma_all_ok(&c, all, 8, "createContext"), -EPROTO);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "rank 1 (10.0.0.2:7000) sent status");
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "which is no errno");
	}
	memset(all, 0, sizeof(all));
	ASSERT_EQ(gdx_rma_all_ok(&c, all, 8, "createContext"), 0);
	gdx_rma_put32(all + 16, ECONNRESET);
	ASSERT_EQ(gdx_rma_all_ok(&c, all, 8, "createContext"), -ECONNRESET);
	gdx_rma_put32(all + 16, GDX_RMA_ERRNO_MAX);
	ASSERT_EQ(gdx_rma_all_ok(&c, all, 8, "createContext"), -GDX_RMA_ERRNO_MAX);
}

/* regMrSym's records: the same words in rank 0's status, read by rank 1. */
static void test_window_status_words(void)
{
	struct gdx_rma_rank ranks[2] = {0};
	struct gdx_rma_coll c = {.nranks = 2, .rank = 1, .ranks = ranks};
	struct gdx_rma_mr_rank mr_ranks[2];
	struct gdx_rma_mr mh = {.ranks = mr_ranks};
	uint8_t all[2 * 4096];

	gdx_log_set(gdx_test_logger);
	snprintf(ranks[0].addr, sizeof(ranks[0].addr), "10.0.0.1:7000");
	for (size_t i = 0; i < sizeof(bad_words) / sizeof(bad_words[0]); i++) {
		memset(all, 0, sizeof(all));
		gdx_rma_put32(all, bad_words[i]);
		gdx_test_log_clear();
		ASSERT_EQ(gdx_rma_mr_unpack(&c, all, &mh), -EPROTO);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "rank 0 (10.0.0.1:7000) sent status");
		ASSERT_STR_CONTAINS(gdx_test_warnings(), "which is no errno");
	}
	memset(all, 0, sizeof(all));
	gdx_rma_put32(all, EIO);
	gdx_test_log_clear();
	ASSERT_EQ(gdx_rma_mr_unpack(&c, all, &mh), -EIO);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "could not register its buffer");
}

GDX_TESTS_MAIN(TEST(test_foreign_handles_refused, 30), TEST(test_freed_handles_refused, 30),
	       TEST(test_context_status_words, 30), TEST(test_window_status_words, 30))
