/* SPDX-License-Identifier: MIT */
/*
 * The reuse matrix over three rails (the round and its checks:
 * tests/lib/gdx_reuse.h), on a fabric where every NIC reaches every other
 * (scripts/vm-run.sh --switch --pairs 3: rxe0-rxe5 on one bridge), each
 * device fused by makeVDevice, rxe1+rxe3+rxe5 -> rxe0+rxe2+rxe4. What two
 * rails and NCCL's own test order never reach:
 * - failover with two staggered link drops (rail 0's wire, then rail 1's
 *   while rail 0 is still out, each back in turn), under adaptive routing at
 *   threshold 0, grouped receives of 8, and 2 QPs split: a piece of several
 *   segments that a failed rail leaves behind must go again whole;
 * - receives 32 in flight, tested newest first and in random order, the
 *   sends too: a slot is staged again only once its receive is complete;
 * - one 4 MiB receive, then 31 small ones that complete while it is on its
 *   way;
 * - several senders into one shared receive comm, each with its tag, each
 *   testing its own oldest request (PXN, NCCL_NET_SHARED_COMMS).
 * Every byte is checked after the buffers are reused the moment test says
 * done. scripts/run-tests.sh runs it against the release build and, with
 * switch_reuse_debug.sh, against the debug build.
 */
#include "gdx_reuse.h"
#include "gdx_test.h"

/* Two: the second connection reuses what the first registered and wrote
 * (more rounds repeated it; GDX_REUSE_ROUNDS=N runs N). */
#define ROUNDS 2

#define MODE(fn, ...)                                                            \
	static void fn(void)                                                     \
	{                                                                        \
		reuse_run_mode(&(const struct reuse_mode){__VA_ARGS__}, ROUNDS); \
	}

#define AR0 "NCCL_GDX_ADAPTIVE_ROUTING=1 NCCL_GDX_AR_THRESHOLD=0"
#define FO  "NCCL_GDX_FAILOVER=1"
#define MiB (1u << 20)

MODE(test_three_rails_weighted, .fused = 3, .group = 1)
MODE(test_three_rails_failover_two_drops_adaptive_routing, .env = FO " " AR0, .fused = 3,
     .group = 1, .flaps = 2)
MODE(test_three_rails_failover_two_drops_grouped_8, .env = FO, .fused = 3, .group = 8, .flaps = 2)
MODE(test_three_rails_failover_two_drops_qps_2_split,
     .env = FO " NCCL_GDX_QPS_PER_CONNECTION=2 NCCL_GDX_SPLIT_DATA_ON_QPS=1", .fused = 3,
     .group = 1, .flaps = 2)
/* A receive side not called across a flap of the control rail and the
 * restore after it (issue 46), 20 rounds of a flap each. */
#define PAUSE_ROUNDS 20
#define PAUSE_MODE(fn, ...)                                                            \
	static void fn(void)                                                           \
	{                                                                              \
		reuse_run_mode(&(const struct reuse_mode){__VA_ARGS__}, PAUSE_ROUNDS); \
	}

PAUSE_MODE(test_three_rails_failover_receiver_stopped_grouped_8, .env = FO, .fused = 3, .group = 8,
	   .flaps = 1, .pause = REUSE_STOPPED, .window = 16, .max_msg = 256 << 10)
PAUSE_MODE(test_three_rails_failover_receiver_idle_unstriped,
	   .env = FO " NCCL_GDX_STRIPE_MIN=1073741824", .fused = 3, .group = 1, .flaps = 1,
	   .pause = REUSE_IDLE, .max_msg = 1 << 20)
MODE(test_three_rails_32_in_flight_newest_first, .fused = 3, .group = 1, .window = 32,
     .order = REUSE_NEWEST, .max_msg = 4 * MiB)
MODE(test_three_rails_32_in_flight_random_order, .env = AR0, .fused = 3, .group = 1, .window = 32,
     .order = REUSE_RANDOM, .max_msg = 4 * MiB)
MODE(test_three_rails_one_4_mib_then_31_small, .fused = 3, .group = 1, .window = 32,
     .order = REUSE_RANDOM, .big_first = true)
MODE(test_three_rails_four_senders_one_shared_comm, .fused = 3, .group = 1, .window = 32,
     .senders = 4, .max_msg = 4 * MiB)

GDX_TESTS_MAIN(TEST(test_three_rails_weighted, 600),
	       TEST(test_three_rails_failover_two_drops_adaptive_routing, 900),
	       TEST(test_three_rails_failover_two_drops_grouped_8, 900),
	       TEST(test_three_rails_failover_two_drops_qps_2_split, 900),
	       TEST(test_three_rails_failover_receiver_stopped_grouped_8, 900),
	       TEST(test_three_rails_failover_receiver_idle_unstriped, 900),
	       TEST(test_three_rails_32_in_flight_newest_first, 600),
	       TEST(test_three_rails_32_in_flight_random_order, 600),
	       TEST(test_three_rails_one_4_mib_then_31_small, 600),
	       TEST(test_three_rails_four_senders_one_shared_comm, 600))
