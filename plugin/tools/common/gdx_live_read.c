/* SPDX-License-Identifier: MIT */
/*
 * Live counters, the reader's side (gdx_live_read.h): every live file this
 * user may read, each read whole into memory and closed, for gdx-doctor top
 * and hang.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/common/gdx_live_read.h"

/* Each wait in words, and as the key a report names it by (hang --merge). */
static const char *const gdx_live_wait_names[][2] = {
	[GDX_LIVE_IDLE] = {"idle", "idle"},
	[GDX_LIVE_WAIT_CTS] = {"clear-to-send not received", "cts"},
	[GDX_LIVE_WAIT_COMPLETION] = {"completion not yet seen", "completion"},
	[GDX_LIVE_WAIT_DATA] = {"data not received", "data"},
	[GDX_LIVE_PEER_CLOSED] = {"peer closed", "peer_closed"},
	[GDX_LIVE_FAILED] = {"failed", "failed"},
	[GDX_LIVE_WAIT_SIGNAL] = {"signal held until its puts are placed", "signal"},
};

/* A slot in use, of a role this reader shows. */
static bool gdx_live_role_known(uint32_t role)
{
	return role == GDX_LIVE_SEND || role == GDX_LIVE_RECV || role == GDX_LIVE_RMA ||
	       role == GDX_LIVE_NIC;
}

/* The uid in a per-user directory's name, written as gdx_live_open writes it. */
static bool gdx_live_user_dir_parse(const char *name, unsigned *uid)
{
	char again[32];

	if (sscanf(name, GDX_LIVE_USER_DIR "%u", uid) != 1)
		return false;
	snprintf(again, sizeof(again), GDX_LIVE_USER_DIR "%u", *uid);
	return !strcmp(again, name);
}

const char *gdx_live_role_name(uint32_t role)
{
	return role == GDX_LIVE_SEND ? "send" : role == GDX_LIVE_RMA ? "rma" : "receive";
}

const char *gdx_live_wait_name(uint32_t wait)
{
	return wait < sizeof(gdx_live_wait_names) / sizeof(gdx_live_wait_names[0])
		       ? gdx_live_wait_names[wait][0]
		       : "?";
}

const char *gdx_live_wait_key(uint32_t wait)
{
	return wait < sizeof(gdx_live_wait_names) / sizeof(gdx_live_wait_names[0])
		       ? gdx_live_wait_names[wait][1]
		       : "unknown";
}

/* The effective uid of process pid, from /proc/PID/status (/proc/PID itself
 * is root's when the process is not dumpable); -1 when it cannot be read. */
static long gdx_proc_euid(int pid)
{
	char path[64], buf[2048], *p;
	unsigned long real, eff;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strstr(buf, "\nUid:");
	if (!p || sscanf(p, "\nUid: %lu %lu", &real, &eff) != 2)
		return -1;
	return (long)eff;
}

/* A slot changed while it was copied (claimed or released): read again a
 * few times, then left out of this scan. */
#define GDX_LIVE_COPY_TRIES 4
/* Slots read at once for their role and gen: the free ones cost no more. */
#define GDX_LIVE_CHUNK 16

/* Errors no file is to blame for: the scan stops and says so, rather than
 * leave a process out as if its file were wrong. */
static bool gdx_live_hard(int err)
{
	return err == EMFILE || err == ENFILE || err == ENOMEM;
}

/* What a scan has found so far. */
struct gdx_live_found {
	struct gdx_live_scan *s;
	int cap;
	unsigned long long ns; /* the reader's pid namespace */
	int *pids;	       /* pid -> view, open addressing: -1 free */
	int pids_cap;
	struct gdx_live_comm *chunk; /* GDX_LIVE_CHUNK slots, as read */
};

/* The slot at i, whose role and gen before were as given, copied
 * consistently into out: the same role and gen before and after the copy
 * (gen only grows: no claim or release came between, whatever order the
 * copy read the slot in). false when it changed or the file was cut. */
static bool gdx_live_copy_slot(int fd, int i, uint32_t role, uint32_t gen,
			       struct gdx_live_comm *out)
{
	off_t at = (off_t)(offsetof(struct gdx_live, comms) + (size_t)i * sizeof(*out));
	uint32_t after[2]; /* role, gen */

	if (pread(fd, out, sizeof(*out), at) != (ssize_t)sizeof(*out) ||
	    pread(fd, after, sizeof(after), at) != (ssize_t)sizeof(after))
		return false;
	return after[0] == role && after[1] == gen && out->role == role && out->gen == gen;
}

/* A copied slot made safe to print from: strings terminated, rails within
 * the slot's. */
static void gdx_live_slot_tidy(struct gdx_live_comm *c)
{
	c->dev[sizeof(c->dev) - 1] = c->addr[sizeof(c->addr) - 1] = '\0';
	c->peer[sizeof(c->peer) - 1] = c->peer_dev[sizeof(c->peer_dev) - 1] = '\0';
	if (c->nrails > GDX_LIVE_RAILS)
		c->nrails = GDX_LIVE_RAILS;
	for (int r = 0; r < GDX_LIVE_RAILS; r++)
		c->rails[r].ibdev[sizeof(c->rails[r].ibdev) - 1] = '\0';
}

/* A NIC slot (copied as a comm's: the same size or more) into v->nics,
 * its strings terminated and its counters within the slot's. */
static int gdx_live_nic_add(struct gdx_live_view *v, const struct gdx_live_comm *c)
{
	struct gdx_live_nic *nv = realloc(v->nics, (size_t)(v->nnics + 1) * sizeof(*nv));
	struct gdx_live_nic *n;

	if (!nv)
		return -ENOMEM;
	v->nics = nv;
	n = &v->nics[v->nnics++];
	memcpy(n, c, sizeof(*n));
	n->ibdev[sizeof(n->ibdev) - 1] = '\0';
	if (n->ncounters > GDX_LIVE_NIC_COUNTERS)
		n->ncounters = GDX_LIVE_NIC_COUNTERS;
	for (int i = 0; i < GDX_LIVE_NIC_COUNTERS; i++)
		n->counters[i].name[GDX_LIVE_NIC_NAME - 1] = '\0';
	return 0;
}

static int gdx_live_slot_add(struct gdx_live_view *v, int *cap, int slot,
			     const struct gdx_live_comm *c)
{
	if (v->nslots == *cap) {
		int ncap = *cap ? 2 * *cap : 16;
		struct gdx_live_slot *ns = realloc(v->slots, (size_t)ncap * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		v->slots = ns;
		*cap = ncap;
	}
	v->slots[v->nslots].slot = slot;
	v->slots[v->nslots].c = *c;
	gdx_live_slot_tidy(&v->slots[v->nslots].c);
	v->nslots++;
	return 0;
}

/* Every slot in use of the file fd into v, while *budget (the user's slots
 * left) lasts: a chunk of slots read for their roles, each slot in use
 * copied on its own. A file cut short ends the reading; -ENOMEM. */
static int gdx_live_read_slots(int fd, struct gdx_live_found *f, struct gdx_live_view *v,
			       long *budget)
{
	const size_t sz = sizeof(struct gdx_live_comm);
	int cap = 0;

	for (int base = 0; base < GDX_LIVE_COMMS; base += GDX_LIVE_CHUNK) {
		off_t at = (off_t)(offsetof(struct gdx_live, comms) + (size_t)base * sz);

		if (pread(fd, f->chunk, GDX_LIVE_CHUNK * sz, at) != (ssize_t)(GDX_LIVE_CHUNK * sz))
			return 0;
		for (int k = 0; k < GDX_LIVE_CHUNK; k++) {
			uint32_t role = f->chunk[k].role, gen = f->chunk[k].gen;
			struct gdx_live_comm c;
			int tries = 0;

			if (!gdx_live_role_known(role))
				continue;
			if (*budget <= 0) {
				v->slots_cut = true;
				return 0;
			}
			while (!gdx_live_copy_slot(fd, base + k, role, gen, &c) &&
			       ++tries < GDX_LIVE_COPY_TRIES) {
				off_t sat = at + (off_t)((size_t)k * sz);
				uint32_t again[2];

				if (pread(fd, again, sizeof(again), sat) != (ssize_t)sizeof(again))
					return 0;
				role = again[0];
				gen = again[1];
				if (!gdx_live_role_known(role))
					break;
			}
			if (tries == GDX_LIVE_COPY_TRIES || !gdx_live_role_known(role))
				continue; /* being claimed or released: not in this scan */
			if (role == GDX_LIVE_NIC ? gdx_live_nic_add(v, &c)
						 : gdx_live_slot_add(v, &cap, base + k, &c))
				return -ENOMEM;
			(*budget)--;
		}
	}
	return 0;
}

/* The file name of user uid's directory udfd into v, when it is the live
 * file of a process of that user's in pid namespace ns (gdx_live_scan),
 * its slots read while budget lasts, the file closed: 0, else -errno why
 * it is left out, or a hard error (gdx_live_hard) for the scan. */
static int gdx_live_read_one(int udfd, const char *name, unsigned uid, struct gdx_live_found *f,
			     struct gdx_live_view *v, long *budget)
{
	char stat_path[64], state = 0;
	unsigned long long file_ns;
	struct gdx_live_hdr h;
	struct stat st;
	int pid, fd, ret;

	memset(v, 0, sizeof(*v));
	if (!gdx_live_name_parse(name, &pid, &file_ns))
		return -EPROTO;
	if (file_ns != f->ns)
		return -ESRCH; /* its pid is another process's here */
	fd = openat(udfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = -EPROTO; /* another layout, not whole yet, or not a file of one user's */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != uid || st.st_nlink != 1 ||
	    st.st_size != (off_t)sizeof(struct gdx_live))
		goto out;
	if (pread(fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h) ||
	    memcmp(h.magic, GDX_LIVE_MAGIC, sizeof(GDX_LIVE_MAGIC)) ||
	    h.layout != GDX_LIVE_LAYOUT || h.size != sizeof(struct gdx_live) ||
	    h.ncomms != GDX_LIVE_COMMS || h.pid != pid)
		goto out;
	ret = -ESRCH;
	snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", pid);
	errno = 0;
	if (gdx_proc_start(stat_path, &state) != h.proc_start) {
		if (gdx_live_hard(errno))
			ret = -errno; /* not a process gone: no descriptor to look */
		goto out;
	}
	/* a file speaks for a process only when its owner runs that process */
	ret = -EPERM;
	errno = 0;
	if (gdx_proc_euid(pid) != (long)uid) {
		if (gdx_live_hard(errno))
			ret = -errno;
		goto out;
	}
	snprintf(v->name, sizeof(v->name), "%s", name);
	v->uid = uid;
	v->hdr = h;
	v->hdr.cmd[sizeof(h.cmd) - 1] = v->hdr.version[sizeof(h.version) - 1] = '\0';
	v->hdr.host[sizeof(h.host) - 1] = v->hdr.job[sizeof(h.job) - 1] = '\0';
	v->hdr.rank_var[sizeof(h.rank_var) - 1] = '\0';
	v->stopped = state == 'T' || state == 't';
	ret = gdx_live_read_slots(fd, f, v, budget);
	if (ret) {
		free(v->slots);
		free(v->nics);
		v->slots = NULL;
		v->nics = NULL;
	}
out:
	close(fd);
	return ret;
}

/* The view of pid among those taken (-1: none): a process is shown once. */
static int *gdx_live_pid_slot(struct gdx_live_found *f, int pid)
{
	unsigned mask = (unsigned)f->pids_cap - 1, i = ((unsigned)pid * 2654435761u) & mask;

	while (f->pids[i] >= 0 && f->s->v[f->pids[i]].hdr.pid != pid)
		i = (i + 1) & mask;
	return &f->pids[i];
}

static int gdx_live_pids_grow(struct gdx_live_found *f)
{
	int cap = f->pids_cap ? 2 * f->pids_cap : 256, *old = f->pids, old_cap = f->pids_cap;

	f->pids = malloc((size_t)cap * sizeof(int));
	if (!f->pids) {
		f->pids = old;
		return -ENOMEM;
	}
	memset(f->pids, 0xff, (size_t)cap * sizeof(int));
	f->pids_cap = cap;
	for (int i = 0; i < old_cap; i++)
		if (old[i] >= 0)
			*gdx_live_pid_slot(f, f->s->v[old[i]].hdr.pid) = old[i];
	free(old);
	return 0;
}

/* Takes the view just read, s->v[s->n], unless a file taken before names
 * the same process: a process has one file, but its owner may copy it, and
 * a program it exec'd may have left one behind. Of two, the newer is taken
 * and the other left out (its slots given back to the user's budget). */
static int gdx_live_take(struct gdx_live_found *f, long *budget)
{
	struct gdx_live_scan *s = f->s;
	struct gdx_live_view *nv = &s->v[s->n];
	int *at, ret;

	if (2 * (s->n + 1) > f->pids_cap && (ret = gdx_live_pids_grow(f)))
		return ret;
	at = gdx_live_pid_slot(f, nv->hdr.pid);
	if (*at < 0) {
		*at = s->n++;
		return 0;
	}
	s->skipped++;
	if (nv->hdr.created_ms > s->v[*at].hdr.created_ms) {
		*budget += s->v[*at].nslots + s->v[*at].nnics;
		free(s->v[*at].slots);
		free(s->v[*at].nics);
		s->v[*at] = *nv;
	} else {
		*budget += nv->nslots + nv->nnics;
		free(nv->slots);
		free(nv->nics);
	}
	return 0;
}

/* A user's note (NULL when GDX_LIVE_USERS_SAID are said: counted). */
static struct gdx_live_user *gdx_live_note(struct gdx_live_scan *s, unsigned uid)
{
	if (s->nusers && s->users[s->nusers - 1].uid == uid)
		return &s->users[s->nusers - 1];
	if (s->nusers == GDX_LIVE_USERS_SAID) {
		s->more_users++;
		return NULL;
	}
	memset(&s->users[s->nusers], 0, sizeof(s->users[0]));
	s->users[s->nusers].uid = uid;
	return &s->users[s->nusers++];
}

/* Reads every file of user uid's directory dname in dfd into f: 0, or a
 * hard error. */
static int gdx_live_scan_user(int dfd, const char *dname, unsigned uid, struct gdx_live_found *f)
{
	int udfd = openat(dfd, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct gdx_live_scan *s = f->s;
	struct gdx_live_user *note;
	long budget = GDX_LIVE_USER_SLOTS;
	int it, ret = 0, files = 0;
	struct dirent *e;
	struct stat st;
	DIR *d = NULL;

	if (udfd < 0) {
		if (gdx_live_hard(errno))
			return -errno;
		s->skipped++; /* not a directory: not made by the plugin */
		return 0;
	}
	/* one another user could write in says nothing of its files: said,
	 * with who owns it (another user made it first: the plugin of the user
	 * it is named for makes no live files while it is there) */
	if (fstat(udfd, &st) || st.st_uid != uid || (st.st_mode & 077)) {
		note = gdx_live_note(s, uid);
		if (note) {
			note->foreign = true;
			note->owner = (unsigned)st.st_uid;
			note->mode = (unsigned)st.st_mode & 07777;
		}
		goto out;
	}
	it = openat(udfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = it >= 0 ? fdopendir(it) : NULL;
	if (!d) {
		ret = gdx_live_hard(errno) ? -errno : 0;
		if (it >= 0)
			close(it);
		s->skipped += !ret;
		goto out;
	}
	while ((e = readdir(d)) && !ret) {
		struct gdx_live_view *nv;

		if (strncmp(e->d_name, GDX_LIVE_PREFIX, strlen(GDX_LIVE_PREFIX)))
			continue;
		if (files++ == GDX_LIVE_USER_FILES || files > GDX_LIVE_USER_FILES) {
			note = gdx_live_note(s, uid);
			if (note)
				note->files_left++;
			continue;
		}
		if (s->n == f->cap) {
			int cap = f->cap ? 2 * f->cap : 16;

			nv = realloc(s->v, (size_t)cap * sizeof(*nv));
			if (!nv) {
				ret = -ENOMEM;
				break;
			}
			s->v = nv;
			f->cap = cap;
		}
		ret = gdx_live_read_one(udfd, e->d_name, uid, f, &s->v[s->n], &budget);
		if (ret && !gdx_live_hard(-ret)) {
			s->skipped++;
			ret = 0;
		} else if (!ret) {
			bool cut = s->v[s->n].slots_cut;

			ret = gdx_live_take(f, &budget);
			note = cut && !ret ? gdx_live_note(s, uid) : NULL;
			if (note)
				note->procs_cut++;
		}
	}
	closedir(d);
out:
	close(udfd);
	return ret;
}

int gdx_live_scan(const char *dir, struct gdx_live_scan *s)
{
	const char *where = dir ? dir : gdx_live_dir();
	struct gdx_live_found f = {.s = s, .ns = gdx_live_pidns()};
	unsigned me = (unsigned)geteuid();
	int dfd, it, ret = 0;
	struct dirent *e;
	DIR *d;

	memset(s, 0, sizeof(*s));
	f.chunk = malloc(GDX_LIVE_CHUNK * sizeof(*f.chunk));
	if (!f.chunk)
		return -ENOMEM;
	dfd = open(where, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		goto out;
	}
	it = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = it >= 0 ? fdopendir(it) : NULL;
	if (!d) {
		ret = -errno;
		if (it >= 0)
			close(it);
		close(dfd);
		goto out;
	}
	while (!ret && (e = readdir(d))) {
		struct stat st;
		unsigned uid;

		if (gdx_live_user_dir_parse(e->d_name, &uid)) {
			if (me == 0 || uid == me)
				ret = gdx_live_scan_user(dfd, e->d_name, uid, &f);
		} else if (!strncmp(e->d_name, GDX_LIVE_PREFIX, strlen(GDX_LIVE_PREFIX)) &&
			   !fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
			   S_ISREG(st.st_mode) && (me == 0 || st.st_uid == me)) {
			s->skipped++; /* an older plugin's, never opened */
		}
	}
	closedir(d);
	close(dfd);
out:
	free(f.chunk);
	free(f.pids);
	if (ret)
		gdx_live_scan_free(s);
	return ret;
}

void gdx_live_scan_free(struct gdx_live_scan *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->v[i].slots);
		free(s->v[i].nics);
	}
	free(s->v);
	s->v = NULL;
	s->n = 0;
}
