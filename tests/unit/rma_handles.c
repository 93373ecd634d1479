/* SPDX-License-Identifier: MIT */
/*
 * A neighbour's status word in createContext's and regMrSym's exchanges
 * that no errno could be (0x80000000, whose negation as an int overflows,
 * and the other extremes) is a malformed record, refused, in well-defined
 * arithmetic (UBSan).
 */
#include <stdlib.h>

#include "sys/gdx_log.h"
#include "rma/gdx_rma_boot.h"
#include "rma/gdx_rma_comm.h"
#include "rma/gdx_rma_conn.h"
#include "rma/gdx_rma_reg.h"

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

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

GDX_TESTS_MAIN(TEST(test_context_status_words, 30), TEST(test_window_status_words, 30))
