/* SPDX-License-Identifier: MIT */
/*
 * Files a user names (gdx_file.h): inputs opened as hostile, saved trees
 * resolved inside their root (outputs: tools/common/gdx_file_out.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define GDX_HAVE_OPENAT2 1
#endif

#include "sys/gdx_file.h"

/* The kernel's own bounds on a path walk: links followed (MAXSYMLINKS),
 * and the directories a walk holds at once (far past any saved tree). */
#define GDX_WALK_MAX_LINKS 40
#define GDX_WALK_MAX_DEPTH 256

int gdx_file_why(char *why, size_t len, int err, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return err;
}

static const char *gdx_file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFIFO: return "a FIFO";
	case S_IFCHR: return "a character device";
	case S_IFBLK: return "a block device";
	case S_IFSOCK: return "a socket";
	case S_IFLNK: return "a symbolic link";
	case S_IFDIR: return "a directory";
	case S_IFREG: return "a regular file";
	default: return "not a regular file";
	}
}

/* What st says of name against what flags ask: 0, or -errno with why. */
static int gdx_file_check(const struct stat *st, const char *name, unsigned flags, size_t max,
			  char *why, size_t why_len)
{
	if (flags & GDX_FILE_DIR) {
		if (S_ISDIR(st->st_mode))
			return 0;
		return gdx_file_why(why, why_len, -ENOTDIR, "%s: not a directory (%s)", name,
				    gdx_file_kind(st->st_mode));
	}
	if (flags & GDX_FILE_ANY)
		return 0;
	if (S_ISDIR(st->st_mode))
		return gdx_file_why(why, why_len, -EISDIR, "%s is a directory, not a file", name);
	if (!S_ISREG(st->st_mode))
		return gdx_file_why(why, why_len, -EINVAL, "%s is %s, not a file: not read", name,
				    gdx_file_kind(st->st_mode));
	if ((unsigned long long)st->st_size > (unsigned long long)max)
		return gdx_file_why(why, why_len, -EFBIG,
				    "%s is larger than %zu bytes: not what it should be", name,
				    max);
	return 0;
}

static int gdx_file_open_err(int err, const char *name, unsigned flags, char *why, size_t why_len)
{
	if (err == ELOOP && (flags & GDX_FILE_NOFOLLOW))
		return gdx_file_why(why, why_len, -ELOOP,
				    "%s is a symbolic link, which is not followed here", name);
	return gdx_file_why(why, why_len, -err, "%s: %s", name, strerror(err));
}

/* What an O_PATH descriptor of name opened: 0 when it is what flags ask
 * for (a file no larger than max, a directory, anything), else -errno with
 * why, path_fd closed. A FIFO, a device or a socket is found out here by
 * its type, never opened: a device's open may act. */
static int gdx_file_path_ok(int path_fd, const char *name, unsigned flags, size_t max, char *why,
			    size_t why_len)
{
	struct stat st;
	int ret;

	if (fstat(path_fd, &st))
		ret = gdx_file_open_err(errno, name, flags, why, why_len);
	else if ((flags & GDX_FILE_NOFOLLOW) && S_ISLNK(st.st_mode))
		ret = gdx_file_open_err(ELOOP, name, flags, why, why_len); /* the link itself */
	else
		ret = gdx_file_check(&st, name, flags, max, why, why_len);
	if (ret)
		close(path_fd);
	return ret;
}

/* The real open (fd, or -errno) of what path_fd found: the same inode
 * (nothing was put in its place between the two), checked again, its
 * O_NONBLOCK cleared. Returns fd, or -errno with why; closes path_fd. */
static int gdx_file_same(int path_fd, int fd, const char *name, unsigned flags, size_t max,
			 char *why, size_t why_len)
{
	struct stat a, b;
	int ret, fl;

	if (fd < 0) {
		ret = gdx_file_open_err(-fd, name, flags, why, why_len);
		goto out;
	}
	if (fstat(path_fd, &a) || fstat(fd, &b) || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		ret = gdx_file_why(why, why_len, -EAGAIN, "%s changed while it was opened", name);
		goto out;
	}
	ret = gdx_file_check(&b, name, flags, max, why, why_len);
	if (ret)
		goto out;
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK))
		ret = gdx_file_open_err(errno, name, flags, why, why_len);
out:
	if (ret && fd >= 0)
		close(fd);
	close(path_fd);
	return ret ? ret : fd;
}

/* The flags of the real open after the O_PATH one. */
static int gdx_file_oflags(unsigned flags)
{
	return O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
	       (flags & GDX_FILE_NOFOLLOW ? O_NOFOLLOW : 0) |
	       (flags & GDX_FILE_DIR ? O_DIRECTORY : 0);
}

int gdx_file_open(int dirfd, const char *path, unsigned flags, size_t max, char *why,
		  size_t why_len)
{
	int pfd, fd, ret;

	/* the type is checked on what opens: found out, and said, there */
	pfd = openat(dirfd, path,
		     O_PATH | O_CLOEXEC | (flags & GDX_FILE_NOFOLLOW ? O_NOFOLLOW : 0));
	if (pfd < 0)
		return gdx_file_open_err(errno, path, flags, why, why_len);
	ret = gdx_file_path_ok(pfd, path, flags, max, why, why_len);
	if (ret || (flags & GDX_FILE_ANY))
		return ret ? ret : pfd;
	/* O_NONBLOCK: what is there now may be a FIFO put in the file's place */
	fd = openat(dirfd, path, gdx_file_oflags(flags));
	return gdx_file_same(pfd, fd < 0 ? -errno : fd, path, flags, max, why, why_len);
}

int gdx_file_read_fd(int fd, const char *name, size_t max, size_t extra, char **buf_p,
		     size_t *len_p, char *why, size_t why_len)
{
	size_t len = 0, cap = 0;
	char *buf = NULL;
	int ret = 0;

	for (;;) {
		ssize_t n;

		/* room for one byte past max, to find a file that holds more */
		if (cap - len < extra + 2) {
			size_t want = cap ? 2 * cap : 64 << 10;
			char *more;

			if (want > max + extra + 2)
				want = max + extra + 2;
			if (want <= cap) {
				ret = gdx_file_why(
					why, why_len, -EFBIG,
					"%s is larger than %zu bytes: not what it should be", name,
					max);
				break;
			}
			more = realloc(buf, want);
			if (!more) {
				ret = gdx_file_why(why, why_len, -ENOMEM, "%s: out of memory",
						   name);
				break;
			}
			buf = more;
			cap = want;
		}
		n = read(fd, buf + len, cap - len - extra - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = gdx_file_why(why, why_len, -errno, "%s: %s", name, strerror(errno));
			break;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len > max) {
			ret = gdx_file_why(why, why_len, -EFBIG,
					   "%s is larger than %zu bytes: not what it should be",
					   name, max);
			break;
		}
	}
	if (ret) {
		free(buf);
		return ret;
	}
	if (!buf) {
		buf = malloc(extra + 1);
		if (!buf)
			return gdx_file_why(why, why_len, -ENOMEM, "%s: out of memory", name);
	}
	buf[len] = '\0';
	*buf_p = buf;
	*len_p = len;
	return 0;
}

int gdx_file_read(int dirfd, const char *path, unsigned flags, size_t max, size_t extra,
		  char **buf_p, size_t *len_p, char *why, size_t why_len)
{
	int fd = gdx_file_open(dirfd, path, flags & ~(unsigned)(GDX_FILE_DIR | GDX_FILE_ANY), max,
			       why, why_len);
	int ret;

	if (fd < 0)
		return fd;
	ret = gdx_file_read_fd(fd, path, max, extra, buf_p, len_p, why, why_len);
	close(fd);
	return ret;
}

/* ---- saved trees ---- */

/* The walk's directories: fds[0] the root (the caller's), fds[k] the
 * directory at depth k, whose path inside the tree is path[0, at[k]). */
struct gdx_walk {
	int fds[GDX_WALK_MAX_DEPTH + 1];
	size_t at[GDX_WALK_MAX_DEPTH + 1];
	int depth;
	char path[PATH_MAX];
};

static void gdx_walk_up(struct gdx_walk *w, int to)
{
	while (w->depth > to)
		close(w->fds[w->depth--]);
	w->path[w->at[w->depth]] = '\0';
}

/* rest <- target + rest: the link's text walked before what was left of
 * the path (which starts with its '/', if any: "link/" asks the link's
 * target to be a directory, as it asked the link). */
static int gdx_walk_splice(char *rest, size_t cap, const char *target, size_t tlen)
{
	size_t rlen = strlen(rest);

	if (tlen + rlen + 1 > cap)
		return -ENAMETOOLONG;
	memmove(rest + tlen, rest, rlen + 1);
	memcpy(rest, target, tlen);
	return 0;
}

int gdx_file_walk_in(int rootfd, const char *rel, int oflags, char *resolved, size_t len)
{
	size_t cap = 4 * PATH_MAX;
	char *rest = malloc(cap), *target = malloc(PATH_MAX);
	struct gdx_walk *w = malloc(sizeof(*w));
	int links = 0, ret = -ENOENT;
	const char *p;

	if (!rest || !target || !w) {
		ret = -ENOMEM;
		goto out;
	}
	if (strlen(rel) + 1 > cap) {
		ret = -ENAMETOOLONG;
		goto out;
	}
	strcpy(rest, rel);
	w->fds[0] = rootfd;
	w->at[0] = 0;
	w->depth = 0;
	w->path[0] = '\0';
	if (!*rel)
		goto out; /* as openat2: an empty path names nothing */
	for (;;) {
		char comp[NAME_MAX + 1];
		size_t n;
		bool last, slash;
		struct stat st;
		int fd, cur;

		p = rest + strspn(rest, "/");
		if (!*p) {
			/* the directory reached is the file: the root, "a/.." */
			fd = openat(w->fds[w->depth], ".", (oflags & ~O_NOFOLLOW) | O_CLOEXEC);
			ret = fd < 0 ? -errno : fd;
			break;
		}
		n = strcspn(p, "/");
		if (n > NAME_MAX) {
			ret = -ENAMETOOLONG;
			break;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		slash = p[n] == '/';
		memmove(rest, p + n, strlen(p + n) + 1);
		last = !rest[strspn(rest, "/")];
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			/* ".." at the root stays there: the tree is all there is */
			if (comp[1] && w->depth)
				gdx_walk_up(w, w->depth - 1);
			continue;
		}
		cur = w->fds[w->depth];
		fd = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			break;
		}
		if (fstat(fd, &st)) {
			ret = -errno;
			close(fd);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			ssize_t t;

			if (last && !slash && (oflags & O_NOFOLLOW)) {
				close(fd);
				ret = -ELOOP;
				break;
			}
			t = ++links > GDX_WALK_MAX_LINKS ? -1
							 : readlinkat(fd, "", target, PATH_MAX);
			close(fd);
			if (t < 0 || t >= PATH_MAX) {
				ret = links > GDX_WALK_MAX_LINKS ? -ELOOP
				      : t < 0			 ? -errno
								 : -ENAMETOOLONG;
				break;
			}
			ret = gdx_walk_splice(rest, cap, target, (size_t)t);
			if (ret)
				break;
			if (target[0] == '/')
				gdx_walk_up(w, 0); /* an absolute link: from the tree's root */
			continue;
		}
		if (S_ISDIR(st.st_mode) && !last) {
			size_t at = w->at[w->depth];

			if (w->depth == GDX_WALK_MAX_DEPTH || at + 1 + n + 1 > sizeof(w->path)) {
				close(fd);
				ret = -ENAMETOOLONG;
				break;
			}
			w->path[at] = '/';
			memcpy(w->path + at + 1, comp, n + 1);
			w->fds[++w->depth] = fd;
			w->at[w->depth] = at + 1 + n;
			continue;
		}
		if (!last || (slash && !S_ISDIR(st.st_mode))) {
			close(fd);
			ret = -ENOTDIR;
			break;
		}
		/* the last component, which is no link: opened where it is */
		if ((oflags & O_PATH) == O_PATH) {
			ret = fd;
		} else {
			close(fd);
			ret = openat(cur, comp, oflags | O_NOFOLLOW | O_CLOEXEC);
			ret = ret < 0 ? -errno : ret;
		}
		if (ret >= 0 && w->at[w->depth] + 1 + n + 1 <= sizeof(w->path)) {
			size_t at = w->at[w->depth];

			w->path[at] = '/';
			memcpy(w->path + at + 1, comp, n + 1);
		} else if (ret >= 0) {
			close(ret);
			ret = -ENAMETOOLONG;
		}
		break;
	}
	if (ret >= 0 && resolved && len) {
		if ((size_t)snprintf(resolved, len, "%s", w->path[0] ? w->path : "/") >= len) {
			close(ret);
			ret = -ENAMETOOLONG;
		}
	}
	gdx_walk_up(w, 0);
out:
	free(rest);
	free(target);
	free(w);
	return ret;
}

#ifdef GDX_HAVE_OPENAT2
/* openat2 in the root: the descriptor, -ENOSYS where the kernel (or a
 * seccomp filter) has none. */
static int gdx_file_openat2_in(int rootfd, const char *rel, int oflags)
{
	struct open_how how = {
		.flags = (unsigned long long)(oflags | O_CLOEXEC),
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	for (int tries = 0; tries < 8; tries++) {
		long fd = syscall(SYS_openat2, rootfd, rel, &how, sizeof(how));

		if (fd >= 0)
			return (int)fd;
		/* a rename in the tree meanwhile: the kernel asks to look again */
		if (errno != EAGAIN)
			return -errno;
	}
	return -EAGAIN;
}
#endif

bool gdx_file_have_openat2(void)
{
#ifdef GDX_HAVE_OPENAT2
	int fd = gdx_file_openat2_in(AT_FDCWD, "/", O_PATH);

	if (fd >= 0)
		close(fd);
	return fd != -ENOSYS && fd != -EPERM;
#else
	return false;
#endif
}

/* rel in the tree, opened with oflags: openat2, else the walk. */
static int gdx_file_in(int rootfd, const char *rel, int oflags)
{
#ifdef GDX_HAVE_OPENAT2
	int fd = gdx_file_openat2_in(rootfd, rel, oflags);

	if (fd != -ENOSYS && fd != -EPERM)
		return fd;
#endif
	return gdx_file_walk_in(rootfd, rel, oflags, NULL, 0);
}

int gdx_file_open_in(int rootfd, const char *name, const char *rel, unsigned flags, size_t max,
		     char *why, size_t why_len)
{
	char shown[PATH_MAX + 64];
	int pfd, fd, ret;

	snprintf(shown, sizeof(shown), "%s/%s", name, rel[0] == '/' ? rel + 1 : rel);
	pfd = gdx_file_in(rootfd, rel, O_PATH | (flags & GDX_FILE_NOFOLLOW ? O_NOFOLLOW : 0));
	if (pfd < 0)
		return gdx_file_open_err(-pfd, shown, flags, why, why_len);
	ret = gdx_file_path_ok(pfd, shown, flags, max, why, why_len);
	if (ret || (flags & GDX_FILE_ANY))
		return ret ? ret : pfd;
	fd = gdx_file_in(rootfd, rel, gdx_file_oflags(flags));
	return gdx_file_same(pfd, fd, shown, flags, max, why, why_len);
}

/* The path of an open descriptor, from /proc: 0, or -errno. */
static int gdx_file_fd_path(int fd, char *out, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, out, len);
	if (n < 0)
		return -errno;
	if ((size_t)n >= len)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return 0;
}

int gdx_file_resolve_in(int rootfd, const char *rel, char *out, size_t len)
{
#ifdef GDX_HAVE_OPENAT2
	char root[PATH_MAX], file[PATH_MAX];
	int fd = gdx_file_openat2_in(rootfd, rel, O_PATH);

	if (fd >= 0) {
		size_t rl;
		int ret = gdx_file_fd_path(rootfd, root, sizeof(root));

		if (!ret)
			ret = gdx_file_fd_path(fd, file, sizeof(file));
		close(fd);
		rl = strcmp(root, "/") ? strlen(root) : 0;
		/* the file's path, less the root's: what the walk would have made */
		if (!ret && !strncmp(file, root, rl) && (file[rl] == '/' || !file[rl]))
			return (size_t)snprintf(out, len, "%s", file[rl] ? file + rl : "/") < len
				       ? 0
				       : -ENAMETOOLONG;
	} else if (fd != -ENOSYS && fd != -EPERM) {
		return fd;
	}
#endif
	{
		int fd2 = gdx_file_walk_in(rootfd, rel, O_PATH, out, len);

		if (fd2 < 0)
			return fd2;
		close(fd2);
		return 0;
	}
}
