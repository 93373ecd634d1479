/* SPDX-License-Identifier: MIT */
/*
 * In the VM: the live counters (gdx_live.h) as gdx-doctor reads them from
 * outside the processes. A stream between two processes (the receiver
 * forked, each with its own plugin, as on two nodes) runs while gdx-doctor
 * top and hang look at it.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gdx/gdx_live_layout.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define LIVE_DIR "/dev/shm"
#define MSG_SIZE 65536
#define DEPTH	 4
#define DOCTOR	 "build/gdx-doctor"

static const ncclNet_v7_t *net_up(void)
{
	static struct gdx_plugin plugin;

	gdx_plugin_load(&plugin);
	ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
	return plugin.v7;
}

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

/* The receiver, in a process of its own: takes messages until the sender
 * closes, checking every byte. */
static void receiver(int wr)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	const ncclNet_v7_t *n = net_up();
	void *lc = NULL, *rc = NULL, *req[DEPTH] = {0};
	struct gdx_buf b[DEPTH];
	uint64_t seq[DEPTH], next = 0;
	double t0;

	ASSERT_EQ(n->listen(0, handle, &lc), ncclSuccess);
	ASSERT_EQ(write(wr, handle, sizeof(handle)), (ssize_t)sizeof(handle));
	for (t0 = gdx_now_s(); !rc && gdx_now_s() - t0 < 30;)
		ASSERT_EQ(n->accept(lc, &rc, NULL), ncclSuccess);
	ASSERT(rc);
	for (int i = 0; i < DEPTH; i++)
		gdx_buf_alloc(n, rc, MSG_SIZE, 0, &b[i]);
	for (;;) {
		for (int i = 0; i < DEPTH; i++) {
			int size = MSG_SIZE, tag = 0, done = 0, got = 0;
			void *data = b[i].mem;
			ncclResult_t res;

			if (!req[i]) {
				ASSERT_EQ(n->irecv(rc, 1, &data, &size, &tag, &b[i].mh, &req[i]),
					  ncclSuccess);
				seq[i] = next++;
				continue;
			}
			res = n->test(req[i], &done, &got);
			if (res != ncclSuccess)
				exit(0); /* the sender closed: the stream is over */
			if (!done)
				continue;
			ASSERT_EQ(got, MSG_SIZE);
			ASSERT_EQ(gdx_check(b[i].mem, MSG_SIZE, (uint32_t)seq[i]), -1);
			req[i] = NULL;
		}
	}
}

/* The sender's side, in a thread, so that the test's main thread can run
 * gdx-doctor meanwhile. bytes: what completed, as the test saw it. */
struct stream {
	const ncclNet_v7_t *n;
	void *sc;
	struct gdx_buf b[DEPTH];
	pthread_t thread;
	volatile int stop;
	uint64_t bytes, msgs; /* atomic */
	ncclResult_t res;
};

static void *sender_main(void *p)
{
	struct stream *st = p;
	void *req[DEPTH] = {0};
	uint64_t next = 0;

	while (!st->stop && st->res == ncclSuccess) {
		for (int i = 0; i < DEPTH && st->res == ncclSuccess; i++) {
			int done = 0, got = 0;

			if (!req[i]) {
				gdx_fill(st->b[i].mem, MSG_SIZE, (uint32_t)next);
				st->res = st->n->isend(st->sc, st->b[i].mem, MSG_SIZE, 0,
						       st->b[i].mh, &req[i]);
				if (req[i])
					next++;
				continue;
			}
			st->res = st->n->test(req[i], &done, &got);
			if (done) {
				__atomic_add_fetch(&st->bytes, (uint64_t)got, __ATOMIC_RELAXED);
				__atomic_add_fetch(&st->msgs, 1, __ATOMIC_RELAXED);
				req[i] = NULL;
			}
		}
	}
	/* what is still in flight completes before the comm closes */
	for (int i = 0; i < DEPTH && st->res == ncclSuccess; i++)
		if (req[i])
			st->res = gdx_wait(st->n, req[i], NULL, 30);
	return NULL;
}

static pid_t stream_start(struct stream *st)
{
	char handle[NCCL_NET_HANDLE_MAXSIZE];
	int fds[2];
	pid_t child;
	double t0;

	memset(st, 0, sizeof(*st));
	ASSERT_EQ(pipe(fds), 0);
	child = fork();
	ASSERT(child >= 0);
	if (child == 0) {
		close(fds[0]);
		receiver(fds[1]);
	}
	close(fds[1]);
	st->n = net_up();
	ASSERT_EQ(read(fds[0], handle, sizeof(handle)), (ssize_t)sizeof(handle));
	close(fds[0]);
	for (t0 = gdx_now_s(); !st->sc && gdx_now_s() - t0 < 30;)
		ASSERT_EQ(st->n->connect(1, handle, &st->sc, NULL), ncclSuccess);
	ASSERT(st->sc);
	for (int i = 0; i < DEPTH; i++)
		gdx_buf_alloc(st->n, st->sc, MSG_SIZE, 0, &st->b[i]);
	ASSERT_EQ(pthread_create(&st->thread, NULL, sender_main, st), 0);
	return child;
}

static void stream_stop(struct stream *st, pid_t child)
{
	int status;

	st->stop = 1;
	ASSERT_EQ(pthread_join(st->thread, NULL), 0);
	ASSERT_EQ(st->res, ncclSuccess);
	for (int i = 0; i < DEPTH; i++)
		gdx_buf_free(st->n, st->sc, &st->b[i]);
	ASSERT_EQ(st->n->closeSend(st->sc), ncclSuccess);
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Runs cmd; its standard output into out; returns its exit status. */
static int run(const char *cmd, char *out, size_t len)
{
	FILE *f = popen(cmd, "r");
	size_t n = 0;
	int status;

	ASSERT(f);
	while (n + 1 < len && !feof(f)) {
		size_t k = fread(out + n, 1, len - n - 1, f);

		if (!k)
			break;
		n += k;
	}
	out[n] = '\0';
	status = pclose(f);
	ASSERT(WIFEXITED(status));
	return WEXITSTATUS(status);
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
	struct stream st;
	pid_t child = stream_start(&st);
	uint64_t before, after, sent, posted;
	const char *me, *peer;

	while (__atomic_load_n(&st.msgs, __ATOMIC_RELAXED) < 50)
		usleep(10000);
	ASSERT(live_file_exists(getpid()));
	ASSERT(live_file_exists(child));
	before = __atomic_load_n(&st.bytes, __ATOMIC_RELAXED);
	ASSERT_EQ(run(DOCTOR " top --once --json --interval 0.5", out, sizeof(out)), 0);
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
	ASSERT(posted >= sent && posted <= after + DEPTH * MSG_SIZE);
	ASSERT(json_num(peer, "bytes_host") > 0);
	ASSERT(strtod(strstr(me, "\"tx_mbps\": ") + 11, NULL) > 0);
	ASSERT_STR_CONTAINS(me, "\"nic\": \"rxe1\"");
	ASSERT_STR_CONTAINS(me, "\"state\": \"up\"");
	/* the Prometheus text has the same totals' names */
	ASSERT_EQ(run(DOCTOR " top --prometheus --interval 0.2", out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "# TYPE gdx_bytes_total counter");
	ASSERT_STR_CONTAINS(out, "gdx_rail_tx_bytes_total{pid=");
	stream_stop(&st, child);
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
		net_up();
		raise(SIGKILL);
	}
	ASSERT_EQ(waitpid(child, &status, 0), child);
	ASSERT(WIFSIGNALED(status));
	ASSERT(live_file_exists(child));
	{
		static char out[65536];
		char pat[32];

		/* gdx-doctor leaves it out: its process is gone */
		ASSERT_EQ(run(DOCTOR " top --once --json --interval 0.05", out, sizeof(out)), 0);
		snprintf(pat, sizeof(pat), "\"pid\": %d,", (int)child);
		ASSERT(!strstr(out, pat));
	}
	net_up();
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
	struct stream st;
	pid_t child = stream_start(&st);
	const char *connected, *line = NULL;
	char peer[64] = "", me[32];
	double t_stop, t_named = -1, t_cleared = -1, run_s = 0;
	uint64_t msgs;
	int rc = -1;

	/* the peer's address as the plugin logged it: "connected DEV to PEER (...)" */
	connected = strstr(gdx_test_infos(), "connected rxe1 to ");
	ASSERT(connected);
	sscanf(connected + strlen("connected rxe1 to "), "%63s", peer);
	while (__atomic_load_n(&st.msgs, __ATOMIC_RELAXED) < 50)
		usleep(10000);
	ASSERT_EQ(run(DOCTOR " hang --threshold 1", out, sizeof(out)), 0);
	ASSERT_STR_CONTAINS(out, "no comm has waited");
	ASSERT_EQ(kill(child, SIGSTOP), 0);
	t_stop = gdx_now_s();
	snprintf(me, sizeof(me), "pid %d ", (int)getpid());
	while (gdx_now_s() - t_stop < 5) {
		double t_start = gdx_now_s(), t_run;

		rc = run(DOCTOR " hang --threshold 0.5", out, sizeof(out));
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
		ASSERT_EQ(run(DOCTOR " top --once --json", out, sizeof(out)), 0);
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
	ASSERT_EQ(run(DOCTOR " hang --threshold 0.5 --json", out, sizeof(out)), 10);
	ASSERT_STR_CONTAINS(out, "\"waits_for\": \"clear-to-send not received\"");
	ASSERT_EQ(kill(child, SIGCONT), 0);
	msgs = __atomic_load_n(&st.msgs, __ATOMIC_RELAXED);
	for (double t0 = gdx_now_s(); gdx_now_s() - t0 < 5;) {
		if (run(DOCTOR " hang --threshold 0.5", out, sizeof(out)) == 0 &&
		    __atomic_load_n(&st.msgs, __ATOMIC_RELAXED) > msgs + 20) {
			t_cleared = gdx_now_s() - t0;
			break;
		}
		usleep(100000);
	}
	printf("  resumed: cleared %.2f s later, the stream moving again (%llu messages)\n",
	       t_cleared, (unsigned long long)__atomic_load_n(&st.msgs, __ATOMIC_RELAXED));
	ASSERT(t_cleared >= 0);
	stream_stop(&st, child);
}

GDX_TESTS_MAIN(TEST(test_top_counts_a_stream, 120), TEST(test_dead_process_file_removed, 60),
	       TEST(test_hang_names_a_stopped_receiver, 120))
