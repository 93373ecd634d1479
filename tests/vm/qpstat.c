/* SPDX-License-Identifier: MIT */
/*
 * In the VM: the NIC's counters (gdx_qpstat.h) as gdx-doctor top shows
 * them, against the kernel's own (`rdma statistic show link`, sysfs
 * hw_counters). A stream crosses a wire that drops 5% of the sender's
 * packets (netem on veth1), so that rxe's retransmission and sequence
 * error counters move. rxe has no per-QP counters: the plugin falls back
 * to the port's totals and says so.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "gdx_plugin_loader.h"
#include "gdx_stream.h"
#include "gdx_test.h"

#define MSG_SIZE 65536
#define DOCTOR	 "build/gdx-doctor"
#define SENDER	 "rxe1"
/* What loss makes rxe count (its hw_counters' names): a receiver that sees
 * a gap NAKs, the sender counts the NAK and sends again; a lost ACK or last
 * packet times out and is sent again. */
static const char *const loss_counters[] = {"rcvd_seq_err", "completer_retry_err",
					    "out_of_seq_request", "duplicate_request"};

static void sh(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		gdx_test_fail(__FILE__, __LINE__, "'%s' exited %d", cmd, rc);
}

/* The kernel's value of counter name on SENDER's port 1, from sysfs. */
static long long sysfs_counter(const char *name)
{
	char path[256], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/infiniband/" SENDER "/ports/1/hw_counters/%s",
		 name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] ? atoll(buf) : -1;
}

/* This process's SENDER entry of "nic_counters" in a top --json report,
 * cut at the end of its counters. */
static char *my_nic(char *report)
{
	char pat[64], *p, *end;

	snprintf(pat, sizeof(pat), "{\"pid\": %d,", (int)getpid());
	p = strstr(report, pat);
	ASSERT(p);
	p = strstr(p, "\"nic_counters\": [");
	ASSERT(p);
	p = strstr(p, "{\"nic\": \"" SENDER "\"");
	ASSERT(p);
	end = strstr(p, "}}");
	ASSERT(end);
	end[1] = '\0';
	return p;
}

/* The value of "key": N in s; -1 when it is not there. */
static long long json_value(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(s, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

/* The figure `rdma statistic show link SENDER/1` gives for name; -1: none. */
static long long rdma_tool_counter(const char *name)
{
	static char out[8192];
	char pat[64];
	const char *p;

	ASSERT_EQ(gdx_run("rdma statistic show link " SENDER "/1", out, sizeof(out)), 0);
	snprintf(pat, sizeof(pat), " %s ", name);
	p = strstr(out, pat);
	return p ? atoll(p + strlen(pat)) : -1;
}

static void test_counters_under_loss(void)
{
	static char out[262144], prom[262144], text[262144];
	int rc[3];
	long long before[4], seen[4], kernel[4], tool;
	struct gdx_stream st;
	const char *nic;
	long long moved = 0;

	/* a lost last packet waits for the retry timer: 67 ms, not 4 s */
	setenv("NCCL_GDX_TIMEOUT", "14", 1);
	setenv("NCCL_GDX_RETRY_CNT", "7", 1);
	for (int i = 0; i < 4; i++)
		before[i] = sysfs_counter(loss_counters[i]);
	ASSERT(before[0] >= 0); /* rxe has hw_counters */
	sh("tc qdisc add dev veth1 root netem loss 5%");
	gdx_stream_start(&st, 1, 0, MSG_SIZE);
	if (!gdx_stream_moves(&st, 100, 120)) {
		(void)!system("tc qdisc del dev veth1 root");
		gdx_test_fail(__FILE__, __LINE__, "the stream did not move 100 messages in 120 s");
	}
	/* while it runs: top shows the port's counters, read within the last
	 * seconds. What it says is kept and judged once the loss is gone, so
	 * that a failed check leaves no lossy wire to the tests after it. */
	rc[0] = gdx_run(DOCTOR " top --once --json --interval 1.5", out, sizeof(out));
	rc[1] = gdx_run(DOCTOR " top --prometheus --interval 0.2", prom, sizeof(prom));
	rc[2] = gdx_run(DOCTOR " top --once --interval 0.2", text, sizeof(text));
	gdx_stream_stop(&st);
	sh("tc qdisc del dev veth1 root");
	ASSERT_EQ(rc[0], 0);
	nic = my_nic(out);
	printf("  top, while it runs: %.400s...\n", nic);
	ASSERT_STR_CONTAINS(nic, "\"source\": \"port totals\"");
	ASSERT(json_value(nic, "read_age_s") >= 0 && json_value(nic, "read_age_s") < 10);
	ASSERT(json_value(nic, "sent_pkts") > 0);
	ASSERT_EQ(rc[1], 0);
	/* a port's totals once per port, with no process's labels */
	ASSERT_STR_CONTAINS(prom, "# TYPE gdx_nic_port_counter_total counter");
	ASSERT_STR_CONTAINS(prom, ",nic=\"" SENDER "\",port=\"1\",counter=\"rcvd_seq_err\"}");
	ASSERT_EQ(rc[2], 0);
	ASSERT_STR_CONTAINS(text, "NIC counters");
	/* the comm's close read them last: the same as the kernel's now,
	 * nothing having moved on the port since */
	ASSERT_EQ(gdx_run(DOCTOR " top --once --json --interval 0.2", out, sizeof(out)), 0);
	nic = my_nic(out);
	for (int i = 0; i < 4; i++) {
		seen[i] = json_value(nic, loss_counters[i]);
		kernel[i] = sysfs_counter(loss_counters[i]);
		printf("  %-20s before %lld, plugin %lld, kernel (sysfs) %lld\n", loss_counters[i],
		       before[i], seen[i], kernel[i]);
		ASSERT_EQ(seen[i], kernel[i]);
		moved += kernel[i] - before[i];
	}
	tool = rdma_tool_counter("rcvd_seq_err");
	printf("  rdma statistic show link " SENDER "/1: rcvd_seq_err %lld\n", tool);
	ASSERT_EQ(tool, seen[0]);
	/* the loss made them move */
	ASSERT(moved > 0);
	ASSERT(seen[0] > 0 || seen[1] > 0);
	/* the fallback said once, with the kernel's reason */
	nic = strstr(gdx_test_infos(), SENDER "/1: NIC counters are the port's totals");
	ASSERT(nic);
	printf("  the plugin said: %.*s\n", (int)strcspn(nic, "\n"), nic);
}

GDX_TESTS_MAIN(TEST(test_counters_under_loss, 300))
