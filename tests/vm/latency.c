/* SPDX-License-Identifier: MIT */
/*
 * In the VM: each rail's send latencies (gdx_live_layout.h) as gdx-doctor
 * top shows them, and the stall warning (gdx_stall.h). A rail shaped to a
 * low rate (tc tbf) shows a higher p99 than the other rail of the same fused
 * device, and its histogram counts every message; a wire that drops all
 * packets for longer than NCCL_GDX_STALL_MS gives one WARN, and one INFO
 * once the NIC's retry gets through. Every tc change undoes itself from a
 * process of its own, even when the test dies first.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "gdx_plugin_loader.h"
#include "gdx_stream.h"
#include "gdx_test.h"

#define DOCTOR "build/gdx-doctor"

/* Runs the shell line, failing the test when it fails. */
static void sh(const char *line)
{
	if (system(line) != 0)
		gdx_test_fail(__FILE__, __LINE__, "command failed: %s", line);
}

/* The value after "key": in the first object of rail nic in a top --json
 * report of this process's; -1 when absent. */
static double top_rail_value(const char *report, const char *nic, const char *key)
{
	char pat[64], kpat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "{\"nic\": \"%s\"", nic);
	p = strstr(report, pat);
	if (!p)
		return -1;
	snprintf(kpat, sizeof(kpat), "\"%s\": ", key);
	p = strstr(p, kpat);
	return p ? strtod(p + strlen(kpat), NULL) : -1;
}

/* The value of metric's series of this process whose labels end with tail
 * (top puts the process's labels first: pid, host, job_id, rank), -1 if
 * none. */
static double prom_value(const char *text, const char *metric, const char *tail)
{
	char head[96];
	size_t nt = strlen(tail);

	snprintf(head, sizeof(head), "%s{pid=\"%d\",", metric, (int)getpid());
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		const char *sp = strchr(p, ' '), *nl = strchr(p, '\n');

		if (strncmp(p, head, strlen(head)) || !sp || (nl && sp > nl) ||
		    (size_t)(sp - p) < nt || strncmp(sp - nt, tail, nt))
			continue;
		return strtod(sp + 1, NULL);
	}
	return -1;
}

/* Fused rxe1+rxe3 sends to rxe0+rxe2; rxe3's wire (veth3) shaped to 20
 * Mb/s. Each 256 KiB message is split evenly (STRIPE_WEIGHTED=0), 128 KiB
 * per rail, so both rails carry every message: the shaped one's p99 is
 * higher, and each rail's histogram counts as many sends as messages
 * completed. */
static void test_slow_rail_has_the_higher_p99(void)
{
	static char out[1 << 20];
	struct gdx_stream st;
	double p99_fast, p99_slow, count_fast, count_slow, inf_slow;
	uint64_t msgs;

	setenv("NCCL_GDX_RAILS", "rxe0+rxe2,rxe1+rxe3", 1);
	setenv("NCCL_GDX_STRIPE_WEIGHTED", "0", 1);
	sh("tc qdisc replace dev veth3 root tbf rate 20mbit burst 64kb limit 32mb && "
	   "setsid sh -c 'sleep 90; tc qdisc del dev veth3 root 2>/dev/null' "
	   "</dev/null >/dev/null 2>&1 &");
	gdx_stream_start(&st, 1, 0, 256 << 10);
	ASSERT(gdx_stream_moves(&st, 60, 60));
	gdx_stream_pause(&st);
	msgs = st.msgs;
	ASSERT_EQ(gdx_run(DOCTOR " top --once --json --interval 0.1", out, sizeof(out)), 0);
	p99_fast = top_rail_value(out, "rxe1", "p99");
	p99_slow = top_rail_value(out, "rxe3", "p99");
	printf("  %llu messages of 256 KiB over rxe1+rxe3, rxe3 shaped to 20 Mb/s: send p99 "
	       "%.0f us on rxe1, %.0f us on rxe3 (p50 %.0f / %.0f us)\n",
	       (unsigned long long)msgs, p99_fast, p99_slow, top_rail_value(out, "rxe1", "p50"),
	       top_rail_value(out, "rxe3", "p50"));
	ASSERT(p99_fast > 0);
	ASSERT(p99_slow > 2 * p99_fast);
	ASSERT_EQ(top_rail_value(out, "rxe1", "sends_timed"), (double)msgs);
	ASSERT_EQ(top_rail_value(out, "rxe3", "sends_timed"), (double)msgs);
	/* what a person sees: the rows and the latency by peer */
	ASSERT_EQ(gdx_run(DOCTOR " top --once --interval 0.1", out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "send latency by peer");
	printf("  gdx-doctor top --once:\n%s", out);
	/* the histogram a Prometheus server scrapes says the same */
	ASSERT_EQ(gdx_run(DOCTOR " top --prometheus --interval 0.1", out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "# TYPE gdx_rail_send_latency_seconds histogram");
	count_fast =
		prom_value(out, "gdx_rail_send_latency_seconds_count", "nic=\"rxe1\",port=\"1\"}");
	count_slow =
		prom_value(out, "gdx_rail_send_latency_seconds_count", "nic=\"rxe3\",port=\"1\"}");
	inf_slow = prom_value(out, "gdx_rail_send_latency_seconds_bucket",
			      "nic=\"rxe3\",port=\"1\",le=\"+Inf\"}");
	printf("  Prometheus: _count %.0f on rxe1, %.0f on rxe3, +Inf bucket %.0f; %llu messages "
	       "completed\n",
	       count_fast, count_slow, inf_slow, (unsigned long long)msgs);
	ASSERT_EQ(count_fast, (double)msgs);
	ASSERT_EQ(count_slow, (double)msgs);
	ASSERT_EQ(inf_slow, (double)msgs);
	gdx_stream_stop(&st);
	sh("tc qdisc del dev veth3 root");
}

/* How many times needle occurs in hay. */
static int occurrences(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

/* rxe1's wire drops every packet for 2.5 s (netem loss 100%) under a
 * stream with NCCL_GDX_STALL_MS=500: the QP's oldest work request waits,
 * one WARN names the NIC, QP and peer; the NIC retries every ~1 s
 * (NCCL_GDX_TIMEOUT=18) and, once one gets through, one INFO says it
 * completes again and the stream goes on. (A stopped receiver cannot stall
 * a QP on rxe: the kernel acknowledges its writes whatever the process does;
 * the sender then waits for a clear-to-send, which hang names.) */
static void test_stall_warns_once_and_drains(void)
{
	static char out[1 << 18];
	struct gdx_stream st;
	const char *warn;

	setenv("NCCL_GDX_STALL_MS", "500", 1);
	setenv("NCCL_GDX_TIMEOUT", "18", 1);
	gdx_stream_start(&st, 1, 0, 65536);
	ASSERT(gdx_stream_moves(&st, 20, 30));
	sh("tc qdisc add dev veth1 root netem loss 100% && "
	   "setsid sh -c 'sleep 2.5; tc qdisc del dev veth1 root' </dev/null >/dev/null 2>&1 &");
	sleep(3);
	ASSERT(gdx_stream_moves(&st, 20, 30));
	gdx_stream_pause(&st);
	warn = strstr(gdx_test_warnings(), "has had no completion");
	printf("  stalls told: %d WARN, %d INFO; the WARN: %.*s\n",
	       occurrences(gdx_test_warnings(), "has had no completion"),
	       occurrences(gdx_test_infos(), "completes again"),
	       warn ? (int)strcspn(warn, "\n") : 0, warn ? warn : "");
	ASSERT_EQ(occurrences(gdx_test_warnings(), "has had no completion"), 1);
	ASSERT_EQ(occurrences(gdx_test_infos(), "completes again"), 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "on rxe1 port 1");
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "NCCL_GDX_STALL_MS=500");
	ASSERT_EQ(gdx_run(DOCTOR " top --once --json --interval 0.1", out, sizeof(out)), 0);
	ASSERT_EQ(top_rail_value(out, "rxe1", "stalls"), 1);
	gdx_stream_stop(&st);
}

GDX_TESTS_MAIN(TEST(test_slow_rail_has_the_higher_p99, 240),
	       TEST(test_stall_warns_once_and_drains, 120))
