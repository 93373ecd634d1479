/* SPDX-License-Identifier: MIT */
/* Live counters in a shared-memory file per process (gdx_live.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gdx/gdx_comm.h>
#include <gdx/gdx_dev.h>
#include <gdx/gdx_live.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_param.h>
#include <gdx/gdx_sysfs.h>
#include <gdx/gdx_time.h>

#ifndef GDX_VERSION
#define GDX_VERSION "unknown"
#endif

_Static_assert(GDX_LIVE_RAILS >= GDX_MAX_RAILS, "a live slot has room for every rail");

static struct gdx_live *gdx_live_map;
static char gdx_live_path[256];

const char *gdx_live_dir(void)
{
	/* the plugin's loaded parameter; gdx-doctor's environment */
	const char *d = gdx_params.live_dir ? gdx_params.live_dir : gdx_param_env("LIVE_DIR");

	return d && *d ? d : "/dev/shm";
}

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks
 * since boot; 0 when it cannot be read (the process is gone). *state gets
 * field 3 when state is not NULL. */
static uint64_t gdx_proc_start(int pid, char *state)
{
	char path[64], buf[1024], *p;
	unsigned long long start = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	if (gdx_sysfs_read_line(path, buf, sizeof(buf)))
		return 0;
	/* the command name may hold spaces and parentheses: after the last ')' */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1,
			 " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d "
			 "%*d %*d %*d %llu",
			 state ? state : &(char){0}, &start) != 2)
		return 0;
	return start;
}

/* Whether the file of process pid, started at start, is of a live process. */
static bool gdx_live_owner_alive(int pid, uint64_t start)
{
	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return false;
	return gdx_proc_start(pid, NULL) == start;
}

/* Files of processes that died without removing theirs. */
static void gdx_live_sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[512];
		struct gdx_live_hdr h;
		int fd;

		if (strncmp(e->d_name, GDX_LIVE_PREFIX, strlen(GDX_LIVE_PREFIX)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h) &&
		    !memcmp(h.magic, GDX_LIVE_MAGIC, sizeof(GDX_LIVE_MAGIC)) &&
		    !gdx_live_owner_alive(h.pid, h.proc_start) && !unlink(path))
			GDX_INFO(NCCL_INIT, "removed %s, left by process %d, which is gone", path,
				 h.pid);
		close(fd);
	}
	closedir(d);
}

void gdx_live_open(void)
{
	const char *dir = gdx_live_dir();
	struct gdx_live_hdr *h;
	char cmd[64] = "";
	int fd, cfd;

	if (gdx_live_map || !gdx_params.live)
		return;
	gdx_live_sweep(dir);
	snprintf(gdx_live_path, sizeof(gdx_live_path), "%s/" GDX_LIVE_PREFIX "%d", dir,
		 (int)getpid());
	fd = open(gdx_live_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(struct gdx_live))) {
		GDX_INFO(NCCL_INIT,
			 "no live counters: %s: %s (gdx-doctor top and hang will not see "
			 "this process; NCCL_GDX_LIVE_DIR chooses the directory)",
			 gdx_live_path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(gdx_live_path);
		}
		return;
	}
	/* sparse: only the pages of slots in use take memory */
	h = mmap(NULL, sizeof(struct gdx_live), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED) {
		GDX_INFO(NCCL_INIT, "no live counters: mmap %s: %s", gdx_live_path,
			 strerror(errno));
		unlink(gdx_live_path);
		return;
	}
	cfd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
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
	h->proc_start = gdx_proc_start(h->pid, NULL);
	h->created_ms = gdx_now_ms();
	snprintf(h->version, sizeof(h->version), "%s", GDX_VERSION);
	snprintf(h->cmd, sizeof(h->cmd), "%s", cmd);
	/* the magic last: a reader takes the file once it is whole */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, GDX_LIVE_MAGIC, sizeof(GDX_LIVE_MAGIC));
	gdx_live_map = (struct gdx_live *)h;
	GDX_INFO(NCCL_INIT, "live counters in %s (gdx-doctor top, gdx-doctor hang)", gdx_live_path);
}

void gdx_live_close(bool unmap)
{
	if (!gdx_live_map)
		return;
	unlink(gdx_live_path);
	gdx_live_path[0] = '\0';
	if (unmap) {
		munmap(gdx_live_map, sizeof(struct gdx_live));
		gdx_live_map = NULL;
	}
}

void gdx_live_comm_open(struct gdx_comm *c)
{
	struct gdx_live_comm *l = NULL;

	for (int i = 0; gdx_live_map && i < GDX_LIVE_COMMS && !l; i++) {
		uint32_t free_role = GDX_LIVE_FREE;
		struct gdx_live_comm *s = &gdx_live_map->comms[i];

		/* claimed with a busy role first, the real one once filled in */
		if (__atomic_load_n(&s->role, __ATOMIC_RELAXED) == GDX_LIVE_FREE &&
		    __atomic_compare_exchange_n(&s->role, &free_role, UINT32_MAX, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			l = s;
	}
	if (!l) {
		if (gdx_live_map)
			__atomic_add_fetch(&gdx_live_map->hdr.untracked, 1, __ATOMIC_RELAXED);
		l = &c->live_own;
	}
	__atomic_add_fetch(&l->gen, 1, __ATOMIC_RELAXED);
	memset((char *)l + offsetof(struct gdx_live_comm, dev), 0,
	       sizeof(*l) - offsetof(struct gdx_live_comm, dev));
	snprintf(l->dev, sizeof(l->dev), "%.63s", gdx_vdev_get(c->dev_index)->name);
	snprintf(l->peer, sizeof(l->peer), "%s", c->peer);
	snprintf(l->peer_dev, sizeof(l->peer_dev), "%.63s", c->peer_dev);
	l->nrails = (uint32_t)(c->nrails < GDX_LIVE_RAILS ? c->nrails : GDX_LIVE_RAILS);
	l->opened_ms = l->tick_ms = l->stall_ms = gdx_now_ms();
	for (uint32_t r = 0; r < l->nrails; r++) {
		snprintf(l->rails[r].ibdev, sizeof(l->rails[r].ibdev), "%.31s",
			 c->rails[r].dev->ibdev);
		l->rails[r].port = (uint32_t)c->rails[r].dev->ib_port;
		l->rails[r].since_ms = l->opened_ms;
	}
	__atomic_store_n(&l->role, c->kind == GDX_KIND_SEND ? GDX_LIVE_SEND : GDX_LIVE_RECV,
			 __ATOMIC_RELEASE);
	c->live = l;
}

void gdx_live_comm_close(struct gdx_comm *c)
{
	struct gdx_live_comm *l = c->live;

	if (!l || l == &c->live_own)
		return;
	c->live = &c->live_own; /* never NULL: what runs after close may still count */
	__atomic_add_fetch(&gdx_live_map->hdr.closed_msgs, l->msgs, __ATOMIC_RELAXED);
	__atomic_add_fetch(&gdx_live_map->hdr.closed_bytes_gpu, l->bytes_gpu, __ATOMIC_RELAXED);
	__atomic_add_fetch(&gdx_live_map->hdr.closed_bytes_host, l->bytes_host, __ATOMIC_RELAXED);
	__atomic_add_fetch(&l->gen, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->role, GDX_LIVE_FREE, __ATOMIC_RELEASE);
}

void gdx_live_tick(struct gdx_comm *c, uint64_t now)
{
	struct gdx_live_comm *l = c->live;
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
	c->live->rails[r].state = state;
	c->live->rails[r].since_ms = now;
	c->live->rails[r].downs = downs;
}

/* ---- the reader's side ---- */

static const char *const gdx_live_wait_names[] = {
	[GDX_LIVE_IDLE] = "idle",
	[GDX_LIVE_WAIT_CTS] = "clear-to-send not received",
	[GDX_LIVE_WAIT_COMPLETION] = "completion not yet seen",
	[GDX_LIVE_WAIT_DATA] = "data not received",
	[GDX_LIVE_PEER_CLOSED] = "peer closed",
	[GDX_LIVE_FAILED] = "failed",
};

const char *gdx_live_wait_name(uint32_t wait)
{
	return wait < sizeof(gdx_live_wait_names) / sizeof(gdx_live_wait_names[0])
		       ? gdx_live_wait_names[wait]
		       : "?";
}

static int gdx_live_map_one(const char *path, struct gdx_live_view *v)
{
	struct stat st;
	struct gdx_live *m;
	char state = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size != (off_t)sizeof(struct gdx_live)) {
		close(fd);
		return -EPROTO; /* another layout, or not whole yet */
	}
	m = mmap(NULL, sizeof(*m), PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return -errno;
	if (memcmp(m->hdr.magic, GDX_LIVE_MAGIC, sizeof(GDX_LIVE_MAGIC)) ||
	    m->hdr.layout != GDX_LIVE_LAYOUT || m->hdr.ncomms != GDX_LIVE_COMMS) {
		munmap(m, sizeof(*m));
		return -EPROTO;
	}
	if (gdx_proc_start(m->hdr.pid, &state) != m->hdr.proc_start) {
		munmap(m, sizeof(*m));
		return -ESRCH;
	}
	snprintf(v->path, sizeof(v->path), "%.511s", path);
	v->map = m;
	v->stopped = state == 'T' || state == 't';
	return 0;
}

int gdx_live_scan(const char *dir, struct gdx_live_view **out, int *skipped)
{
	const char *where = dir ? dir : gdx_live_dir();
	DIR *d = opendir(where);
	struct gdx_live_view *v = NULL;
	struct dirent *e;
	int n = 0;

	*out = NULL;
	*skipped = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char path[768];
		struct gdx_live_view *nv;

		if (strncmp(e->d_name, GDX_LIVE_PREFIX, strlen(GDX_LIVE_PREFIX)))
			continue;
		nv = realloc(v, (size_t)(n + 1) * sizeof(*v));
		if (!nv)
			break;
		v = nv;
		snprintf(path, sizeof(path), "%s/%s", where, e->d_name);
		if (gdx_live_map_one(path, &v[n]))
			(*skipped)++;
		else
			n++;
	}
	closedir(d);
	*out = v;
	return n;
}

void gdx_live_unscan(struct gdx_live_view *v, int n)
{
	for (int i = 0; i < n; i++)
		munmap(v[i].map, sizeof(*v[i].map));
	free(v);
}

bool gdx_live_copy(const struct gdx_live *map, int i, struct gdx_live_comm *out)
{
	const struct gdx_live_comm *s = &map->comms[i];
	uint32_t gen = __atomic_load_n(&s->gen, __ATOMIC_ACQUIRE);
	uint32_t role = __atomic_load_n(&s->role, __ATOMIC_ACQUIRE);

	if (role != GDX_LIVE_SEND && role != GDX_LIVE_RECV)
		return false;
	memcpy(out, s, sizeof(*out));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->gen, __ATOMIC_RELAXED) == gen && out->role == role;
}
