/* SPDX-License-Identifier: MIT */
/*
 * The live readers at scale, against another user's files (as root, which
 * reads every user's): gdx-doctor top and hang read each file into memory
 * and close it at once, take at most GDX_LIVE_USER_FILES files and
 * GDX_LIVE_USER_SLOTS slots of a user and say so when a cap applies, and
 * report running out of descriptors as an error, never as a file left out.
 *
 *  - 200 processes of the attacker, every slot of their files in use (8
 *    rails each), and two of the victim's: root's top --once shows the
 *    victim's, names the cap the attacker's files reached, in under 100 MB
 *    (0.4.0: 1.48 GB and 15 s);
 *  - 1,100 valid files of the attacker and root's doctor at ulimit -n 1024:
 *    every process of the victim's shown (0.4.0 kept every file open and
 *    left the victim's processes out, "some live files left out");
 *  - at every ulimit -n from 6 to 16, the victim's process is shown or the
 *    doctor fails saying it ran out of descriptors: never left out quietly.
 *
 * The users are uids 65534 and 65533 (no account needed), or those of
 * GDX_TEST_ATTACKER_UID and GDX_TEST_VICTIM_UID (tests/check/shared_node.sh
 * runs this with two real users). GNU time measures the doctor's memory;
 * GDX_DOCTOR names another gdx-doctor to run (an older one, to compare).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "data/gdx_failover.h"
#include "tools/common/gdx_live_read.h"
#include "sys/gdx_time.h"

#include "gdx_test.h"

static char live_dir[64];
static char out[1 << 26]; /* top --json of 200 full files: some 30 MB */

static unsigned uid_of(const char *var, unsigned def)
{
	const char *s = getenv(var);

	return s && *s ? (unsigned)strtoul(s, NULL, 10) : def;
}

#define ATTACKER uid_of("GDX_TEST_ATTACKER_UID", 65534)
#define VICTIM	 uid_of("GDX_TEST_VICTIM_UID", 65533)

static void need_root(void)
{
	if (geteuid() != 0)
		gdx_test_skip("it plays other users: run it as root (make test does)");
}

static void live_dir_make(void)
{
	snprintf(live_dir, sizeof(live_dir), "/dev/shm/unit_live_scale.XXXXXX");
	ASSERT(mkdtemp(live_dir));
	ASSERT_EQ(chmod(live_dir, 01777), 0);
}

static void live_dir_remove(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", live_dir);
	ASSERT_EQ(system(cmd), 0);
}

/* body in a child of its own, the live directory made before it and
 * removed after it whatever becomes of it: a failed check leaves no
 * hundreds of MiB of files in /dev/shm (it ends its process at once). */
static void in_live_dir(void (*body)(void))
{
	int status;
	pid_t pid;

	need_root();
	live_dir_make();
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		body();
		fflush(stdout);
		_exit(0);
	}
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	live_dir_remove();
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		gdx_test_fail(__FILE__, __LINE__, "the test's body failed (said above)");
}

/* n processes of uid that wait until the pipe closes: their pids. */
struct sleepers {
	pid_t *pids;
	int n, pipe[2];
};

static void sleepers_start(struct sleepers *s, unsigned uid, int n)
{
	s->pids = calloc((size_t)n, sizeof(pid_t));
	s->n = n;
	ASSERT(s->pids != NULL);
	ASSERT_EQ(pipe(s->pipe), 0);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		ASSERT(pid >= 0);
		if (pid == 0) {
			char c;

			close(s->pipe[1]);
			if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
			    setresuid(uid, uid, uid))
				_exit(1);
			while (read(s->pipe[0], &c, 1) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		s->pids[i] = pid;
	}
	close(s->pipe[0]);
}

static void sleepers_stop(struct sleepers *s)
{
	close(s->pipe[1]);
	for (int i = 0; i < s->n; i++)
		waitpid(s->pids[i], NULL, 0);
	free(s->pids);
}

static uint64_t proc_start_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	ASSERT(f);
	ASSERT(fgets(buf, sizeof(buf), f));
	fclose(f);
	p = strrchr(buf, ')');
	ASSERT(p);
	ASSERT_EQ(sscanf(p + 2,
			 "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			 "%*d %*d %llu",
			 &start),
		  1);
	return start;
}

/* The image of a file whose first nslots slots are in use, each comm on
 * nrails rails with send latencies in every bucket. */
static struct gdx_live *image_make(int nslots, int nrails)
{
	struct gdx_live *m = calloc(1, sizeof(*m));
	uint64_t now = gdx_now_ms();

	ASSERT(m != NULL);
	memcpy(m->hdr.magic, GDX_LIVE_MAGIC, sizeof(GDX_LIVE_MAGIC));
	m->hdr.layout = GDX_LIVE_LAYOUT;
	m->hdr.size = sizeof(*m);
	m->hdr.ncomms = GDX_LIVE_COMMS;
	m->hdr.created_ms = now;
	m->hdr.rank = m->hdr.local_rank = -1;
	m->hdr.stamp_hz = 1000000000;
	snprintf(m->hdr.version, sizeof(m->hdr.version), "scale");
	for (int i = 0; i < nslots; i++) {
		struct gdx_live_comm *c = &m->comms[i];

		c->role = i % 2 ? GDX_LIVE_RECV : GDX_LIVE_SEND;
		c->gen = 1;
		snprintf(c->dev, sizeof(c->dev), "mlx5_%d", i % 8);
		snprintf(c->addr, sizeof(c->addr), "10.0.%d.%d:%d", i / 250, i % 250, 40000 + i);
		snprintf(c->peer, sizeof(c->peer), "10.1.%d.%d:%d", i / 250, i % 250, 50000 + i);
		snprintf(c->peer_dev, sizeof(c->peer_dev), "mlx5_%d", (i + 1) % 8);
		c->nrails = (uint32_t)nrails;
		c->msgs = c->tick_msgs = 100 + (uint64_t)i;
		c->opened_ms = c->tick_ms = c->stall_ms = now;
		for (int r = 0; r < nrails; r++) {
			snprintf(c->rails[r].ibdev, sizeof(c->rails[r].ibdev), "mlx5_%d", r);
			c->rails[r].port = 1;
			c->rails[r].state = GDX_RAIL_UP;
			c->rails[r].tx_bytes = 1 << 20;
			for (int b = 0; b < GDX_LIVE_LAT_BUCKETS; b++)
				c->rails[r].lat[b] = 1;
			c->rails[r].lat_count = GDX_LIVE_LAT_BUCKETS;
		}
	}
	return m;
}

/* The live file of process pid of user uid, from image m (whole, or its
 * header and first slot when small): as the plugin makes it. */
static void file_write(unsigned uid, pid_t pid, struct gdx_live *m, bool whole)
{
	char udir[128], path[256];
	struct stat ns;
	int fd;

	snprintf(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", live_dir, uid);
	if (mkdir(udir, 0700) == 0)
		ASSERT_EQ(chown(udir, uid, uid), 0);
	ASSERT_EQ(stat("/proc/self/ns/pid", &ns), 0);
	snprintf(path, sizeof(path), "%s/" GDX_LIVE_PREFIX "%d.%llu.%016llx", udir, (int)pid,
		 (unsigned long long)ns.st_ino, (unsigned long long)pid * 7919);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT(fd >= 0);
	ASSERT_EQ(fchown(fd, uid, uid), 0);
	ASSERT_EQ(ftruncate(fd, sizeof(*m)), 0);
	m->hdr.pid = pid;
	m->hdr.proc_start = proc_start_of(pid);
	snprintf(m->hdr.cmd, sizeof(m->hdr.cmd), "job of uid %u", uid);
	if (whole)
		ASSERT_EQ(pwrite(fd, m, sizeof(*m), 0), (ssize_t)sizeof(*m));
	else
		ASSERT_EQ(pwrite(fd, m, offsetof(struct gdx_live, comms) + sizeof(m->comms[0]), 0),
			  (ssize_t)(offsetof(struct gdx_live, comms) + sizeof(m->comms[0])));
	close(fd);
}

/* gdx-doctor ARGS... under GNU time, at ulimit -n nofile (0: as it is),
 * its output in out: the exit status, its largest resident set in KiB and
 * its seconds. */
struct run {
	int status;
	long kib;
	double secs;
};

static struct run doctor(long nofile, const char *const *args)
{
	char exe[512], times[128];
	const char *argv[16] = {"/usr/bin/time", "-f", "%M %e", "-o", times, exe};
	int fds[2], status, argc = 6;
	struct run r = {-1, 0, 0};
	ssize_t n, off = 0;
	pid_t pid;
	FILE *f;

	if (getenv("GDX_DOCTOR")) {
		snprintf(exe, sizeof(exe), "%s", getenv("GDX_DOCTOR"));
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		ASSERT(n > 0);
		exe[n] = '\0';
		/* BUILD/tests/unit/live_scale: BUILD/gdx-doctor */
		for (int i = 0; i < 3; i++)
			*strrchr(exe, '/') = '\0';
		strcat(exe, "/gdx-doctor");
	}
	snprintf(times, sizeof(times), "%s.time", live_dir);
	while (*args && argc < 15)
		argv[argc++] = *args++;
	ASSERT_EQ(pipe(fds), 0);
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {(rlim_t)nofile, (rlim_t)nofile};

		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		if (nofile)
			setrlimit(RLIMIT_NOFILE, &rl);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		char drop[4096];

		/* past the buffer it is read and dropped: the doctor never blocks */
		n = (size_t)off < sizeof(out) - 1
			    ? read(fds[0], out + off, sizeof(out) - 1 - (size_t)off)
			    : read(fds[0], drop, sizeof(drop));
		if (n <= 0)
			break;
		if ((size_t)off < sizeof(out) - 1)
			off += n;
	}
	out[off] = '\0';
	close(fds[0]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	f = fopen(times, "r");
	ASSERT(f != NULL);
	/* after "Command exited with non-zero status N" when there is one */
	while (fscanf(f, "%ld %lf", &r.kib, &r.secs) != 2 && fscanf(f, "%*[^\n]\n") != EOF)
		;
	fclose(f);
	unlink(times);
	return r;
}

/* The memory bound: the doctor's, built as this test is; ASan's shadow
 * memory is no measure of it (make SANITIZE=address,undefined). */
#ifdef __SANITIZE_ADDRESS__
#define DOCTOR_KIB_MAX (1024 * 1024)
#else
#define DOCTOR_KIB_MAX (100 * 1024)
#endif

static bool shows_pid(pid_t pid)
{
	char needle[32];

	snprintf(needle, sizeof(needle), "\"pid\": %d,", (int)pid);
	return strstr(out, needle) != NULL;
}

/* Attack 8: 200 processes' files with every slot in use. */
static void test_top_200_full_files_body(void)
{
	struct sleepers atk, vic;
	struct gdx_live *full = image_make(GDX_LIVE_COMMS, GDX_LIVE_RAILS),
			*small = image_make(1, 1);
	const char *args[] = {"top",  "--once", "--json", "--interval",
			      "0.05", "--dir",	live_dir, NULL};
	char note[128];
	struct run r;

	sleepers_start(&vic, VICTIM, 2);
	sleepers_start(&atk, ATTACKER, 200);
	for (int i = 0; i < vic.n; i++)
		file_write(VICTIM, vic.pids[i], small, false);
	for (int i = 0; i < atk.n; i++)
		file_write(ATTACKER, atk.pids[i], full, true);
	r = doctor(0, args);
	printf("  top --once --json over 200 full files and 2 of the victim's: %.2f s, %ld KiB\n",
	       r.secs, r.kib);
	ASSERT_EQ(r.status, 0);
	for (int i = 0; i < vic.n; i++)
		ASSERT(shows_pid(vic.pids[i]));
	ASSERT(shows_pid(atk.pids[0]) && shows_pid(atk.pids[199]));
	/* the cap said: 8 processes' slots read, 192 without theirs */
	snprintf(note, sizeof(note),
		 "{\"uid\": %u, \"foreign\": false, \"files_left\": 0, "
		 "\"processes_cut\": 192}",
		 ATTACKER);
	ASSERT_STR_CONTAINS(out, note);
	ASSERT(r.kib < DOCTOR_KIB_MAX);
	args[2] = "--prometheus";
	r = doctor(0, args);
	printf("  top --once --prometheus: %.2f s, %ld KiB\n", r.secs, r.kib);
	ASSERT_EQ(r.status, 0);
	ASSERT(r.kib < DOCTOR_KIB_MAX);
	args[2] = "--interval";
	args[3] = "0.05";
	args[4] = "--dir";
	args[5] = live_dir;
	args[6] = NULL;
	r = doctor(0, args);
	printf("  top --once (text): %.2f s, %ld KiB\n", r.secs, r.kib);
	ASSERT_EQ(r.status, 0);
	snprintf(note, sizeof(note),
		 "note: uid %u: %d comms read, the most a user; 192 process(es)", ATTACKER,
		 GDX_LIVE_USER_SLOTS);
	ASSERT_STR_CONTAINS(out, note);
	sleepers_stop(&atk);
	sleepers_stop(&vic);
	free(full);
	free(small);
}

/* Attack 7: 1,100 valid files of the attacker, root's doctor at ulimit -n
 * 1024: the victim's processes are all shown. */
static void test_1100_files_at_ulimit_1024_body(void)
{
	struct sleepers atk, vic;
	struct gdx_live *small = image_make(1, 1);
	const char *top[] = {"top",  "--once", "--json", "--interval",
			     "0.05", "--dir",  live_dir, NULL};
	const char *hang[] = {"hang", "--json", "--threshold", "1000", "--dir", live_dir, NULL};
	char note[128];
	struct run r;

	sleepers_start(&atk, ATTACKER, 1100);
	sleepers_start(&vic, VICTIM, 3);
	/* the victim's first: tmpfs lists the newest first, the attacker's
	 * directory then before the victim's (0.4.0 ran out of descriptors on
	 * the attacker's files and never reached the victim's) */
	for (int i = 0; i < vic.n; i++)
		file_write(VICTIM, vic.pids[i], small, false);
	for (int i = 0; i < atk.n; i++)
		file_write(ATTACKER, atk.pids[i], small, false);
	for (int k = 0; k < 2; k++) {
		r = doctor(1024, k ? hang : top);
		printf("  %s at ulimit -n 1024 over 1,100 of the attacker's files: exit %d, %.2f s, "
		       "%ld KiB\n",
		       k ? "hang" : "top", r.status, r.secs, r.kib);
		ASSERT_EQ(r.status, 0);
		for (int i = 0; i < vic.n; i++)
			ASSERT(shows_pid(vic.pids[i]));
		snprintf(note, sizeof(note),
			 "{\"uid\": %u, \"foreign\": false, \"files_left\": 76, ", ATTACKER);
		ASSERT_STR_CONTAINS(out, note);
	}
	sleepers_stop(&vic);
	sleepers_stop(&atk);
	free(small);
}

/* Out of descriptors is the doctor's failure, said: at every limit the
 * victim's process is shown, or the doctor exits 70 naming EMFILE. */
static void test_emfile_is_an_error_body(void)
{
	struct sleepers vic;
	struct gdx_live *small = image_make(1, 1);
	const char *args[] = {"hang", "--json", "--dir", live_dir, NULL};
	int shown = 0, refused = 0;

	sleepers_start(&vic, VICTIM, 1);
	file_write(VICTIM, vic.pids[0], small, false);
	/* (below 6, the loader cannot open the doctor's libraries) */
	for (long nofile = 6; nofile <= 16; nofile++) {
		struct run r = doctor(nofile, args);

		if (r.status == 0 && shows_pid(vic.pids[0])) {
			shown++;
		} else if (r.status == 70 && strstr(out, "Too many open files")) {
			refused++;
		} else {
			gdx_test_fail(__FILE__, __LINE__,
				      "ulimit -n %ld: exit %d, the victim's process %s: %.300s",
				      nofile, r.status,
				      shows_pid(vic.pids[0]) ? "shown" : "left out", out);
		}
	}
	printf("  ulimit -n 6 to 16: %d run(s) refused with EMFILE, %d showing the process\n",
	       refused, shown);
	ASSERT(refused > 0 && shown > 0);
	sleepers_stop(&vic);
	free(small);
}

static void test_top_200_full_files(void)
{
	in_live_dir(test_top_200_full_files_body);
}

static void test_1100_files_at_ulimit_1024(void)
{
	in_live_dir(test_1100_files_at_ulimit_1024_body);
}

static void test_emfile_is_an_error(void)
{
	in_live_dir(test_emfile_is_an_error_body);
}

GDX_TESTS_MAIN(TEST(test_top_200_full_files, 120), TEST(test_1100_files_at_ulimit_1024, 120),
	       TEST(test_emfile_is_an_error, 60))
