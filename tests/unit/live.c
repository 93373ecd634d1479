/* SPDX-License-Identifier: MIT */
/*
 * The live counter files (gdx_live.c) on a node that several users share.
 * Each test replays one attack a second local user made and asserts what
 * happens now: no hang (each test and each gdx-doctor run has a time limit),
 * no crash, no file of another user's written or removed, nothing an owner
 * wrote in its file printed raw, and the victim's counters still there. It
 * runs as root, so that forked children can play the other users
 * (setresuid); the tests that need that say so and fail as another user.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"
#include "tools/common/gdx_escape.h"
#include "stats/gdx_live.h"
#include "tools/common/gdx_live_read.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "sys/gdx_time.h"

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

/* The other users a test plays. */
#define ATTACKER  65534 /* nobody */
#define VICTIM	  65533
#define BYSTANDER 65532

/* How long a gdx-doctor run may take before it counts as hung. */
#define DOCTOR_LIMIT_S 10

static char live_dir[PATH_MAX];
static char doctor_out[1 << 20];

/* ---- helpers ---- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A path into buf, failing the test when it does not fit. */
__attribute__((format(printf, 3, 4))) static void path_fmt(char *buf, size_t len, const char *fmt,
							   ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	ASSERT(n >= 0 && (size_t)n < len);
}

static void live_use_dir(const char *dir)
{
	setenv("NCCL_GDX_LIVE_DIR", dir, 1);
	unsetenv("NCCL_GDX_LIVE");
	gdx_log_set(gdx_test_logger);
	ASSERT_EQ(gdx_params_load(), 0);
	gdx_test_log_clear();
}

/* A fresh directory that every user may write in, as /dev/shm (1777), made
 * NCCL_GDX_LIVE_DIR. */
static void live_dir_make(void)
{
	snprintf(live_dir, sizeof(live_dir), "/tmp/unit_live.XXXXXX");
	ASSERT(mkdtemp(live_dir));
	ASSERT_EQ(chmod(live_dir, 01777), 0);
	live_use_dir(live_dir);
}

static void live_dir_remove(void)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", live_dir);
	ASSERT_EQ(system(cmd), 0);
}

static void need_root(void)
{
	if (geteuid() != 0)
		gdx_test_skip("it plays other users: run it as root (make test does)");
}

static void become(uid_t uid)
{
	ASSERT_EQ(setgroups(0, NULL), 0);
	ASSERT_EQ(setresgid(uid, uid, uid), 0);
	ASSERT_EQ(setresuid(uid, uid, uid), 0);
}

/* A child that runs fn(arg) as user uid (this one's when it is geteuid()):
 * exit 0 when fn returns, 1 when an ASSERT in it fails. */
static pid_t spawn_as(uid_t uid, void (*fn)(void *), void *arg)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		if (uid != geteuid())
			become(uid);
		fn(arg);
		fflush(stdout);
		_exit(0);
	}
	return pid;
}

static void reap_ok(pid_t pid)
{
	int status;

	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		gdx_test_fail(__FILE__, __LINE__, "child %d: %s %d", (int)pid,
			      WIFSIGNALED(status) ? "killed by signal" : "exit status",
			      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* A pair of pipes a parent and its child step each other along with. */
struct steps {
	int to_child[2], to_parent[2];
};

static void steps_make(struct steps *s)
{
	ASSERT_EQ(pipe(s->to_child), 0);
	ASSERT_EQ(pipe(s->to_parent), 0);
}

/* In the parent, once the child is started: the child's ends closed, so
 * that a child that fails is an end of file, not a wait. */
static void steps_parent_side(struct steps *s)
{
	close(s->to_child[0]);
	close(s->to_parent[1]);
}

static void step_post(int fd)
{
	ASSERT_EQ(write(fd, "x", 1), 1);
}

static void step_wait(int fd)
{
	char c;

	ASSERT_EQ(read(fd, &c, 1), 1);
}

/* Process pid's live file, user uid's, in dir: its path; false when none. */
static bool live_file_of(const char *dir, unsigned uid, pid_t pid, char *path, size_t len)
{
	char udir[PATH_MAX], prefix[64];
	struct dirent *e;
	bool found = false;
	DIR *d;

	path_fmt(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", dir, uid);
	snprintf(prefix, sizeof(prefix), GDX_LIVE_PREFIX "%d.", (int)pid);
	d = opendir(udir);
	if (!d)
		return false;
	while (!found && (e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix))) {
			path_fmt(path, len, "%s/%s", udir, e->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

/* Entries in dir but . and ..; -1 when it cannot be read. */
static int dir_entries(const char *dir)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* A scan of live_dir (gdx_live_scan), its views and the files it left
 * out; unscan() frees it. */
static struct gdx_live_scan scanned;

static int scan(struct gdx_live_view **v, int *skipped)
{
	ASSERT_EQ(gdx_live_scan(live_dir, &scanned), 0);
	*v = scanned.v;
	*skipped = scanned.skipped;
	return scanned.n;
}

static void unscan(void)
{
	gdx_live_scan_free(&scanned);
}

/* Whether the process scan finds pid among the views. */
static bool scan_has(const struct gdx_live_view *v, int n, pid_t pid)
{
	for (int i = 0; i < n; i++)
		if (v[i].hdr.pid == pid)
			return true;
	return false;
}

/* A scan of live_dir: whether it finds pid. */
static bool scan_finds(pid_t pid)
{
	struct gdx_live_view *v;
	int skipped, n = scan(&v, &skipped);
	bool found;

	ASSERT(n >= 0);
	found = scan_has(v, n, pid);
	unscan();
	return found;
}

/* The start time of process pid, field 22 of /proc/PID/stat. */
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

/* A send comm that has waited a minute for a clear-to-send, named as given,
 * written into slot i of the live file open at fd. */
static void write_stalled_comm(int fd, int i, const char *dev, const char *peer, const char *ibdev)
{
	struct gdx_live_comm c;
	uint64_t now = gdx_now_ms();

	memset(&c, 0, sizeof(c));
	c.role = GDX_LIVE_SEND;
	c.gen = 1;
	snprintf(c.dev, sizeof(c.dev), "%s", dev);
	snprintf(c.peer, sizeof(c.peer), "%s", peer);
	snprintf(c.peer_dev, sizeof(c.peer_dev), "%s", dev);
	c.nrails = 1;
	snprintf(c.rails[0].ibdev, sizeof(c.rails[0].ibdev), "%s", ibdev);
	c.rails[0].port = 1;
	c.rails[0].state = GDX_RAIL_UP;
	c.rails[0].tx_bytes = 4096;
	c.msgs = c.tick_msgs = 5;
	c.outstanding = 1;
	c.want_cts = 1;
	c.wait = GDX_LIVE_WAIT_CTS;
	c.tick_ms = now;
	c.opened_ms = c.stall_ms = now > 60000 ? now - 60000 : 1;
	ASSERT_EQ(pwrite(fd, &c, sizeof(c),
			 (off_t)(offsetof(struct gdx_live, comms) + i * sizeof(c))),
		  (ssize_t)sizeof(c));
}

static const char *doctor_path(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	/* BUILD/tests/unit/live: BUILD/gdx-doctor */
	ASSERT(n > 0);
	exe[n] = '\0';
	for (int i = 0; i < 3; i++) {
		slash = strrchr(exe, '/');
		ASSERT(slash);
		*slash = '\0';
	}
	path_fmt(path, sizeof(path), "%s/gdx-doctor", exe);
	return path;
}

/* gdx-doctor with the arguments (NULL last), both its streams into
 * doctor_out. Fails the test when it runs past DOCTOR_LIMIT_S (it hung) or
 * dies of a signal; returns its exit status. */
static int doctor(const char *arg, ...)
{
	const char *argv[16] = {doctor_path(), arg};
	double deadline = now_s() + DOCTOR_LIMIT_S;
	size_t off = 0;
	int fds[2], status, argc = 2;
	va_list ap;
	pid_t pid;

	va_start(ap, arg);
	while (argc < 15 && (argv[argc] = va_arg(ap, const char *)))
		argc++;
	va_end(ap);
	ASSERT_EQ(pipe(fds), 0);
	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		execv(argv[0], (char **)argv);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		struct pollfd p = {.fd = fds[0], .events = POLLIN};
		char buf[4096];
		int left = (int)((deadline - now_s()) * 1000);
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) == 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			gdx_test_fail(__FILE__, __LINE__, "gdx-doctor %s hung (%d s)", arg,
				      DOCTOR_LIMIT_S);
		}
		n = read(fds[0], buf, sizeof(buf));
		if (n <= 0)
			break;
		/* past the buffer it is read and dropped, so the tool never blocks */
		if (off + (size_t)n < sizeof(doctor_out)) {
			memcpy(doctor_out + off, buf, (size_t)n);
			off += (size_t)n;
		}
	}
	doctor_out[off] = '\0';
	close(fds[0]);
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	if (WIFSIGNALED(status))
		gdx_test_fail(__FILE__, __LINE__, "gdx-doctor %s died of signal %d (%s)", arg,
			      WTERMSIG(status), strsignal(WTERMSIG(status)));
	return WEXITSTATUS(status);
}

/* The first byte of s a terminal would act on: a control byte but the
 * newline, or DEL; NULL when there is none. */
static const char *raw_control(const char *s)
{
	for (; *s; s++)
		if (((unsigned char)*s < 0x20 && *s != '\n') || (unsigned char)*s == 0x7f)
			return s;
	return NULL;
}

/* Whether text is one JSON document (python3's json module says). */
static bool json_valid(const char *text)
{
	char path[] = "/tmp/unit_live_json.XXXXXX", cmd[128];
	int fd = mkstemp(path), rc;

	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 -c 'import json,sys; json.load(open(sys.argv[1]))' %s",
		 path);
	rc = system(cmd);
	unlink(path);
	return rc == 0;
}

/* ---- the file: private, unique, removed by its opener only ---- */

/* The file is in the user's own directory (0700), 0600, a regular file of
 * one link, named PID.PIDNS.RANDOM; another open gets another name; close
 * removes it. */
static void test_file_private_and_unpredictable(void)
{
	char path[PATH_MAX], first[PATH_MAX], udir[PATH_MAX], name[128];
	unsigned long long ns, rnd;
	struct stat st, nst;
	int pid;

	live_dir_make();
	gdx_live_open();
	ASSERT_STR_CONTAINS(gdx_test_infos(), "live counters in ");
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	path_fmt(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", live_dir, (unsigned)geteuid());
	ASSERT_EQ(lstat(udir, &st), 0);
	ASSERT(S_ISDIR(st.st_mode));
	ASSERT_EQ(st.st_mode & 0777, 0700);
	ASSERT_EQ(lstat(path, &st), 0);
	ASSERT(S_ISREG(st.st_mode));
	ASSERT_EQ(st.st_mode & 0777, 0600);
	ASSERT_EQ(st.st_nlink, 1);
	ASSERT_EQ(st.st_size, sizeof(struct gdx_live));
	snprintf(name, sizeof(name), "%s", strrchr(path, '/') + 1);
	ASSERT_EQ(sscanf(name, GDX_LIVE_PREFIX "%d.%llu.%llx", &pid, &ns, &rnd), 3);
	ASSERT_EQ(pid, getpid());
	ASSERT_EQ(stat("/proc/self/ns/pid", &nst), 0);
	ASSERT_EQ(ns, nst.st_ino);
	ASSERT(scan_finds(getpid()));
	snprintf(first, sizeof(first), "%s", path);
	gdx_live_close(true);
	ASSERT(access(first, F_OK) != 0);
	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	ASSERT(strcmp(path, first) != 0);
	printf("  %s, then %s\n", strrchr(first, '/') + 1, strrchr(path, '/') + 1);
	gdx_live_close(true);
	live_dir_remove();
}

/* Attack 7: a forked child of a rank calls exit(). The library's
 * destructor closes the live file in the child: the parent's stays, and
 * its counters with it. */
static void child_closes(void *unused)
{
	(void)unused;
	gdx_live_close(true); /* what gdx_net.c's destructor does at exit */
}

/* A forked child that loads the plugin itself gets a file of its own, and
 * its close removes that one only. */
static void child_opens_and_closes(void *arg)
{
	const char *parents = arg;
	char path[PATH_MAX];

	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	ASSERT(scan_finds(getpid()));
	ASSERT(scan_finds(getppid()));
	gdx_live_close(true);
	ASSERT(access(path, F_OK) != 0);
	ASSERT_EQ(access(parents, F_OK), 0);
}

static void test_forked_child_leaves_parent_file(void)
{
	char path[PATH_MAX];

	live_dir_make();
	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	reap_ok(spawn_as(geteuid(), child_closes, NULL));
	ASSERT_EQ(access(path, F_OK), 0);
	ASSERT(scan_finds(getpid()));
	reap_ok(spawn_as(geteuid(), child_opens_and_closes, path));
	ASSERT_EQ(access(path, F_OK), 0);
	ASSERT(scan_finds(getpid()));
	gdx_live_close(true);
	ASSERT(access(path, F_OK) != 0);
	live_dir_remove();
}

/* Attack 8: NCCL_GDX_LIVE_DIR past 240 bytes cut names short, so that one
 * file served every rank, and a longer one named (truncated, then removed)
 * a sibling whose path was a prefix of the directory's. Now a long path
 * works whole, and one too long for a path turns the counters off with one
 * INFO line, touching nothing. */
static void test_long_live_dir(void)
{
	char dir[PATH_MAX], sibling[PATH_MAX], path[PATH_MAX], buf[64] = "";
	char *huge;
	size_t base;
	int fd;

	live_dir_make();
	base = strlen(live_dir) + 1;
	/* one component of 250 bytes: the whole past 255, where the old name was cut */
	path_fmt(dir, sizeof(dir), "%s/", live_dir);
	memset(dir + base, 'd', 250);
	dir[base + 250] = '\0';
	ASSERT_EQ(mkdir(dir, 01777), 0);
	ASSERT(strlen(dir) > 256);
	/* what the old code cut the directory to: a sibling of it */
	path_fmt(sibling, sizeof(sibling), "%.255s", dir);
	fd = open(sibling, O_WRONLY | O_CREAT | O_EXCL, 0644);
	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, "precious", 8), 8);
	close(fd);
	live_use_dir(dir);
	gdx_live_open();
	ASSERT(live_file_of(dir, geteuid(), getpid(), path, sizeof(path)));
	ASSERT(strlen(path) > 300);
	gdx_live_close(true);
	fd = open(sibling, O_RDONLY);
	ASSERT(fd >= 0);
	ASSERT_EQ(read(fd, buf, sizeof(buf)), 8);
	close(fd);
	ASSERT_EQ(strcmp(buf, "precious"), 0);

	/* longer than a path may be: off, said once, nothing made */
	huge = malloc(PATH_MAX + 200);
	ASSERT(huge);
	snprintf(huge, PATH_MAX + 200, "%s", live_dir);
	for (size_t n = strlen(huge); n < PATH_MAX + 100; n = strlen(huge))
		strcat(huge, "/ddddddddddddddddddddddddddddddddddddddddddddddd");
	live_use_dir(huge);
	ASSERT_EQ(dir_entries(live_dir), 2);
	gdx_live_open();
	ASSERT_EQ(count_of(gdx_test_infos(), "no live counters"), 1);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "NCCL_GDX_LIVE_DIR is ");
	ASSERT_STR_CONTAINS(gdx_test_infos(), "too long");
	ASSERT_EQ(dir_entries(live_dir), 2); /* the long directory and the sibling */
	printf("  %s", gdx_test_infos());
	gdx_live_close(true);
	free(huge);
	live_dir_remove();
}

/* ---- other users' files ---- */

struct victim {
	struct steps steps;
	const char *refused; /* NULL: its counters work; else the reason its one INFO line gives */
};

/* The victim: opens its live file when told to and checks it: its own
 * counters there (a scan finds it), or off with one INFO line that says
 * why. Then it waits to be told to close. */
static void victim_main(void *arg)
{
	struct victim *v = arg;
	double t0;

	step_wait(v->steps.to_child[0]);
	t0 = now_s();
	gdx_live_open();
	ASSERT(now_s() - t0 < 2);
	if (!v->refused) {
		ASSERT_EQ(count_of(gdx_test_infos(), "no live counters"), 0);
		ASSERT(scan_finds(getpid()));
	} else {
		ASSERT_EQ(count_of(gdx_test_infos(), "no live counters"), 1);
		ASSERT_STR_CONTAINS(gdx_test_infos(), v->refused);
		printf("  victim: %s", strstr(gdx_test_infos(), "no live counters"));
	}
	step_post(v->steps.to_parent[1]);
	step_wait(v->steps.to_child[0]);
	gdx_live_close(true);
}

/* The victim process, waiting to open. */
static pid_t victim_spawn(struct victim *v, const char *refused)
{
	pid_t pid;

	steps_make(&v->steps);
	v->refused = refused;
	pid = spawn_as(VICTIM, victim_main, v);
	steps_parent_side(&v->steps);
	return pid;
}

static void victim_open(struct victim *v)
{
	step_post(v->steps.to_child[1]);
	step_wait(v->steps.to_parent[0]);
}

static pid_t victim_start(struct victim *v, const char *refused)
{
	pid_t pid = victim_spawn(v, refused);

	victim_open(v);
	return pid;
}

static void victim_stop(struct victim *v, pid_t pid)
{
	step_post(v->steps.to_child[1]);
	reap_ok(pid);
}

/* The attacker's hands: what it tries on the victim's file and directory,
 * each refused. */
struct attempt {
	char path[PATH_MAX], udir[PATH_MAX];
};

static void attacker_tries(void *arg)
{
	struct attempt *a = arg;

	ASSERT(opendir(a->udir) == NULL);
	ASSERT_EQ(errno, EACCES);
	ASSERT(open(a->path, O_RDONLY) < 0);
	ASSERT_EQ(errno, EACCES);
	ASSERT(truncate(a->path, 0) != 0);
	ASSERT(unlink(a->path) != 0);
	ASSERT(rename(a->udir, "/tmp/unit_live_stolen") != 0);
	path_fmt(a->path, sizeof(a->path), "%s/" GDX_LIVE_PREFIX "1.1.0000000000000001", a->udir);
	ASSERT(open(a->path, O_RDWR | O_CREAT, 0666) < 0);
	ASSERT_EQ(errno, EACCES);
}

static void plant(void *arg)
{
	const char *path = arg;
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0666);

	ASSERT(fd >= 0);
	ASSERT_EQ(fchmod(fd, 0666), 0);
	ASSERT_EQ(write(fd, "attacker's", 10), 10);
	close(fd);
}

/* Attack 2: the attacker pre-creates the file the victim would open
 * (nccl-net-gdx.PID, mode 666), to read the victim's counters, peers and
 * command line, then truncate it under it. The victim's file is elsewhere
 * now, in a directory the attacker cannot enter; the planted file is left
 * as it was; nothing the attacker tries on the real one works. */
static void test_planted_file_not_used(void)
{
	char planted[PATH_MAX], buf[32] = "";
	struct victim v;
	struct attempt a;
	struct stat st;
	pid_t pid;
	int fd;

	need_root();
	live_dir_make();
	pid = victim_spawn(&v, NULL);
	path_fmt(planted, sizeof(planted), "%s/" GDX_LIVE_PREFIX "%d", live_dir, (int)pid);
	reap_ok(spawn_as(ATTACKER, plant, planted));
	victim_open(&v);
	ASSERT(live_file_of(live_dir, VICTIM, pid, a.path, sizeof(a.path)));
	path_fmt(a.udir, sizeof(a.udir), "%s/" GDX_LIVE_USER_DIR "%u", live_dir, VICTIM);
	reap_ok(spawn_as(ATTACKER, attacker_tries, &a));
	ASSERT_EQ(stat(a.path, &st), 0);
	ASSERT_EQ(st.st_size, sizeof(struct gdx_live));
	ASSERT_EQ(st.st_uid, VICTIM);
	ASSERT(scan_finds(pid));
	victim_stop(&v, pid);
	ASSERT_EQ(dir_entries(a.udir), 0);
	/* the planted file as it was */
	fd = open(planted, O_RDONLY);
	ASSERT(fd >= 0);
	ASSERT_EQ(fstat(fd, &st), 0);
	ASSERT_EQ(st.st_uid, ATTACKER);
	ASSERT_EQ(st.st_size, 10);
	ASSERT_EQ(read(fd, buf, sizeof(buf)), 10);
	ASSERT_EQ(memcmp(buf, "attacker's", 10), 0);
	close(fd);
	live_dir_remove();
}

static void make_dir_0777(void *arg)
{
	ASSERT_EQ(mkdir(arg, 0777), 0);
	ASSERT_EQ(chmod(arg, 0777), 0);
}

static void make_link(void *arg)
{
	char target[PATH_MAX];

	path_fmt(target, sizeof(target), "%s/attackers", live_dir);
	ASSERT_EQ(mkdir(target, 0777), 0);
	ASSERT_EQ(chmod(target, 0777), 0);
	ASSERT_EQ(symlink(target, arg), 0);
}

static void make_fifo(void *arg)
{
	ASSERT_EQ(mkfifo(arg, 0666), 0);
}

/* Attack 2, the directory: the attacker makes the victim's per-user
 * directory first (its own, 777), or a link to one of its own, or a fifo.
 * The victim refuses each, its counters off with one INFO line; init goes
 * on; nothing lands in the attacker's directory. */
static void test_planted_user_dir_refused(void)
{
	void (*plants[])(void *) = {make_dir_0777, make_link, make_fifo};
	const char *says[] = {"is not this user's alone", "Not a directory", "Not a directory"};

	need_root();
	for (int i = 0; i < 3; i++) {
		char udir[PATH_MAX], target[PATH_MAX];
		struct victim v;
		pid_t pid;

		live_dir_make();
		path_fmt(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", live_dir, VICTIM);
		reap_ok(spawn_as(ATTACKER, plants[i], udir));
		pid = victim_start(&v, says[i]);
		victim_stop(&v, pid);
		path_fmt(target, sizeof(target), "%s/attackers", live_dir);
		ASSERT_EQ(dir_entries(i == 1 ? target : udir), i == 2 ? -1 : 0);
		live_dir_remove();
	}
}

/* ---- the sweep of ended processes' files ---- */

static void open_and_die(void *unused)
{
	(void)unused;
	gdx_live_open();
	raise(SIGKILL);
}

struct holder {
	struct steps steps;
	pid_t dead; /* the pid its file is made to claim */
};

/* A live process whose file claims a pid that has ended: the name and the
 * header say dead, its lock says alive. */
static void holder_main(void *arg)
{
	struct holder *h = arg;
	char path[PATH_MAX], claimed[PATH_MAX];
	const char *rest;
	int fd;

	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	rest = strchr(strrchr(path, '/') + strlen("/" GDX_LIVE_PREFIX), '.');
	path_fmt(claimed, sizeof(claimed), "%.*s/" GDX_LIVE_PREFIX "%d%s",
		 (int)(strrchr(path, '/') - path), path, (int)h->dead, rest);
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT_EQ(pwrite(fd, &(int32_t){h->dead}, sizeof(int32_t),
			 offsetof(struct gdx_live_hdr, pid)),
		  (ssize_t)sizeof(int32_t));
	close(fd);
	ASSERT_EQ(rename(path, claimed), 0);
	step_post(h->steps.to_parent[1]);
	step_wait(h->steps.to_child[0]);
}

/* Attack 6's mechanism: liveness is the lock the owner holds, not its pid.
 * A killed process's file goes at the next open; a live one that claims a
 * gone pid stays; a file never finished stays a minute, then goes; a fifo
 * of the user's own in the directory is passed over without blocking. */
static void test_sweep_by_lock(void)
{
	char udir[PATH_MAX], path[PATH_MAX], unfinished[PATH_MAX], fifo[PATH_MAX];
	struct timespec old[2] = {{time(NULL) - 120, 0}, {time(NULL) - 120, 0}};
	struct holder h;
	pid_t killed, holder;
	double t0;
	int fd;

	live_dir_make();
	path_fmt(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", live_dir, (unsigned)geteuid());
	killed = spawn_as(geteuid(), open_and_die, NULL);
	waitpid(killed, NULL, 0);
	ASSERT(live_file_of(live_dir, geteuid(), killed, path, sizeof(path)));

	steps_make(&h.steps);
	h.dead = killed;
	holder = spawn_as(geteuid(), holder_main, &h);
	steps_parent_side(&h.steps);
	step_wait(h.steps.to_parent[0]);
	/* the holder's open swept the killed process's file */
	ASSERT(access(path, F_OK) != 0);

	path_fmt(unfinished, sizeof(unfinished), "%s/" GDX_LIVE_PREFIX "%d.1.00000000000000aa",
		 udir, (int)killed);
	fd = open(unfinished, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT(fd >= 0);
	close(fd);
	path_fmt(fifo, sizeof(fifo), "%s/" GDX_LIVE_PREFIX "%d.1.00000000000000bb", udir,
		 (int)killed);
	ASSERT_EQ(mkfifo(fifo, 0600), 0);

	t0 = now_s();
	gdx_live_open();
	ASSERT(now_s() - t0 < 2);
	ASSERT(live_file_of(live_dir, geteuid(), killed, path, sizeof(path))); /* the holder's */
	ASSERT_EQ(access(unfinished, F_OK), 0);
	ASSERT_EQ(access(fifo, F_OK), 0);
	ASSERT(!strstr(gdx_test_infos(), "removed"));
	gdx_live_close(true);

	ASSERT_EQ(utimensat(AT_FDCWD, unfinished, old, 0), 0);
	gdx_test_log_clear();
	gdx_live_open();
	ASSERT(access(unfinished, F_OK) != 0);
	ASSERT_EQ(count_of(gdx_test_infos(), "which is gone"), 1);
	ASSERT(live_file_of(live_dir, geteuid(), killed, path, sizeof(path)));
	gdx_live_close(true);

	step_post(h.steps.to_child[1]);
	reap_ok(holder);
	live_dir_remove();
}

struct container {
	struct steps steps;
	int removed_infos; /* "removed" lines it may log */
};

/* Pid 1 of a new pid namespace: opens, says so, closes when told. */
static void container_init(void *arg)
{
	struct container *c = arg;

	ASSERT_EQ(getpid(), 1);
	gdx_live_open();
	ASSERT_EQ(count_of(gdx_test_infos(), "removed"), c->removed_infos);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "live counters in");
	step_post(c->steps.to_parent[1]);
	step_wait(c->steps.to_child[0]);
	gdx_live_close(true);
}

static void container_main(void *arg)
{
	ASSERT_EQ(unshare(CLONE_NEWPID), 0);
	reap_ok(spawn_as(geteuid(), container_init, arg));
}

static int live_files_named(const char *udir, const char *prefix)
{
	struct dirent *e;
	DIR *d = opendir(udir);
	int n = 0;

	ASSERT(d);
	while ((e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

/* Attack 6: two containers share /dev/shm (--ipc=host), each job's process
 * pid 1 of its namespace. The second does not remove the first's file as
 * left by a process that is gone, and the first's exit leaves the second's. */
static void test_containers_both_pid_1(void)
{
	struct container a = {.removed_infos = 0}, b = {.removed_infos = 0};
	struct gdx_live_view *v;
	char udir[PATH_MAX];
	pid_t pa, pb;
	int skipped, n;

	need_root();
	live_dir_make();
	path_fmt(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", live_dir, (unsigned)geteuid());
	steps_make(&a.steps);
	steps_make(&b.steps);
	pa = spawn_as(geteuid(), container_main, &a);
	steps_parent_side(&a.steps);
	step_wait(a.steps.to_parent[0]);
	pb = spawn_as(geteuid(), container_main, &b);
	steps_parent_side(&b.steps);
	step_wait(b.steps.to_parent[0]);
	ASSERT_EQ(live_files_named(udir, GDX_LIVE_PREFIX "1."), 2);
	/* from this namespace, pid 1 is another process: neither is shown */
	n = scan(&v, &skipped);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(skipped, 2);
	unscan();
	step_post(a.steps.to_child[1]);
	reap_ok(pa);
	ASSERT_EQ(live_files_named(udir, GDX_LIVE_PREFIX "1."), 1);
	step_post(b.steps.to_child[1]);
	reap_ok(pb);
	ASSERT_EQ(live_files_named(udir, GDX_LIVE_PREFIX "1."), 0);
	live_dir_remove();
}

/* ---- the readers ---- */

/* Attack 1: a fifo named like a live file where the sweep and the readers
 * look. The plugin's open, gdx-doctor top and hang all finish (each within
 * its limit) and the victim's counters are read. */
static void test_fifo_no_hang(void)
{
	char fifo[PATH_MAX], udir[PATH_MAX], pidstr[32];
	struct victim v;
	struct stat ns;
	pid_t pid;

	need_root();
	live_dir_make();
	path_fmt(fifo, sizeof(fifo), "%s/" GDX_LIVE_PREFIX "x", live_dir);
	reap_ok(spawn_as(ATTACKER, make_fifo, fifo));
	/* and one in the attacker's own directory, which root's readers open */
	path_fmt(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", live_dir, ATTACKER);
	reap_ok(spawn_as(ATTACKER, make_dir_0777, udir));
	ASSERT_EQ(chmod(udir, 0700), 0);
	/* named for this namespace, so that a reader opens it */
	ASSERT_EQ(stat("/proc/self/ns/pid", &ns), 0);
	path_fmt(fifo, sizeof(fifo), "%s/" GDX_LIVE_PREFIX "%d.%llu.0000000000000001", udir,
		 (int)getpid(), (unsigned long long)ns.st_ino);
	reap_ok(spawn_as(ATTACKER, make_fifo, fifo));
	pid = victim_start(&v, NULL);
	snprintf(pidstr, sizeof(pidstr), "pid %d ", (int)pid);
	ASSERT_EQ(doctor("top", "--once", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, pidstr);
	ASSERT_EQ(doctor("hang", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "(1 process(es) with the plugin");
	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	victim_stop(&v, pid);
	live_dir_remove();
}

struct faker {
	struct steps steps;
	pid_t claim; /* the pid its fake files claim */
	uint64_t claim_start;
};

/* Writes a copy of the header at fd, claiming pid started at start, with
 * every slot a stalled comm, as name in the directory of path. */
static void fake_copy(const char *path, const char *name, pid_t pid, uint64_t start, int slots)
{
	char fake[PATH_MAX];
	struct gdx_live_hdr h;
	int fd = open(path, O_RDONLY), out;

	ASSERT(fd >= 0);
	ASSERT_EQ(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);
	h.pid = pid;
	h.proc_start = start;
	path_fmt(fake, sizeof(fake), "%.*s/%s", (int)(strrchr(path, '/') - path), path, name);
	out = open(fake, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT(out >= 0);
	ASSERT_EQ(ftruncate(out, sizeof(struct gdx_live)), 0);
	ASSERT_EQ(pwrite(out, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	for (int i = 0; i < slots; i++)
		write_stalled_comm(out, i, "fake0", "10.0.0.66", "fake0");
	close(out);
}

/* The attacker, as itself: a real live file with one stalled comm (which
 * root's hang should report: it is the attacker's own process), and fakes
 * beside it that claim another's process. */
static void faker_main(void *arg)
{
	struct faker *f = arg;
	char path[PATH_MAX], name[128], *dot;
	unsigned long long ns;
	pid_t sibling;
	int fd;

	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	write_stalled_comm(fd, 0, "real0", "10.0.0.1", "real0");
	close(fd);
	/* the namespace part of its own name, for names a reader parses */
	dot = strchr(strrchr(path, '/') + strlen("/" GDX_LIVE_PREFIX), '.');
	ns = strtoull(dot + 1, NULL, 10);
	snprintf(name, sizeof(name), GDX_LIVE_PREFIX "%d.%llu.%016llx", (int)f->claim, ns, 0x1ULL);
	fake_copy(path, name, f->claim, f->claim_start, GDX_LIVE_COMMS);
	/* named for this process, its header for another of the attacker's:
	 * only the pid in the name against the one in the header tells */
	sibling = fork();
	ASSERT(sibling >= 0);
	if (sibling == 0) {
		pause();
		_exit(0);
	}
	snprintf(name, sizeof(name), GDX_LIVE_PREFIX "%d.%llu.%016llx", (int)getpid(), ns, 0x2ULL);
	fake_copy(path, name, sibling, proc_start_of(sibling), 1);
	/* the old place and name */
	snprintf(name, sizeof(name), "../" GDX_LIVE_PREFIX "%d", (int)f->claim);
	fake_copy(path, name, f->claim, f->claim_start, GDX_LIVE_COMMS);
	step_post(f->steps.to_parent[1]);
	step_wait(f->steps.to_child[0]);
	kill(sibling, SIGKILL);
	waitpid(sibling, NULL, 0);
	gdx_live_close(true);
}

/* Attack 3: files owned by nobody that claim pid 1 (1,024 stuck comms) and
 * this test's own process. hang and top leave them out: the owner of the
 * file does not run that process. The attacker's own process is shown. */
static void test_foreign_files_claiming_others(void)
{
	struct faker f[2] = {{.claim = 1}, {.claim = getpid()}};
	char mine[32];
	int skipped, n;
	struct gdx_live_view *v;

	need_root();
	f[0].claim_start = proc_start_of(1);
	f[1].claim_start = proc_start_of(getpid());
	for (int k = 0; k < 2; k++) {
		pid_t pid;

		live_dir_make();
		steps_make(&f[k].steps);
		pid = spawn_as(ATTACKER, faker_main, &f[k]);
		steps_parent_side(&f[k].steps);
		step_wait(f[k].steps.to_parent[0]);
		n = scan(&v, &skipped);
		ASSERT_EQ(n, 1);
		ASSERT_EQ(v[0].hdr.pid, pid);
		ASSERT_EQ(v[0].uid, ATTACKER);
		ASSERT_EQ(skipped, 3);
		unscan();
		snprintf(mine, sizeof(mine), "pid %d ", (int)f[k].claim);
		ASSERT_EQ(doctor("hang", "--dir", live_dir, NULL), 10);
		ASSERT_EQ(count_of(doctor_out, "\n"), 1);
		ASSERT(!strstr(doctor_out, mine));
		ASSERT(!strstr(doctor_out, "fake0"));
		ASSERT_STR_CONTAINS(doctor_out, "real0");
		snprintf(mine, sizeof(mine), "pid %d ", (int)pid);
		ASSERT_STR_CONTAINS(doctor_out, mine);
		ASSERT_EQ(doctor("top", "--once", "--json", "--interval", "0.05", "--dir", live_dir,
				 NULL),
			  0);
		snprintf(mine, sizeof(mine), "{\"pid\": %d,", (int)f[k].claim);
		ASSERT(!strstr(doctor_out, mine));
		step_post(f[k].steps.to_child[1]);
		reap_ok(pid);
		live_dir_remove();
	}
}

struct reader {
	struct steps steps;
	int expect; /* processes its scan should find */
};

static void reader_main(void *arg)
{
	struct reader *r = arg;
	struct gdx_live_view *v;
	int skipped, n;

	gdx_live_open();
	n = scan(&v, &skipped);
	ASSERT_EQ(n, r->expect);
	ASSERT(scan_has(v, n, getpid()));
	unscan();
	step_post(r->steps.to_parent[1]);
	step_wait(r->steps.to_child[0]);
	gdx_live_close(true);
}

/* Root reads every user's directory; a user reads only their own; a
 * directory open to others is read by no one and used by no one. */
static void test_reader_sees_own_user_root_all(void)
{
	struct reader a = {.expect = 1}, b = {.expect = 1};
	struct gdx_live_view *v;
	char udir[PATH_MAX];
	struct victim loose;
	pid_t pa, pb, pl;
	int skipped, n;

	need_root();
	live_dir_make();
	steps_make(&a.steps);
	steps_make(&b.steps);
	pa = spawn_as(ATTACKER, reader_main, &a);
	steps_parent_side(&a.steps);
	step_wait(a.steps.to_parent[0]);
	pb = spawn_as(BYSTANDER, reader_main, &b);
	steps_parent_side(&b.steps);
	step_wait(b.steps.to_parent[0]);
	n = scan(&v, &skipped);
	ASSERT_EQ(n, 2);
	ASSERT(scan_has(v, n, pa) && scan_has(v, n, pb));
	unscan();
	/* the victim's directory opened up to others: its files are no longer read */
	path_fmt(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", live_dir, VICTIM);
	pl = victim_start(&loose, NULL);
	ASSERT_EQ(chmod(udir, 0755), 0);
	n = scan(&v, &skipped);
	ASSERT_EQ(n, 2);
	ASSERT(!scan_has(v, n, pl));
	/* said, with its owner and mode: not a file of another layout */
	ASSERT_EQ(skipped, 0);
	ASSERT_EQ(scanned.nusers, 1);
	ASSERT(scanned.users[0].foreign);
	ASSERT_EQ(scanned.users[0].uid, VICTIM);
	ASSERT_EQ(scanned.users[0].owner, VICTIM);
	ASSERT_EQ(scanned.users[0].mode, 0755);
	unscan();
	victim_stop(&loose, pl);
	step_post(a.steps.to_child[1]);
	step_post(b.steps.to_child[1]);
	reap_ok(pa);
	reap_ok(pb);
	/* and a new open there refuses it */
	pl = victim_start(&loose, "is not this user's alone");
	victim_stop(&loose, pl);
	live_dir_remove();
}

/* Attack 4: ESC and BEL in a command line, a C1 CSI byte in a peer, and
 * `x"} 1\nevil_metric 1\n#` as a NIC's name. Text output has no raw
 * control byte (they show as \xNN), the Prometheus text no injected
 * sample, the JSON is valid JSON with them escaped. */
static void test_output_escaped(void)
{
	const char *cmdline = "job\x1b]0;pwned\x07\x1b[2J\x7f";
	const char *inject = "x\"} 1\nevil_metric 1\n#";
	char path[PATH_MAX], peer[64], *line;
	int fd;

	live_dir_make();
	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT_EQ(pwrite(fd, cmdline, strlen(cmdline) + 1, offsetof(struct gdx_live_hdr, cmd)),
		  (ssize_t)strlen(cmdline) + 1);
	snprintf(peer, sizeof(peer),
		 "10.0.0.2\x9b"
		 "31m\\x41\xff");
	write_stalled_comm(fd, 0, "mlx5_\x1b[5m0", peer, inject);
	close(fd);

	ASSERT_EQ(doctor("hang", "--dir", live_dir, NULL), 10);
	printf("  hang: %s", doctor_out);
	ASSERT(!raw_control(doctor_out));
	ASSERT_STR_CONTAINS(doctor_out, "job\\x1b]0;pwned\\x07\\x1b[2J\\x7f");
	ASSERT_STR_CONTAINS(doctor_out, "10.0.0.2\\x9b31m\\\\x41\\xff");
	ASSERT_EQ(doctor("top", "--once", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT(!raw_control(doctor_out));
	ASSERT_STR_CONTAINS(doctor_out, "job\\x1b]0;pwned");
	ASSERT_STR_CONTAINS(doctor_out, "x\"} 1\\x0aevil_metric 1\\x0a#");

	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	line = strstr(doctor_out, "gdx_rail_tx_bytes_total{");
	ASSERT(line);
	printf("  prometheus: %.*s\n", (int)strcspn(line, "\n"), line);
	ASSERT(!strstr(doctor_out, "\nevil_metric"));
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"x\\\"} 1\\nevil_metric 1\\n#\"");
	/* every line a comment or one sample: NAME{LABELS} VALUE */
	for (line = doctor_out; *line;) {
		char *end = strchr(line, '\n');

		ASSERT(end);
		*end = '\0';
		if (line[0] != '#') {
			ASSERT_EQ(strncmp(line, "gdx_", 4), 0);
			ASSERT(strchr(line, '{'));
			ASSERT(strstr(line, "} "));
		}
		line = end + 1;
	}

	ASSERT_EQ(doctor("hang", "--json", "--dir", live_dir, NULL), 10);
	ASSERT(!raw_control(doctor_out));
	ASSERT(json_valid(doctor_out));
	ASSERT_STR_CONTAINS(doctor_out, "job\\u001b]0;pwned\\u0007");
	ASSERT_EQ(doctor("top", "--once", "--json", "--interval", "0.05", "--dir", live_dir, NULL),
		  0);
	ASSERT(!raw_control(doctor_out));
	ASSERT(json_valid(doctor_out));
	ASSERT_STR_CONTAINS(doctor_out, "\"nic\": \"x\\\"} 1\\u000aevil_metric 1\\u000a#\"");
	gdx_live_close(true);
	live_dir_remove();
}

/* Attack 4b: the owner of a live file copies it under another name of the
 * same process (its pid, its namespace, another random part). The process
 * is shown once, from the newer file: a process twice would be each of its
 * Prometheus series twice, and the node exporter refuses a file with a
 * series twice, every other user's jobs with it (found by
 * tests/fuzz/live.c). */
static void test_copy_shown_once(void)
{
	char path[PATH_MAX], copy[PATH_MAX];
	struct gdx_live_view *v;
	struct gdx_live_hdr h;
	int fd, out, skipped, n;

	live_dir_make();
	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	write_stalled_comm(fd, 0, "real0", "10.0.0.1", "real0");
	ASSERT_EQ(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	close(fd);
	path_fmt(copy, sizeof(copy), "%.*s.%016llx", (int)(strrchr(path, '.') - path), path,
		 0x1ULL);
	ASSERT(strcmp(copy, path) != 0);
	out = open(copy, O_RDWR | O_CREAT | O_EXCL, 0600);
	ASSERT(out >= 0);
	ASSERT_EQ(ftruncate(out, sizeof(struct gdx_live)), 0);
	write_stalled_comm(out, 0, "copy0", "10.0.0.1", "copy0");
	for (int newer = 1; newer >= 0; newer--) {
		h.created_ms += newer ? 1 : -2;
		ASSERT_EQ(pwrite(out, &h, sizeof(h), 0), (ssize_t)sizeof(h));
		n = scan(&v, &skipped);
		ASSERT_EQ(n, 1);
		ASSERT_EQ(skipped, 1);
		ASSERT_EQ(strcmp(v[0].name, strrchr(newer ? copy : path, '/') + 1), 0);
		unscan();
		ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir,
				 NULL),
			  0);
		ASSERT_EQ(count_of(doctor_out, "gdx_messages_total{"), 1);
		ASSERT_EQ(count_of(doctor_out, "gdx_bytes_total{"), 2);
		ASSERT_EQ(count_of(doctor_out, "gdx_rail_up{"), 1);
		ASSERT_EQ(doctor("hang", "--dir", live_dir, NULL), 10);
		ASSERT_EQ(count_of(doctor_out, "\n"), 1);
		ASSERT_STR_CONTAINS(doctor_out, newer ? "copy0" : "real0");
	}
	close(out);
	gdx_live_close(true);
	live_dir_remove();
}

/* NIC names that differ only in what the exposition format cannot show (a
 * control byte, U+FFFD itself) make one label value: their rows are one
 * series in the Prometheus text, their sum, up only when all are (found by
 * tests/fuzz/live.c); the text still tells them apart. */
static void test_prometheus_series_once(void)
{
	char path[PATH_MAX];
	uint32_t down = GDX_RAIL_DOWN;
	int fd;

	live_dir_make();
	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	write_stalled_comm(fd, 0, "a0", "10.0.0.1", "mlx5_\x01");
	write_stalled_comm(fd, 1, "a0", "10.0.0.1", "mlx5_\x02");
	write_stalled_comm(fd, 2, "a0", "10.0.0.1", "mlx5_\xef\xbf\xbd");
	ASSERT_EQ(pwrite(fd, &down, sizeof(down),
			 (off_t)(offsetof(struct gdx_live, comms) + sizeof(struct gdx_live_comm) +
				 offsetof(struct gdx_live_comm, rails[0].state))),
		  (ssize_t)sizeof(down));
	close(fd);
	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_EQ(count_of(doctor_out, "gdx_rail_tx_bytes_total{"), 1);
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_\xef\xbf\xbd\",port=\"1\"} 12288\n");
	ASSERT_EQ(count_of(doctor_out, "gdx_rail_up{"), 1);
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_\xef\xbf\xbd\",port=\"1\"} 0\n");
	ASSERT_EQ(doctor("top", "--once", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "mlx5_\\x01 ");
	ASSERT_STR_CONTAINS(doctor_out, "mlx5_\\x02 ");
	gdx_live_close(true);
	live_dir_remove();
}

/* One-sided RMA's collective comm as the plugin claims its slot: top shows
 * its NICs' bytes put and got apart from the two-sided rails' (text, JSON,
 * Prometheus), and hang names the signal it waits on. */
static void test_rma_slot_shown(void)
{
	struct gdx_live_comm own, *l;
	struct gdx_dev devs[2];
	uint64_t now = gdx_now_ms();

	live_dir_make();
	gdx_live_open();
	memset(devs, 0, sizeof(devs));
	snprintf(devs[0].ibdev, sizeof(devs[0].ibdev), "mlx5_0");
	snprintf(devs[1].ibdev, sizeof(devs[1].ibdev), "mlx5_1");
	devs[0].ib_port = devs[1].ib_port = 1;
	l = gdx_live_rma_open(&own, "mlx5_0+mlx5_1", "10.0.0.1:4000", "rank 1 of 4", 2,
			      (struct gdx_dev *const[]){&devs[0], &devs[1]});
	ASSERT(l != &own);
	l->rails[0].tx_bytes = 1000000;
	l->rails[1].tx_bytes = 2000000;
	l->rails[1].rx_pieces = 3000;
	l->msgs = l->tick_msgs = 7;
	l->outstanding = 2;
	l->wait = GDX_LIVE_WAIT_SIGNAL;
	snprintf(l->peer_dev, sizeof(l->peer_dev),
		 "strong signal +0x40 to rank 2, ctx 0: puts on 1 QP(s) unplaced");
	l->tick_ms = now;
	l->stall_ms = now > 60000 ? now - 60000 : 1;
	ASSERT_EQ(doctor("top", "--once", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "one-sided RMA:");
	ASSERT_STR_CONTAINS(doctor_out, "2000000           3000");
	ASSERT_STR_CONTAINS(doctor_out,
			    "RMA rank 1 of 4 on mlx5_0+mlx5_1: 2 request(s) out, "
			    "signal held until its puts are placed: strong signal +0x40");
	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "gdx_rma_put_bytes_total{pid=");
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_1\",port=\"1\"} 2000000\n");
	ASSERT_STR_CONTAINS(doctor_out, "gdx_rma_got_bytes_total{pid=");
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_1\",port=\"1\"} 3000\n");
	/* the two-sided rail counters do not take them */
	ASSERT_EQ(count_of(doctor_out, "gdx_rail_tx_bytes_total{pid="), 2);
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\"} 0\n");
	ASSERT_EQ(doctor("top", "--json", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "\"rma_put_bytes\": 1000000");
	ASSERT_EQ(doctor("hang", "--dir", live_dir, NULL), 10);
	ASSERT_STR_CONTAINS(doctor_out, "rma comm on mlx5_0+mlx5_1 (10.0.0.1:4000) with rank 1 "
					"of 4 (strong signal +0x40 to rank 2");
	ASSERT_STR_CONTAINS(doctor_out, "one-sided RMA holds a signal until the puts it covers "
					"are placed");
	ASSERT_EQ(doctor("hang", "--json", "--dir", live_dir, NULL), 10);
	ASSERT_STR_CONTAINS(doctor_out, "\"comm\": \"rma\"");
	ASSERT_STR_CONTAINS(doctor_out, "\"wait\": \"signal\"");
	gdx_live_rma_close(l, &own);
	gdx_live_close(true);
	live_dir_remove();
}

/* A NIC slot's counter names are its owner's to write: names that differ
 * only in bytes that are not UTF-8 (and U+FFFD itself) print alike in JSON
 * and in a Prometheus label, and a name twice is one name. Each form shows
 * one of them, so top --json is an object with a name once (a reader
 * refuses one with a name twice: found by tests/fuzz/live.c), and the text,
 * which tells them apart, shows each. */
static void test_nic_counter_names_once(void)
{
	static const char *const names[] = {"rx_write_requests", "rx_write_requests", "bad\xff",
					    "bad\xfe", "bad\xef\xbf\xbd"};
	struct gdx_live_nic own, *l;

	live_dir_make();
	gdx_live_open();
	l = gdx_live_nic_open(&own, "rxe0", 1);
	ASSERT(l != &own);
	l->source = GDX_LIVE_NIC_SYSFS;
	l->read_ms = gdx_now_ms();
	for (uint32_t i = 0; i < 5; i++) {
		snprintf(l->counters[i].name, sizeof(l->counters[i].name), "%s", names[i]);
		l->counters[i].value = 100 + i;
	}
	__atomic_store_n(&l->ncounters, 5, __ATOMIC_RELEASE);
	ASSERT_EQ(doctor("top", "--once", "--json", "--interval", "0.05", "--dir", live_dir, NULL),
		  0);
	printf("  json: %s", strstr(doctor_out, "\"counters\": {"));
	ASSERT(json_valid(doctor_out));
	ASSERT_EQ(count_of(doctor_out, "\"rx_write_requests\": 100"), 1);
	ASSERT_EQ(count_of(doctor_out, "\"rx_write_requests\""), 1);
	ASSERT_EQ(count_of(doctor_out, "\"bad\\ufffd\": 102"), 1);
	ASSERT_EQ(count_of(doctor_out, "\"bad"), 1);
	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_EQ(count_of(doctor_out, "counter=\"rx_write_requests\"} 100\n"), 1);
	ASSERT_EQ(count_of(doctor_out, "counter=\"bad\xef\xbf\xbd\"} 102\n"), 1);
	ASSERT_EQ(count_of(doctor_out, "gdx_nic_port_counter_total{"), 2);
	ASSERT_EQ(doctor("top", "--once", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_EQ(count_of(doctor_out, "rx_write_requests 100"), 1);
	ASSERT_STR_CONTAINS(doctor_out, "bad\\xff 102");
	ASSERT_STR_CONTAINS(doctor_out, "bad\\xfe 103");
	ASSERT_STR_CONTAINS(doctor_out, "bad\xef\xbf\xbd 104");
	gdx_live_nic_close(l, &own);
	gdx_live_close(true);
	live_dir_remove();
}

/* A rank with a NIC slot of the port's totals (sysfs's), read at read_ms,
 * rx_write_requests = value: the two ranks of the test below. */
struct port_rank {
	struct steps steps;
	uint64_t read_ms, value;
};

static struct gdx_live_nic *port_rank_open(struct gdx_live_nic *own, uint64_t read_ms,
					   uint64_t value)
{
	struct gdx_live_nic *l;

	gdx_live_open();
	l = gdx_live_nic_open(own, "rxe0", 1);
	ASSERT(l != own);
	l->source = GDX_LIVE_NIC_SYSFS;
	l->read_ms = read_ms;
	snprintf(l->counters[0].name, sizeof(l->counters[0].name), "rx_write_requests");
	l->counters[0].value = value;
	__atomic_store_n(&l->ncounters, 1, __ATOMIC_RELEASE);
	return l;
}

static void port_rank_main(void *arg)
{
	struct port_rank *r = arg;
	struct gdx_live_nic own, *l;

	close(r->steps.to_child[1]);
	close(r->steps.to_parent[0]);
	ASSERT_EQ(setenv("SLURM_PROCID", "1", 1), 0);
	l = port_rank_open(&own, r->read_ms, r->value);
	step_post(r->steps.to_parent[1]);
	step_wait(r->steps.to_child[0]);
	gdx_live_nic_close(l, &own);
	gdx_live_close(true);
}

/* Two ranks of one job on a node, each reading the same port's totals: the
 * Prometheus series say each process's host, job and rank (a server tells
 * many nodes' ranks apart by them, not by pid), and the port's totals once,
 * the freshest reading, without a process's labels (they were said once per
 * process, so that a sum over the node counted the port twice). */
static void test_prometheus_ranks_and_ports(void)
{
	struct port_rank r = {.value = 100};
	struct gdx_live_nic own, *l;
	char host[64] = "", want[256];
	uint64_t now = gdx_now_ms();
	pid_t pid;

	ASSERT_EQ(gethostname(host, sizeof(host) - 1), 0);
	ASSERT_EQ(setenv("SLURM_JOB_ID", "4242", 1), 0);
	live_dir_make();
	r.read_ms = now - 5000;
	steps_make(&r.steps);
	pid = spawn_as(geteuid(), port_rank_main, &r);
	steps_parent_side(&r.steps);
	step_wait(r.steps.to_parent[0]);
	ASSERT_EQ(setenv("SLURM_PROCID", "0", 1), 0);
	l = port_rank_open(&own, now, 250);
	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	printf("  prometheus: %s", strstr(doctor_out, "gdx_nic_port_counter_total{"));
	snprintf(want, sizeof(want),
		 "gdx_messages_total{pid=\"%d\",host=\"%s\",job_id=\"4242\",rank=\"0\"} ",
		 (int)getpid(), host);
	ASSERT_STR_CONTAINS(doctor_out, want);
	snprintf(want, sizeof(want),
		 "gdx_messages_total{pid=\"%d\",host=\"%s\",job_id=\"4242\",rank=\"1\"} ", (int)pid,
		 host);
	ASSERT_STR_CONTAINS(doctor_out, want);
	ASSERT_EQ(count_of(doctor_out, "gdx_nic_port_counter_total{"), 1);
	snprintf(want, sizeof(want),
		 "gdx_nic_port_counter_total{host=\"%s\",nic=\"rxe0\",port=\"1\","
		 "counter=\"rx_write_requests\"} 250\n",
		 host);
	ASSERT_STR_CONTAINS(doctor_out, want);
	/* no per process series of the port's totals */
	ASSERT_EQ(count_of(doctor_out, "gdx_nic_counter_total{"), 0);
	step_post(r.steps.to_child[1]);
	reap_ok(pid);
	gdx_live_nic_close(l, &own);
	gdx_live_close(true);
	unsetenv("SLURM_JOB_ID");
	unsetenv("SLURM_PROCID");
	live_dir_remove();
}

/* The data path's bucket: ticks in [2^b, 2^(b+1)) count in lat[b], 0 and 1
 * in the first, anything past the last bound in the last. */
static void test_latency_buckets(void)
{
	static const struct {
		uint64_t ticks;
		int bucket;
	} cases[] = {
		{0, 0},
		{1, 0},
		{2, 1},
		{3, 1},
		{4, 2},
		{1023, 9},
		{1024, 10},
		{1ULL << 39, 39},
		{1ULL << 45, GDX_LIVE_LAT_BUCKETS - 1},
		{UINT64_MAX, GDX_LIVE_LAT_BUCKETS - 1},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gdx_live_rail r = {0};

		gdx_live_latency(&r, cases[i].ticks);
		ASSERT_EQ(r.lat[cases[i].bucket], 1);
		ASSERT_EQ(r.lat_count, 1);
		ASSERT_EQ(r.lat_sum, cases[i].ticks);
	}
}

/* A rail's histogram as top reads it: 900 sends of ~1.5 us, 90 of ~1.5 ms
 * and 10 of ~1.6 s at a stamp rate of 1 GHz put p50, p99 and p99.9 in the
 * buckets that hold them; the Prometheus histogram is cumulative at bounds
 * of 2^k ns, its +Inf bucket and _count the 1,000 sends, _sum their
 * seconds; at 3 GHz the same ticks count under the same bounds' set. */
static void test_latency_percentiles(void)
{
	char path[PATH_MAX], *p;
	uint64_t hz = 1000000000, lat[GDX_LIVE_LAT_BUCKETS] = {0};
	double p50, p99, p999;
	int fd;

	lat[10] = 900; /* [1.024, 2.048) us */
	lat[20] = 90;  /* [1.05, 2.10) ms */
	lat[30] = 10;  /* [1.07, 2.15) s */
	live_dir_make();
	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	write_stalled_comm(fd, 0, "dev0", "10.0.0.1:5000", "mlx5_0");
	ASSERT_EQ(pwrite(fd, &hz, sizeof(hz), offsetof(struct gdx_live_hdr, stamp_hz)),
		  (ssize_t)sizeof(hz));
	ASSERT_EQ(pwrite(fd, lat, sizeof(lat),
			 (off_t)(offsetof(struct gdx_live, comms) +
				 offsetof(struct gdx_live_comm, rails[0].lat))),
		  (ssize_t)sizeof(lat));
	{
		uint64_t cs[2] = {1000, 900 * 1500 + 90 * 1500000 + 10 * 1600000000ULL};

		ASSERT_EQ(pwrite(fd, cs, sizeof(cs),
				 (off_t)(offsetof(struct gdx_live, comms) +
					 offsetof(struct gdx_live_comm, rails[0].lat_count))),
			  (ssize_t)sizeof(cs));
	}
	close(fd);
	ASSERT_EQ(doctor("top", "--once", "--json", "--interval", "0.05", "--dir", live_dir, NULL),
		  0);
	ASSERT(json_valid(doctor_out));
	p = strstr(doctor_out, "\"latency_us\": {\"p50\": ");
	ASSERT(p);
	ASSERT_EQ(sscanf(p, "\"latency_us\": {\"p50\": %lf, \"p99\": %lf, \"p999\": %lf", &p50,
			 &p99, &p999),
		  3);
	printf("  p50 %.3f us, p99 %.1f us, p99.9 %.0f us\n", p50, p99, p999);
	ASSERT(p50 >= 1.024 && p50 < 2.048);
	ASSERT(p99 >= 1048.576 && p99 <= 2097.152);
	ASSERT(p999 >= 1073741.824 && p999 < 2147483.648);
	ASSERT_STR_CONTAINS(doctor_out, "\"sends_timed\": 1000");
	ASSERT_EQ(doctor("top", "--once", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "send latency by peer");
	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "# TYPE gdx_rail_send_latency_seconds histogram\n");
	/* bucket 10's upper bound, 2^11 ns: the 900 below it */
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\",le=\"2.048e-06\"} 900\n");
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\",le=\"0.002097152\"} 990\n");
	/* the bounds are 2^k ns whatever the process's clock: 1 ns to 2^40 */
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\",le=\"1e-09\"} 0\n");
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\",le=\"1099.51163\"} 1000\n");
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\",le=\"+Inf\"} 1000\n");
	ASSERT_STR_CONTAINS(doctor_out, "_count{pid=");
	ASSERT_STR_CONTAINS(doctor_out, ",nic=\"mlx5_0\",port=\"1\"} 1000\n");
	ASSERT_STR_CONTAINS(doctor_out, "_sum{pid=");
	ASSERT_STR_CONTAINS(doctor_out, "} 16.136350000\n");
	/* another clock: the ticks of bucket 10 (2^11 at most) are 683 ns at
	 * most at 3 GHz, under the 1,024 ns bound; the bounds are the same */
	hz = 3000000000ULL;
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	ASSERT_EQ(pwrite(fd, &hz, sizeof(hz), offsetof(struct gdx_live_hdr, stamp_hz)),
		  (ssize_t)sizeof(hz));
	close(fd);
	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\",le=\"1.024e-06\"} 900\n");
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\",le=\"1e-09\"} 0\n");
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"mlx5_0\",port=\"1\",le=\"+Inf\"} 1000\n");
	gdx_live_close(true);
	live_dir_remove();
}

/* A process of the same user, with one comm on victim0, until told. */
static void quiet_main(void *arg)
{
	struct steps *s = arg;
	char path[PATH_MAX];
	int fd;

	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	write_stalled_comm(fd, 0, "v0", "10.0.0.9", "victim0");
	close(fd);
	step_post(s->to_parent[1]);
	step_wait(s->to_child[0]);
}

/* A file that names 300 NIC ports (made up: its owner writes what it likes)
 * shows 32 of them, and another process's port still shows: top's rows are
 * not one budget that one file can spend for everyone. */
static void test_many_ports_crowd_out_nobody(void)
{
	struct steps st;
	char path[PATH_MAX], nic[16];
	pid_t quiet;
	int fd;

	live_dir_make();
	steps_make(&st);
	quiet = spawn_as(geteuid(), quiet_main, &st);
	steps_parent_side(&st);
	step_wait(st.to_parent[0]);
	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	for (int i = 0; i < 300; i++) {
		snprintf(nic, sizeof(nic), "fake%d", i);
		write_stalled_comm(fd, i, "f0", "10.0.0.8", nic);
	}
	close(fd);
	ASSERT_EQ(doctor("top", "--prometheus", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "nic=\"victim0\"");
	ASSERT_EQ(count_of(doctor_out, "gdx_rail_up{"), 32 + 1);
	ASSERT_EQ(doctor("top", "--once", "--interval", "0.05", "--dir", live_dir, NULL), 0);
	ASSERT_STR_CONTAINS(doctor_out, "victim0 ");
	step_post(st.to_child[1]);
	reap_ok(quiet);
	gdx_live_close(true);
	live_dir_remove();
}

/* The owner of a file reader cuts and regrows it without end. */
static void truncator_main(void *arg)
{
	struct steps *s = arg;
	char path[PATH_MAX];
	struct gdx_live_hdr h;
	double t_end;
	int fd;

	gdx_live_open();
	ASSERT(live_file_of(live_dir, geteuid(), getpid(), path, sizeof(path)));
	fd = open(path, O_RDWR);
	ASSERT(fd >= 0);
	for (int i = 0; i < 8; i++)
		write_stalled_comm(fd, i, "cut0", "10.0.0.3", "cut0");
	ASSERT_EQ(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	step_post(s->to_parent[1]);
	for (t_end = now_s() + 30; now_s() < t_end;) {
		/* whole for a while, then cut inside the slots or inside the header */
		usleep(500);
		ASSERT_EQ(ftruncate(fd, (off_t)(sizeof(h) + 3 * sizeof(struct gdx_live_comm) / 2)),
			  0);
		usleep(100);
		ASSERT_EQ(ftruncate(fd, 16), 0);
		ASSERT_EQ(ftruncate(fd, sizeof(struct gdx_live)), 0);
		ASSERT_EQ(pwrite(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
		for (int i = 0; i < 8; i++)
			write_stalled_comm(fd, i, "cut0", "10.0.0.3", "cut0");
	}
}

/* Attack 5: a file its owner keeps truncating. Reading it (in this process,
 * then gdx-doctor hang twenty times) never dies of SIGBUS: a cut file is a
 * short read, the slot or the file left out. */
static void test_truncated_under_reader(void)
{
	struct gdx_live_comm c;
	struct steps s;
	int seen = 0, slots = 0;
	pid_t pid;
	double t0;

	need_root();
	live_dir_make();
	steps_make(&s);
	pid = spawn_as(ATTACKER, truncator_main, &s);
	steps_parent_side(&s);
	step_wait(s.to_parent[0]);
	for (t0 = now_s(); now_s() - t0 < 2;) {
		struct gdx_live_view *v;
		int skipped, n = scan(&v, &skipped);

		ASSERT(n >= 0);
		seen += n;
		for (int i = 0; i < n; i++) {
			slots += v[i].nslots;
			/* copied whole, its strings terminated */
			for (int k = 0; k < v[i].nslots; k++)
				ASSERT(strlen(v[i].slots[k].c.dev) < sizeof(c.dev));
		}
		unscan();
	}
	printf("  the file read whole %d times, %d slots copied while it was cut and regrown\n",
	       seen, slots);
	ASSERT(seen > 0);
	for (int i = 0; i < 20; i++) {
		int rc = doctor("hang", "--threshold", "0", "--dir", live_dir, NULL);

		ASSERT(rc == 0 || rc == 10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	live_dir_remove();
}

/* ---- the one escaping helper ---- */

static void expect_escape(enum gdx_escape how, const char *in, const char *want)
{
	char out[GDX_ESCAPE_LEN(64)];

	ASSERT_EQ(gdx_escape(how, in, out, sizeof(out)), strlen(in));
	if (strcmp(out, want))
		gdx_test_fail(__FILE__, __LINE__, "escaped '%s', want '%s'", out, want);
}

static void test_escape(void)
{
	char small[10];

	expect_escape(GDX_ESCAPE_TEXT, "rxe0 10.0.0.1", "rxe0 10.0.0.1");
	/* printable UTF-8 as it is; a right-to-left override escaped */
	expect_escape(GDX_ESCAPE_TEXT, "a\x1b[2J\x07\n\\\x7f\xc3\xa9\xe2\x80\xae",
		      "a\\x1b[2J\\x07\\x0a\\\\\\x7f\xc3\xa9\\xe2\\x80\\xae");
	expect_escape(GDX_ESCAPE_PROM_LABEL, "x\"} 1\nevil 1\n#\\", "x\\\"} 1\\nevil 1\\n#\\\\");
	/* UTF-8 kept; control characters and broken UTF-8 as U+FFFD */
	expect_escape(GDX_ESCAPE_PROM_LABEL, "\xc3\xa9\x1b\xc2\x9b\xff\xc3",
		      "\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	expect_escape(
		GDX_ESCAPE_JSON, "a\"b\\c\n\x1b\xc2\x9b\xc3\xa9\xed\xa0\x80\xe2\x82",
		"a\\\"b\\\\c\\u000a\\u001b\\u009b\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd");
	/* overlong, and past U+10FFFF */
	expect_escape(GDX_ESCAPE_JSON, "\xc0\xaf\xf4\x90\x80\x80",
		      "\\ufffd\\ufffd\\ufffd\\ufffd"
		      "\\ufffd\\ufffd");
	/* too small a buffer: an escape is left out whole, and the caller is
	 * told where to go on */
	ASSERT_EQ(gdx_escape(GDX_ESCAPE_JSON,
			     "ab\x1b"
			     "cd",
			     small, 8),
		  2);
	ASSERT_EQ(strcmp(small, "ab"), 0);
	ASSERT_EQ(gdx_escape(GDX_ESCAPE_TEXT, "\x01\x02\x03", small, 10), 2);
	ASSERT_EQ(strcmp(small, "\\x01\\x02"), 0);
}

GDX_TESTS_MAIN(TEST(test_escape, 10), TEST(test_file_private_and_unpredictable, 20),
	       TEST(test_forked_child_leaves_parent_file, 20), TEST(test_long_live_dir, 20),
	       TEST(test_planted_file_not_used, 30), TEST(test_planted_user_dir_refused, 30),
	       TEST(test_sweep_by_lock, 30), TEST(test_containers_both_pid_1, 30),
	       TEST(test_fifo_no_hang, 60), TEST(test_foreign_files_claiming_others, 60),
	       TEST(test_reader_sees_own_user_root_all, 30), TEST(test_output_escaped, 60),
	       TEST(test_copy_shown_once, 30), TEST(test_prometheus_series_once, 30),
	       TEST(test_many_ports_crowd_out_nobody, 30), TEST(test_truncated_under_reader, 120),
	       TEST(test_latency_buckets, 10), TEST(test_latency_percentiles, 30),
	       TEST(test_rma_slot_shown, 30), TEST(test_nic_counter_names_once, 30),
	       TEST(test_prometheus_ranks_and_ports, 30))
