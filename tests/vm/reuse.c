/* SPDX-License-Identifier: MIT */
/*
 * Reuse after completion, in every mode NCCL can turn on, over two rails
 * (the round and its checks: tests/lib/gdx_reuse.h). NCCL refills a send
 * buffer (its FIFO slot) the moment test says the send is done, and hands
 * a receive buffer to the GPU the moment test says the receive is done: a
 * request is done only when the NIC is done with its buffer.
 *
 * One test per mode (the matrix of issue 23), each several rounds on a new
 * connection, since a race shows in some rounds only. Runs in the VM with
 * --pairs 2 (rxe0-rxe3), against $GDX_PLUGIN: scripts/run-tests.sh runs it
 * once against the release build and once against the debug build, whose
 * plugin aborts, naming the mode, when a request completes with a work
 * request still reading its buffer, or a piece is counted before its bytes
 * are in the receive buffer. The modes that need three rails, and the
 * orders NCCL tests in besides the oldest first, are switch_reuse.c's.
 */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gdx_reuse.h"
#include "gdx_test.h"

#define MAX_GROUP 8
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

MODE(test_default, .group = 1)
MODE(test_default_v7, .v = 7, .group = 1)
MODE(test_adaptive_routing_threshold_0, .env = AR0, .group = 1)
MODE(test_adaptive_routing_default_threshold, .env = "NCCL_GDX_ADAPTIVE_ROUTING=1", .group = 1)
MODE(test_qps_4_round_robin, .env = "NCCL_GDX_QPS_PER_CONNECTION=4", .group = 1)
MODE(test_qps_4_split, .env = "NCCL_GDX_QPS_PER_CONNECTION=4 NCCL_GDX_SPLIT_DATA_ON_QPS=1",
     .group = 1)
MODE(test_qps_4_split_adaptive_routing,
     .env = AR0 " NCCL_GDX_QPS_PER_CONNECTION=4 NCCL_GDX_SPLIT_DATA_ON_QPS=1", .group = 1)
MODE(test_fused_weighted, .fused = 2, .group = 1)
MODE(test_fused_even, .env = "NCCL_GDX_STRIPE_WEIGHTED=0", .fused = 2, .group = 1)
MODE(test_fused_adaptive_routing_qps_2_split,
     .env = AR0 " NCCL_GDX_QPS_PER_CONNECTION=2 NCCL_GDX_SPLIT_DATA_ON_QPS=1", .fused = 2,
     .group = 1)
MODE(test_fused_failover_rail_down_and_up, .env = FO, .fused = 2, .group = 1, .flaps = 1)
/* iflush through every NIC while one's wire is down: its read must not fail
 * the comm, and the bytes it wrote before are still ordered */
MODE(test_fused_failover_flush_rail_down_and_up, .env = FO " NCCL_GDX_GDR_FLUSH=2", .fused = 2,
     .group = 1, .flaps = 1, .flush = true)
MODE(test_fused_failover_adaptive_routing_rail_down_and_up, .env = FO " " AR0, .fused = 2,
     .group = 1, .flaps = 1)
/* A receive side not called across a flap and the restore after it (issue
 * 46): stopped with its receives posted (32, so that its CQs hold more than
 * a poll takes), or idle with none; 20 rounds, a flap each
 * (GDX_REUSE_ROUNDS=N runs N). */
#define PAUSE_ROUNDS 20
#define PAUSE_MODE(fn, ...)                                                            \
	static void fn(void)                                                           \
	{                                                                              \
		reuse_run_mode(&(const struct reuse_mode){__VA_ARGS__}, PAUSE_ROUNDS); \
	}
#define UNSTRIPED "NCCL_GDX_STRIPE_MIN=1073741824"

PAUSE_MODE(test_fused_failover_receiver_stopped_control_rail, .env = FO, .fused = 2, .group = 1,
	   .flaps = 1, .pause = REUSE_STOPPED, .window = 32, .max_msg = 256 << 10)
PAUSE_MODE(test_fused_failover_receiver_stopped_rail_1_unstriped, .env = FO " " UNSTRIPED,
	   .fused = 2, .group = 1, .flaps = 1, .pause = REUSE_STOPPED, .flap_rail = 1, .window = 32,
	   .max_msg = 256 << 10)
PAUSE_MODE(test_fused_failover_receiver_stopped_grouped, .env = FO, .fused = 2, .group = MAX_GROUP,
	   .flaps = 1, .pause = REUSE_STOPPED, .window = 16, .max_msg = 256 << 10)
PAUSE_MODE(test_fused_failover_receiver_idle_control_rail, .env = FO, .fused = 2, .group = 1,
	   .flaps = 1, .pause = REUSE_IDLE, .max_msg = 1 << 20)
MODE(test_grouped, .group = MAX_GROUP)
MODE(test_grouped_fused_adaptive_routing, .env = AR0, .fused = 2, .group = MAX_GROUP)
MODE(test_flush_forced_host_memory, .env = "NCCL_GDX_GDR_FLUSH=2", .group = 1, .flush = true)
MODE(test_flush_forced_grouped_adaptive_routing, .env = "NCCL_GDX_GDR_FLUSH=2 " AR0, .group = 4,
     .flush = true)

/*
 * The debug build's invariant catches the bug of 0.3.1: with
 * GDX_DEBUG_BREAK=ar-imm-only (debug builds only) the plugin names a
 * request on its zero-byte immediate alone, as 0.3.1 did, and completes it
 * while its bulk WRITE still reads the buffer. The run must abort, naming
 * adaptive routing, before any corrupted message is reported.
 */
static void test_debug_invariant_catches_ar_done_at_post(void)
{
	static const struct reuse_mode ar0 = {.env = AR0, .group = 1};
	char out[8192] = "";
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t child;

	ASSERT(getenv("GDX_REUSE_DEBUG") != NULL);
	ASSERT_EQ(pipe(fds), 0);
	fflush(stdout);
	child = fork();
	ASSERT(child >= 0);
	if (child == 0) {
		dup2(fds[1], 2);
		dup2(fds[1], 1);
		setenv("GDX_DEBUG_BREAK", "ar-imm-only", 1);
		reuse_run_mode(&ar0, 1);
		_exit(0);
	}
	close(fds[1]);
	while (len < sizeof(out) - 1 && (n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	printf("  with the bug put back: %s\n",
	       WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exited");
	printf("%s", strstr(out, "invariant broken") ? strstr(out, "invariant broken") : out);
	ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	ASSERT_STR_CONTAINS(out,
			    "invariant broken: a send request (mode: chunked, adaptive routing");
	ASSERT_STR_CONTAINS(out, "was not complete");
}

GDX_TESTS_MAIN(TEST(test_default, 300), TEST(test_default_v7, 300),
	       TEST(test_adaptive_routing_threshold_0, 300),
	       TEST(test_adaptive_routing_default_threshold, 300),
	       TEST(test_qps_4_round_robin, 300), TEST(test_qps_4_split, 300),
	       TEST(test_qps_4_split_adaptive_routing, 300), TEST(test_fused_weighted, 300),
	       TEST(test_fused_even, 300), TEST(test_fused_adaptive_routing_qps_2_split, 300),
	       TEST(test_fused_failover_rail_down_and_up, 300),
	       TEST(test_fused_failover_flush_rail_down_and_up, 300),
	       TEST(test_fused_failover_adaptive_routing_rail_down_and_up, 300),
	       TEST(test_fused_failover_receiver_stopped_control_rail, 600),
	       TEST(test_fused_failover_receiver_stopped_rail_1_unstriped, 600),
	       TEST(test_fused_failover_receiver_stopped_grouped, 600),
	       TEST(test_fused_failover_receiver_idle_control_rail, 600), TEST(test_grouped, 300),
	       TEST(test_grouped_fused_adaptive_routing, 300),
	       TEST(test_flush_forced_host_memory, 300),
	       TEST(test_flush_forced_grouped_adaptive_routing, 300),
	       TEST_BY_NAME(test_debug_invariant_catches_ar_done_at_post, 120,
			    "needs the debug build: tests/vm/reuse_debug.sh"))
