/* SPDX-License-Identifier: MIT */
/* Live counters in a shared-memory file per process (gdx_live.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"
#include "sys/gdx_env.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include <gdx/gdx_stamp.h>
#include "sys/gdx_sysfs.h"
#include "sys/gdx_time.h"

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

_Static_assert(GDX_LIVE_RAILS >= GDX_MAX_RAILS, "a live slot has room for every rail");
_Static_assert(sizeof(struct gdx_live_nic) <= sizeof(struct gdx_live_comm) &&
		       offsetof(struct gdx_live_nic, role) == 0 &&
		       offsetof(struct gdx_live_nic, gen) == sizeof(uint32_t),
	       "a NIC slot is a comm slot's size at most, with the same first 8 bytes");
_Static_assert(offsetof(struct gdx_live_comm, role) == 0 &&
		       offsetof(struct gdx_live_comm, gen) == sizeof(uint32_t),
	       "a reader rereads a slot's role and gen as its first 8 bytes");

/* A file whose maker has not finished its header is left alone this long;
 * one older was left by a process that died making it. */
#define GDX_LIVE_UNFINISHED_S 60
/* Tries, a millisecond apart, to lock a file just made: a process of the
 * same user sweeping the directory may hold its lock for a moment. */
#define GDX_LIVE_LOCK_TRIES 100
/* Names tried when one is taken (it never is: 64 random bits). */
#define GDX_LIVE_NAME_TRIES 8
/* How long the stamp's rate is measured over, once per process. */
#define GDX_LIVE_STAMP_CAL_NS 5000000

/* The process's file. gdx_live_lock orders open and close; the data path
 * reads gdx_live_map alone. */
static pthread_mutex_t gdx_live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdx_live *gdx_live_map;
static int gdx_live_fd = -1;	 /* held open: its lock says the process lives */
static int gdx_live_dir_fd = -1; /* the user's directory, which has the name */
static pid_t gdx_live_opener;	 /* a forked child shares the file, not owns it */
static char gdx_live_name[GDX_LIVE_NAME_MAX];
static char gdx_live_path[PATH_MAX]; /* for messages */

const char *gdx_live_dir(void)
{
	/* the plugin's loaded parameter; gdx-doctor's environment */
	const char *d = gdx_params.live_dir ? gdx_params.live_dir : gdx_param_env("LIVE_DIR");

	return d && *d ? d : "/dev/shm";
}

static struct gdx_live *gdx_live_file(void)
{
	return __atomic_load_n(&gdx_live_map, __ATOMIC_ACQUIRE);
}

/* Field 22 of a /proc/PID/stat (path): when the process started, in clock
 * ticks since boot; 0 when it cannot be read (the process is gone). *state
 * gets field 3 when state is not NULL. */
uint64_t gdx_proc_start(const char *path, char *state)
{
	char buf[1024], *p;
	unsigned long long start = 0;
	int ret = gdx_sysfs_read_line(path, buf, sizeof(buf));

	if (ret) {
		errno = -ret; /* the reader tells a process gone from no descriptor left */
		return 0;
	}
	/* the command name may hold spaces and parentheses: after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1,
			 " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 state ? state : &(char){0}, &start) != 2)
		return 0;
	return start;
}

/* The inode of this process's pid namespace: containers that share the
 * directory may run processes of the same pid, never of the same
 * namespace. 0 when /proc cannot say. */
unsigned long long gdx_live_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) ? 0 : (unsigned long long)st.st_ino;
}

static void gdx_live_name_of(int pid, unsigned long long ns, unsigned long long rnd, char *buf,
			     size_t len)
{
	snprintf(buf, len, GDX_LIVE_PREFIX "%d.%llu.%016llx", pid, ns, rnd);
}

/* The pid and namespace of a name gdx_live_name_of made; false for any
 * other name, however close. */
bool gdx_live_name_parse(const char *name, int *pid, unsigned long long *ns)
{
	char again[GDX_LIVE_NAME_MAX];
	unsigned long long rnd;

	if (sscanf(name, GDX_LIVE_PREFIX "%d.%llu.%llx", pid, ns, &rnd) != 3 || *pid <= 0)
		return false;
	gdx_live_name_of(*pid, *ns, rnd, again, sizeof(again));
	return !strcmp(again, name);
}

static unsigned long long gdx_live_random(void)
{
	unsigned long long r;
	struct timespec ts;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	/* no entropy yet (early boot): the name must still be new, which
	 * O_EXCL checks; no other user can write in the directory to guess it */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_nsec ^ (unsigned long long)ts.tv_sec << 30 ^
	       (unsigned long long)getpid() << 40;
}

/* The user's directory at path, made if missing, opened only when it is a
 * directory (not a link), the user's, and closed to group and others:
 * anyone else who could write in it could choose, swap or remove the files
 * in it. Returns its descriptor, or -1 with why said. */
static int gdx_live_user_dir_open(const char *path, char *why, size_t len)
{
	struct stat st = {0};
	int fd;

	if (mkdir(path, 0700) && errno != EEXIST) {
		snprintf(why, len, "mkdir %s: %s", path, strerror(errno));
		return -1;
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, len, "%s: %s (it should be a directory of this user's)", path,
			 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		snprintf(why, len,
			 "%s is not this user's alone: owner %u, mode %03o (uid %u and mode 700 "
			 "expected)",
			 path, (unsigned)st.st_uid, (unsigned)st.st_mode & 0777,
			 (unsigned)geteuid());
		close(fd);
		return -1;
	}
	return fd;
}

/* The process's file in the user's directory dfd, under a name no one can
 * guess or hold already, its own alone, locked for as long as the process
 * lives, of the layout's size. Returns its descriptor, or -1 with why said. */
static int gdx_live_file_create(int dfd, const char *udir, char *why, size_t len)
{
	unsigned long long ns = gdx_live_pidns();
	struct stat st;
	int fd = -1, tries = 0;

	for (int i = 0; i < GDX_LIVE_NAME_TRIES && fd < 0; i++) {
		gdx_live_name_of((int)getpid(), ns, gdx_live_random(), gdx_live_name,
				 sizeof(gdx_live_name));
		if ((size_t)snprintf(gdx_live_path, sizeof(gdx_live_path), "%s/%s", udir,
				     gdx_live_name) >= sizeof(gdx_live_path)) {
			snprintf(why, len, "%s: the path is too long", udir);
			return -1; /* gdx_live_make checked: never */
		}
		fd = openat(dfd, gdx_live_name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		snprintf(why, len, "%s: %s", gdx_live_path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		snprintf(why, len, "%s, just made, is not a file of this process's alone",
			 gdx_live_path);
		goto err_unlink;
	}
	while (flock(fd, LOCK_EX | LOCK_NB)) {
		if (errno != EWOULDBLOCK || ++tries == GDX_LIVE_LOCK_TRIES) {
			snprintf(why, len, "flock %s: %s", gdx_live_path, strerror(errno));
			goto err_unlink;
		}
		usleep(1000);
	}
	if (ftruncate(fd, sizeof(struct gdx_live))) {
		snprintf(why, len, "ftruncate %s: %s", gdx_live_path, strerror(errno));
		goto err_unlink;
	}
	return fd;
err_unlink:
	unlinkat(dfd, gdx_live_name, 0);
	close(fd);
	return -1;
}

/* An integer environment variable of a launcher: its value, or -1 when it
 * is unset or not a rank. */
static int32_t gdx_live_env_rank(enum gdx_env_var v)
{
	const char *s = gdx_env(v);
	char *end;
	long r;

	if (!s)
		return -1;
	errno = 0;
	r = strtol(s, &end, 10);
	return errno || *end || r < 0 || r > INT32_MAX ? -1 : (int32_t)r;
}

/* Who the process is in its job: the first rank a launcher gave it. */
static void gdx_live_identity(struct gdx_live_hdr *h)
{
	static const enum gdx_env_var ranks[] = {GDX_ENV_SLURM_PROCID, GDX_ENV_OMPI_RANK,
						 GDX_ENV_PMI_RANK, GDX_ENV_RANK};
	static const enum gdx_env_var local[] = {GDX_ENV_SLURM_LOCALID, GDX_ENV_OMPI_LOCAL_RANK,
						 GDX_ENV_LOCAL_RANK};
	const char *job = gdx_env(GDX_ENV_SLURM_JOB_ID);

	if (gethostname(h->host, sizeof(h->host) - 1))
		h->host[0] = '\0';
	snprintf(h->job, sizeof(h->job), "%s", job ? job : "");
	h->rank = h->local_rank = -1;
	for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]) && h->rank < 0; i++) {
		h->rank = gdx_live_env_rank(ranks[i]);
		if (h->rank >= 0)
			snprintf(h->rank_var, sizeof(h->rank_var), "%s", gdx_env_name(ranks[i]));
	}
	for (size_t i = 0; i < sizeof(local) / sizeof(local[0]) && h->local_rank < 0; i++)
		h->local_rank = gdx_live_env_rank(local[i]);
}

/* gdx_stamp's ticks a second, against CLOCK_MONOTONIC over a few
 * milliseconds (once, as the file is made). */
static uint64_t gdx_live_stamp_hz(void)
{
	struct timespec nap = {0, GDX_LIVE_STAMP_CAL_NS};
	double t0, t1;
	uint64_t s0, s1;

	t0 = gdx_wall_s();
	s0 = gdx_stamp();
	nanosleep(&nap, NULL);
	s1 = gdx_stamp();
	t1 = gdx_wall_s();
	return t1 > t0 && s1 > s0 ? (uint64_t)((double)(s1 - s0) / (t1 - t0)) : 0;
}

static void gdx_live_header(struct gdx_live_hdr *h)
{
	char cmd[64] = "";
	int cfd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (cfd >= 0) {
		ssize_t n = read(cfd, cmd, sizeof(cmd) - 1);

		for (ssize_t i = 0; i < n - 1; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		close(cfd);
	}
	h->layout = GDX_LIVE_LAYOUT;
	h->size = sizeof(struct gdx_live);
	h->pid = (int32_t)getpid();
	h->ncomms = GDX_LIVE_COMMS;
	/* self: in a pid namespace, /proc may be another namespace's */
	h->proc_start = gdx_proc_start("/proc/self/stat", NULL);
	h->created_ms = gdx_now_ms();
	snprintf(h->version, sizeof(h->version), "%s", GDX_VERSION);
	snprintf(h->cmd, sizeof(h->cmd), "%s", cmd);
	gdx_live_identity(h);
	h->stamp_hz = gdx_live_stamp_hz();
	/* the magic last: a reader takes the file once it is whole */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, GDX_LIVE_MAGIC, sizeof(GDX_LIVE_MAGIC));
}

/* Whether a file whose lock was free is one to remove: whole (its process
 * finished it, and has ended since), or never finished and old enough that
 * its maker died making it. */
static bool gdx_live_abandoned(int fd, const struct stat *st)
{
	struct gdx_live_hdr h;

	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
	    !memcmp(h.magic, GDX_LIVE_MAGIC, sizeof(GDX_LIVE_MAGIC)))
		return true;
	return time(NULL) - st->st_mtime > GDX_LIVE_UNFINISHED_S;
}

/* The files in the user's directory dfd that ended processes left. A
 * process holds its file's lock for as long as it lives, so a file whose
 * lock can be taken has none (a pid says nothing across pid namespaces, or
 * once reused). Only regular files of this user's are opened, never
 * blocking, and no lock is waited for. */
static void gdx_live_sweep(int dfd, const char *udir)
{
	int it = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = it >= 0 ? fdopendir(it) : NULL;
	struct dirent *e;

	if (!d) {
		if (it >= 0)
			close(it);
		return;
	}
	while ((e = readdir(d))) {
		unsigned long long ns;
		struct stat st;
		int fd, pid;

		if (!gdx_live_name_parse(e->d_name, &pid, &ns) || !strcmp(e->d_name, gdx_live_name))
			continue;
		fd = openat(dfd, e->d_name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    !flock(fd, LOCK_EX | LOCK_NB) && gdx_live_abandoned(fd, &st) &&
		    !unlinkat(dfd, e->d_name, 0))
			GDX_INFO(NCCL_NET, "removed %s/%s, left by process %d, which is gone", udir,
				 e->d_name, pid);
		close(fd);
	}
	closedir(d);
}

/* The process's file made and mapped: 0, or -1 with why said. */
static int gdx_live_make(char *why, size_t len)
{
	char udir[PATH_MAX];
	struct gdx_live_hdr *h;
	int dfd, fd;

	/* whole paths or none: one cut short names another file */
	if ((size_t)snprintf(udir, sizeof(udir), "%s/" GDX_LIVE_USER_DIR "%u", gdx_live_dir(),
			     (unsigned)geteuid()) +
		    1 + GDX_LIVE_NAME_MAX >
	    sizeof(udir)) {
		snprintf(why, len, "NCCL_GDX_LIVE_DIR is %zu bytes long, too long for a path of %d",
			 strlen(gdx_live_dir()), PATH_MAX);
		return -1;
	}
	dfd = gdx_live_user_dir_open(udir, why, len);
	if (dfd < 0)
		return -1;
	fd = gdx_live_file_create(dfd, udir, why, len);
	if (fd < 0)
		goto err_close_dir;
	/* sparse: only the pages of slots in use take memory */
	h = mmap(NULL, sizeof(struct gdx_live), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (h == MAP_FAILED) {
		snprintf(why, len, "mmap %s: %s", gdx_live_path, strerror(errno));
		goto err_remove_file;
	}
	gdx_live_header(h);
	gdx_live_fd = fd;
	gdx_live_dir_fd = dfd;
	gdx_live_opener = getpid();
	__atomic_store_n(&gdx_live_map, (struct gdx_live *)h, __ATOMIC_RELEASE);
	GDX_INFO(NCCL_NET, "live counters in %s (gdx-doctor top, gdx-doctor hang)", gdx_live_path);
	gdx_live_sweep(dfd, udir);
	return 0;
err_remove_file:
	unlinkat(dfd, gdx_live_name, 0);
	close(fd);
err_close_dir:
	close(dfd);
	gdx_live_name[0] = gdx_live_path[0] = '\0';
	return -1;
}

void gdx_live_open(void)
{
	char why[PATH_MAX + 256];

	pthread_mutex_lock(&gdx_live_lock);
	if (gdx_live_file() && getpid() != gdx_live_opener) {
		/* a forked child loading the plugin makes a file of its own; the
		 * parent's stays mapped for the comms it inherited, and closing
		 * these copies leaves the parent's lock held */
		close(gdx_live_fd);
		close(gdx_live_dir_fd);
		gdx_live_fd = gdx_live_dir_fd = -1;
		__atomic_store_n(&gdx_live_map, NULL, __ATOMIC_RELEASE);
	}
	if (!gdx_live_file() && gdx_params.live && gdx_live_make(why, sizeof(why)))
		GDX_INFO(NCCL_INIT | NCCL_NET,
			 "no live counters: %s (gdx-doctor top and hang will not see this "
			 "process; NCCL_GDX_LIVE_DIR chooses the directory)",
			 why);
	pthread_mutex_unlock(&gdx_live_lock);
}

void gdx_live_close(bool unmap)
{
	struct gdx_live *m;

	pthread_mutex_lock(&gdx_live_lock);
	m = gdx_live_file();
	/* a forked child has the parent's mapping and descriptors, not its file */
	if (m && getpid() == gdx_live_opener) {
		if (gdx_live_fd >= 0) {
			/* gone from the directory before its lock is let go */
			unlinkat(gdx_live_dir_fd, gdx_live_name, 0);
			close(gdx_live_fd);
			close(gdx_live_dir_fd);
			gdx_live_fd = gdx_live_dir_fd = -1;
			gdx_live_name[0] = gdx_live_path[0] = '\0';
		}
		if (unmap) {
			__atomic_store_n(&gdx_live_map, NULL, __ATOMIC_RELEASE);
			munmap(m, sizeof(*m));
		}
	}
	pthread_mutex_unlock(&gdx_live_lock);
}

/* Both ends' out-of-band addresses, as the kernel has them on the socket
 * that stays open: one end's are the other's swapped, whatever address
 * either side dialled (gdx-doctor hang --merge matches them so). */
static void gdx_live_addrs(const struct gdx_comm *c, struct gdx_live_comm *l)
{
	struct gdx_sockaddr a = {.len = sizeof(a.u)};

	if (c->sock >= 0 && !getsockname(c->sock, &a.u.sa, &a.len))
		gdx_sock_addr_str(&a, l->addr, sizeof(l->addr));
	a.len = sizeof(a.u);
	if (c->sock >= 0 && !getpeername(c->sock, &a.u.sa, &a.len))
		gdx_sock_addr_str(&a, l->peer, sizeof(l->peer));
	else
		snprintf(l->peer, sizeof(l->peer), "%s", c->peer);
}

/* A free slot of file m claimed, with a busy role until its owner has
 * filled it in; NULL when there is none. */
static struct gdx_live_comm *gdx_live_take(struct gdx_live *m)
{
	for (int i = 0; m && i < GDX_LIVE_COMMS; i++) {
		uint32_t free_role = GDX_LIVE_FREE;
		struct gdx_live_comm *s = &m->comms[i];

		/* claimed with a busy role first, the real one once filled in */
		if (__atomic_load_n(&s->role, __ATOMIC_RELAXED) == GDX_LIVE_FREE &&
		    __atomic_compare_exchange_n(&s->role, &free_role, UINT32_MAX, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return s;
	}
	return NULL;
}

/* A free slot of the file claimed (gdx_live_take); own when there is none
 * (counted as untracked). Its fields after gen zeroed, its clocks started. */
static struct gdx_live_comm *gdx_live_claim(struct gdx_live_comm *own)
{
	struct gdx_live *m = gdx_live_file();
	struct gdx_live_comm *l = gdx_live_take(m);

	if (!l) {
		if (m)
			__atomic_add_fetch(&m->hdr.untracked, 1, __ATOMIC_RELAXED);
		l = own;
	}
	__atomic_add_fetch(&l->gen, 1, __ATOMIC_RELAXED);
	memset((char *)l + offsetof(struct gdx_live_comm, dev), 0,
	       sizeof(*l) - offsetof(struct gdx_live_comm, dev));
	l->opened_ms = l->tick_ms = l->stall_ms = gdx_now_ms();
	return l;
}

/* The slot's rails: the NICs of each rail, from its opening on. */
static void gdx_live_nics(struct gdx_live_comm *l, int n, struct gdx_dev *const *devs)
{
	l->nrails = (uint32_t)(n < GDX_LIVE_RAILS ? n : GDX_LIVE_RAILS);
	for (uint32_t r = 0; r < l->nrails; r++) {
		snprintf(l->rails[r].ibdev, sizeof(l->rails[r].ibdev), "%.31s", devs[r]->ibdev);
		l->rails[r].port = (uint32_t)devs[r]->ib_port;
		l->rails[r].since_ms = l->opened_ms;
	}
}

void gdx_live_comm_open(struct gdx_comm *c)
{
	struct gdx_live *m = gdx_live_file();
	struct gdx_live_comm *l = gdx_live_claim(&c->live_own);
	struct gdx_dev *devs[GDX_MAX_RAILS];

	snprintf(l->dev, sizeof(l->dev), "%.63s", c->dev_name);
	gdx_live_addrs(c, l);
	snprintf(l->peer_dev, sizeof(l->peer_dev), "%.63s", c->peer_dev);
	for (int r = 0; r < c->ch.nrails; r++)
		devs[r] = c->ch.rails[r].dev;
	gdx_live_nics(l, c->ch.nrails, devs);
	/* sends are timed only into a slot others read, at a rate it says */
#ifndef GDX_LIVE_OFF
	c->ch.timed = m && l != &c->live_own && m->hdr.stamp_hz;
#else
	(void)m;
#endif
	__atomic_store_n(&l->role, c->kind == GDX_KIND_SEND ? GDX_LIVE_SEND : GDX_LIVE_RECV,
			 __ATOMIC_RELEASE);
	c->ch.live = l;
}

struct gdx_live_comm *gdx_live_rma_open(struct gdx_live_comm *own, const char *dev,
					const char *addr, const char *peer, int n,
					struct gdx_dev *const *devs)
{
	struct gdx_live_comm *l = gdx_live_claim(own);

	snprintf(l->dev, sizeof(l->dev), "%.63s", dev);
	snprintf(l->addr, sizeof(l->addr), "%.63s", addr);
	snprintf(l->peer, sizeof(l->peer), "%.63s", peer);
	gdx_live_nics(l, n, devs);
	__atomic_store_n(&l->role, GDX_LIVE_RMA, __ATOMIC_RELEASE);
	return l;
}

struct gdx_live_nic *gdx_live_nic_open(struct gdx_live_nic *own, const char *ibdev, int port)
{
	struct gdx_live_nic *l = (struct gdx_live_nic *)gdx_live_take(gdx_live_file());

	if (!l)
		l = own; /* not counted as untracked: no comm goes unseen */
	__atomic_add_fetch(&l->gen, 1, __ATOMIC_RELAXED);
	memset((char *)l + offsetof(struct gdx_live_nic, ibdev), 0,
	       sizeof(*l) - offsetof(struct gdx_live_nic, ibdev));
	snprintf(l->ibdev, sizeof(l->ibdev), "%.31s", ibdev);
	l->port = (uint32_t)port;
	__atomic_store_n(&l->role, GDX_LIVE_NIC, __ATOMIC_RELEASE);
	return l;
}

void gdx_live_nic_close(struct gdx_live_nic *l, struct gdx_live_nic *own)
{
	struct gdx_live *m = gdx_live_file();

	/* a slot of a file since closed (finalize) is not written again */
	if (!l || l == own || !m || (void *)l < (void *)m->comms ||
	    (void *)l >= (void *)(m->comms + GDX_LIVE_COMMS))
		return;
	__atomic_add_fetch(&l->gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->role, GDX_LIVE_FREE, __ATOMIC_RELEASE);
}

/* The slot given back; what it moved goes to the file's totals. */
static void gdx_live_release(struct gdx_live_comm *l)
{
	struct gdx_live *m = gdx_live_file();

	/* a comm a forked child inherited has its slot in the parent's file,
	 * which the child no longer counts in: the slot is only let go */
	if (m && l >= m->comms && l < m->comms + GDX_LIVE_COMMS) {
		__atomic_add_fetch(&m->hdr.closed_msgs, l->msgs, __ATOMIC_RELAXED);
		__atomic_add_fetch(&m->hdr.closed_bytes_gpu, l->bytes_gpu, __ATOMIC_RELAXED);
		__atomic_add_fetch(&m->hdr.closed_bytes_host, l->bytes_host, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&l->gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->role, GDX_LIVE_FREE, __ATOMIC_RELEASE);
}

void gdx_live_comm_close(struct gdx_comm *c)
{
	struct gdx_live_comm *l = c->ch.live;

	if (!l || l == &c->live_own)
		return;
	c->ch.live = &c->live_own; /* never NULL: what runs after close may still count */
	c->ch.timed = false;
	gdx_live_release(l);
}

void gdx_live_rma_close(struct gdx_live_comm *l, struct gdx_live_comm *own)
{
	if (l && l != own)
		gdx_live_release(l);
}

void gdx_live_tick(struct gdx_comm *c, uint64_t now)
{
	struct gdx_live_comm *l = c->ch.live;
	bool waiting = l->outstanding || l->want_cts;

	l->tick_ms = now;
	if (!waiting || l->msgs != l->tick_msgs) {
		l->tick_msgs = l->msgs;
		l->stall_ms = now;
	}
	l->err = c->err;
	if (c->err)
		l->wait = c->err == -ECONNRESET ? GDX_LIVE_PEER_CLOSED : GDX_LIVE_FAILED;
	else if (!waiting)
		l->wait = GDX_LIVE_IDLE;
	else if (c->kind == GDX_KIND_RECV)
		l->wait = GDX_LIVE_WAIT_DATA;
	else
		l->wait = l->outstanding ? GDX_LIVE_WAIT_COMPLETION : GDX_LIVE_WAIT_CTS;
}

void gdx_live_rail(struct gdx_comm *c, int r, uint32_t state, uint64_t now, uint32_t downs)
{
	if (r >= GDX_LIVE_RAILS)
		return;
	c->ch.live->rails[r].state = state;
	c->ch.live->rails[r].since_ms = now;
	c->ch.live->rails[r].downs = downs;
}
