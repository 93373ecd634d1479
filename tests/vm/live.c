/* SPDX-License-Identifier: MIT */
/*
 * In the VM: the live counters (gdx_live.h) as gdx-doctor reads them from
 * outside the processes. A stream between two processes (the receiver
 * forked, each with its own plugin, as on two nodes) runs while gdx-doctor
 * top and hang look at it.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gdx/gdx_live_layout.h>

#include "gdx_plugin_loader.h"
#include "gdx_stream.h"
#include "gdx_test.h"

#define LIVE_DIR "/dev/shm"
#define MSG_SIZE 65536
#define DOCTOR	 "build/gdx-doctor"

/* Whether process pid has a live file: LIVE_DIR/nccl-net-gdx-UID/nccl-net-gdx.PID.*
 * (gdx_live_layout.h). */
static bool live_file_exists(pid_t pid)
{
	char udir[128], prefix[64];
	struct dirent *e;
	bool found = false;
	DIR *d;

	snprintf(udir, sizeof(udir), LIVE_DIR "/" GDX_LIVE_USER_DIR "%u", (unsigned)geteuid());
	snprintf(prefix, sizeof(prefix), GDX_LIVE_PREFIX "%d.", (int)pid);
	d = opendir(udir);
	if (!d)
		return false;
	while (!found && (e = readdir(d)))
		found = !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return found;
}

/* The value of "key": N in the JSON object that starts at obj. */
static unsigned long long json_num(const char *obj, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(obj, pat);
	ASSERT(p);
	return strtoull(p + strlen(pat), NULL, 10);
}

/* The process object of pid in a top --json report. */
static const char *json_proc(const char *report, pid_t pid)
{
	char pat[32];

	snprintf(pat, sizeof(pat), "{\"pid\": %d,", (int)pid);
	return strstr(report, pat);
}

/* top --once --json while a stream runs: the sender's completed bytes lie
 * between what the stream had counted before and after it ran, its rail's
 * posted bytes no further ahead than what can be in flight, the receiver's
 * process is there too; once each process is gone, so is its file. */
static void test_top_counts_a_stream(void)
{
	static char out[65536];
	struct gdx_stream st;
	pid_t child;
	uint64_t before, after, sent, posted;
	const char *me, *peer;

	gdx_stream_start(&st, 1, 0, MSG_SIZE);
	child = st.child;

	while (__atomic_load_n(&st.msgs, __ATOMIC_RELAXED) < 50)
		usleep(10000);
	ASSERT(live_file_exists(getpid()));
	ASSERT(live_file_exists(child));
	before = __atomic_load_n(&st.bytes, __ATOMIC_RELAXED);
	ASSERT_EQ(gdx_run(DOCTOR " top --once --json --interval 0.5", out, sizeof(out)), 0);
	after = __atomic_load_n(&st.bytes, __ATOMIC_RELAXED);
	me = json_proc(out, getpid());
	peer = json_proc(out, child);
	ASSERT(me);
	ASSERT(peer);
	sent = json_num(me, "bytes_host");
	posted = json_num(me, "tx_bytes");
	printf("  top: the sender had completed %llu bytes (the stream counted %llu before and "
	       "%llu after), posted %llu on %s; %.1f Mb/s; the receiver took %llu\n",
	       (unsigned long long)sent, (unsigned long long)before, (unsigned long long)after,
	       (unsigned long long)posted, strstr(me, "\"nic\": \"rxe1\"") ? "rxe1" : "?",
	       strtod(strstr(me, "\"tx_mbps\": ") + 11, NULL),
	       (unsigned long long)json_num(peer, "bytes_host"));
	ASSERT(before <= sent && sent <= after);
	ASSERT(posted >= sent && posted <= after + GDX_STREAM_DEPTH * MSG_SIZE);
	ASSERT(json_num(peer, "bytes_host") > 0);
	ASSERT(strtod(strstr(me, "\"tx_mbps\": ") + 11, NULL) > 0);
	ASSERT_STR_CONTAINS(me, "\"nic\": \"rxe1\"");
	ASSERT_STR_CONTAINS(me, "\"state\": \"up\"");
	/* the Prometheus text has the same totals' names */
	ASSERT_EQ(gdx_run(DOCTOR " top --prometheus --interval 0.2", out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "# TYPE gdx_bytes_total counter");
	ASSERT_STR_CONTAINS(out, "gdx_rail_tx_bytes_total{pid=");
	gdx_stream_stop(&st);
	ASSERT(!live_file_exists(child));
	printf("  the receiver's process exited: its live file is gone\n");
}

/* A process that dies without a word leaves its file; the next process
 * that loads the plugin removes it. */
static void test_dead_process_file_removed(void)
{
	pid_t child = fork();
	int status;

	ASSERT(child >= 0);
	if (child == 0) {
		gdx_stream_net();
		raise(SIGKILL);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT(WIFSIGNALED(status));
	ASSERT(live_file_exists(child));
	{
		static char out[65536];
		char pat[32];

		/* gdx-doctor leaves it out: its process is gone */
		ASSERT_EQ(gdx_run(DOCTOR " top --once --json --interval 0.05", out, sizeof(out)),
			  0);
		snprintf(pat, sizeof(pat), "\"pid\": %d,", (int)child);
		ASSERT(!strstr(out, pat));
	}
	gdx_stream_net();
	ASSERT(!live_file_exists(child));
	ASSERT_STR_CONTAINS(gdx_test_infos(), "which is gone");
	printf("  the file of process %d, killed, was removed at the next load\n", (int)child);
}

/* The receiver stopped (SIGSTOP) in the middle of a stream: within 2 s
 * gdx-doctor hang names the sender's comm, its peer and that it waits for a
 * clear-to-send; once the receiver goes on, it clears and the stream too. */
static void test_hang_names_a_stopped_receiver(void)
{
	static char out[65536];
	struct gdx_stream st;
	pid_t child;
	const char *connected, *line = NULL;
	char peer[64] = "", me[32];
	double t_stop, t_named = -1, t_cleared = -1, run_s = 0;
	uint64_t msgs;
	int rc = -1;

	gdx_stream_start(&st, 1, 0, MSG_SIZE);
	child = st.child;

	/* the peer's address as the plugin logged it: "connected DEV to PEER (...)" */
	connected = strstr(gdx_test_infos(), "connected rxe1 to ");
	ASSERT(connected);
	sscanf(connected + strlen("connected rxe1 to "), "%63s", peer);
	while (__atomic_load_n(&st.msgs, __ATOMIC_RELAXED) < 50)
		usleep(10000);
	ASSERT_EQ(gdx_run(DOCTOR " hang --threshold 1", out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "no comm has waited");
	ASSERT_EQ(kill(child, SIGSTOP), 0);
	t_stop = gdx_now_s();
	snprintf(me, sizeof(me), "pid %d ", (int)getpid());
	while (gdx_now_s() - t_stop < 5) {
		double t_start = gdx_now_s(), t_run;

		rc = gdx_run(DOCTOR " hang --threshold 0.5", out, sizeof(out));
		t_run = gdx_now_s() - t_start;
		run_s = t_run > run_s ? t_run : run_s;
		line = strstr(out, me);
		if (rc == 10 && line && strstr(line, "clear-to-send not received")) {
			/* when the run that named it started: run then, it names it
			 * (the emulated guest takes most of a second to start one) */
			t_named = t_start - t_stop;
			break;
		}
		usleep(100000);
	}
	if (t_named < 0) {
		ASSERT_EQ(gdx_run(DOCTOR " top --once --json", out, sizeof(out)), 0);
		gdx_test_fail(__FILE__, __LINE__,
			      "hang did not name the sender within 5 s (exit %d); top says: %s", rc,
			      out);
	}
	printf("  receiver stopped; gdx-doctor hang --threshold 0.5 run %.2f s later (each run "
	       "takes up to %.2f s here) says:\n  %.*s\n",
	       t_named, run_s, (int)strcspn(line, "\n"), line);
	ASSERT_EQ(rc, 10);
	ASSERT(t_named >= 0 && t_named <= 2.0);
	ASSERT(line);
	ASSERT_STR_CONTAINS(line, "send comm on rxe1");
	ASSERT_STR_CONTAINS(line, peer);
	ASSERT_STR_CONTAINS(line, "the peer never posted the receive");
	/* the JSON says the same */
	ASSERT_EQ(gdx_run(DOCTOR " hang --threshold 0.5 --json", out, sizeof(out)), 10);
	ASSERT_STR_CONTAINS(out, "\"waits_for\": \"clear-to-send not received\"");
	ASSERT_EQ(kill(child, SIGCONT), 0);
	msgs = __atomic_load_n(&st.msgs, __ATOMIC_RELAXED);
	for (double t0 = gdx_now_s(); gdx_now_s() - t0 < 5;) {
		if (gdx_run(DOCTOR " hang --threshold 0.5", out, sizeof(out)) == 0 &&
		    __atomic_load_n(&st.msgs, __ATOMIC_RELAXED) > msgs + 20) {
			t_cleared = gdx_now_s() - t0;
			break;
		}
		usleep(100000);
	}
	printf("  resumed: cleared %.2f s later, the stream moving again (%llu messages)\n",
	       t_cleared, (unsigned long long)__atomic_load_n(&st.msgs, __ATOMIC_RELAXED));
	ASSERT(t_cleared >= 0);
	gdx_stream_stop(&st);
}

GDX_TESTS_MAIN(TEST(test_top_counts_a_stream, 120), TEST(test_dead_process_file_removed, 60),
	       TEST(test_hang_names_a_stopped_receiver, 120))
