/* SPDX-License-Identifier: MIT */
/*
 * In the VM: gdx-doctor hang --merge on the node's own hang --json, with
 * two streams running, one per rxe pair, each to a receiver of its own
 * process. The receiver of one is stopped: the merge names that process,
 * and only it, as the root cause, and says nothing of the other stream;
 * once it goes on, nothing is stuck.
 */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "gdx_plugin_loader.h"
#include "gdx_stream.h"
#include "gdx_test.h"

#define DOCTOR "build/gdx-doctor"

/* The node's report into file, then the merge of it: its exit status, and
 * its text (or --json) into out. */
static int merge_node(const char *file, const char *fmt, char *out, size_t len)
{
	char cmd[512];
	int rc;

	snprintf(cmd, sizeof(cmd), DOCTOR " hang --json --threshold 0.5 >%s", file);
	rc = system(cmd);
	ASSERT(WIFEXITED(rc) && (WEXITSTATUS(rc) == 0 || WEXITSTATUS(rc) == 10));
	snprintf(cmd, sizeof(cmd), DOCTOR " hang --merge %s %s", fmt, file);
	return gdx_run(cmd, out, len);
}

static void test_merge_names_the_stopped_receiver(void)
{
	static char out[1 << 18];
	char file[] = "/tmp/gdx-hang-XXXXXX", root[64], other[32], me[64];
	struct gdx_stream a, b;
	double t_stop, t_named = -1;
	int fd, rc = -1;

	fd = mkstemp(file);
	ASSERT(fd >= 0);
	close(fd);
	/* both receivers forked before this process loads the plugin; each
	 * process a rank as Slurm gives it: the receivers 0 and 1, the senders 2 */
	setenv("SLURM_JOB_ID", "4242", 1);
	setenv("SLURM_PROCID", "0", 1);
	gdx_stream_fork(&a, 0, 65536);
	setenv("SLURM_PROCID", "1", 1);
	gdx_stream_fork(&b, 2, 65536);
	setenv("SLURM_PROCID", "2", 1);
	gdx_stream_connect(&a, 1);
	gdx_stream_connect(&b, 3);
	ASSERT(gdx_stream_moves(&a, 50, 60));
	ASSERT(gdx_stream_moves(&b, 50, 60));
	ASSERT_EQ(merge_node(file, "", out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "nothing is stuck");
	/* the node's report: every process, with its job and rank */
	snprintf(me, sizeof(me), "cat %s", file);
	ASSERT_EQ(gdx_run(me, out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "\"job\": \"4242\", \"rank\": 1, \"rank_from\": \"SLURM_PROCID\"");
	ASSERT_STR_CONTAINS(out, "\"format\": 2");
	ASSERT_EQ(kill(a.child, SIGSTOP), 0);
	t_stop = gdx_now_s();
	snprintf(root, sizeof(root), ":%d(0)", (int)a.child);
	snprintf(me, sizeof(me), ":%d(2) --CTS--> ", (int)getpid());
	/* the stopped process is seen at once; the sender's comm waits a
	 * moment longer before it counts as stuck, and then the chain shows */
	while (gdx_now_s() - t_stop < 10) {
		rc = merge_node(file, "", out, sizeof(out));
		if (rc == 10 && strstr(out, root) && strstr(out, me)) {
			t_named = gdx_now_s() - t_stop;
			break;
		}
		usleep(200000);
	}
	printf("  receiver %d of stream A stopped; %.1f s later the merge says:\n%s", (int)a.child,
	       t_named, out);
	ASSERT_EQ(rc, 10);
	ASSERT(t_named >= 0);
	/* one root: the stopped receiver; the chain from this process to it */
	ASSERT_STR_CONTAINS(out, "root causes:\n  1. ");
	ASSERT(!strstr(out, "\n  2. "));
	ASSERT_STR_CONTAINS(strstr(out, "1. "), "stopped");
	ASSERT_STR_CONTAINS(strstr(out, "1. "), root);
	ASSERT_STR_CONTAINS(out, me);
	/* stream B, moving all along, is in no root or chain */
	snprintf(other, sizeof(other), ":%d(", (int)b.child);
	ASSERT(!strstr(out, other));
	ASSERT(gdx_stream_moves(&b, 20, 30));
	/* the JSON says the same: one root, of kind stopped, that pid */
	ASSERT_EQ(merge_node(file, "--json", out, sizeof(out)), 10);
	ASSERT_STR_CONTAINS(out, "\"rank\": 0");
	snprintf(root, sizeof(root), "\"kind\": \"stopped\", \"host\": ");
	ASSERT_STR_CONTAINS(out, root);
	snprintf(root, sizeof(root), "\"pid\": %d, ", (int)a.child);
	ASSERT_STR_CONTAINS(out, root);
	ASSERT_EQ(kill(a.child, SIGCONT), 0);
	ASSERT(gdx_stream_moves(&a, 20, 30));
	rc = -1;
	for (double t0 = gdx_now_s(); gdx_now_s() - t0 < 10 && rc != 0;) {
		rc = merge_node(file, "", out, sizeof(out));
		if (rc)
			usleep(200000);
	}
	printf("  resumed: the merge exits %d: %.*s\n", rc, (int)strcspn(out, "\n"), out);
	ASSERT_EQ(rc, 0);
	gdx_stream_stop(&a);
	gdx_stream_stop(&b);
	unlink(file);
}

GDX_TESTS_MAIN(TEST(test_merge_names_the_stopped_receiver, 180))
