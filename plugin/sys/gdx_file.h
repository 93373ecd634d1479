/* SPDX-License-Identifier: MIT */
/*
 * Files a user names, read by the plugin and the tools alike (gdx_file.c;
 * the tools' outputs: tools/common/gdx_file_out.h). An input is hostile until checked: the path may
 * be a FIFO (whose open waits for a writer), a device, a socket, a link, a directory, huge, or
 * another user's; a saved tree may hold links that lead out of it. An output is never written
 * through what is at its path: a planted file, FIFO or link stays as it was.
 *
 * Every call returns 0 or a descriptor, or a negative errno with one line in
 * why (why_len bytes; NULL or 0 for none) that names the path and the cause.
 */
#ifndef GDX_FILE_H
#define GDX_FILE_H

#include <stdbool.h>
#include <stddef.h>

enum gdx_file_flags {
	/* a symbolic link as the path's last component is refused (-ELOOP):
	 * where a link is never right */
	GDX_FILE_NOFOLLOW = 1 << 0,
	/* a directory is asked for, not a file (-ENOTDIR otherwise) */
	GDX_FILE_DIR = 1 << 1,
	/* anything that is there (O_PATH), for whether it is: no type checked
	 * (but a directory's, with GDX_FILE_DIR), nothing read */
	GDX_FILE_ANY = 1 << 2,
};

/* The largest file gdx_file_read() and the size checks take when the caller
 * has no bound of its own: none of the inputs is ever near it. */
#define GDX_FILE_MAX_DEFAULT ((size_t)64 << 20)

/*
 * Opens path (relative to dirfd, or AT_FDCWD) for reading as a hostile
 * input: with O_NONBLOCK, so that opening a FIFO does not wait for a
 * writer; then fstat must show a regular file of at most max bytes (with
 * GDX_FILE_DIR a directory); then O_NONBLOCK is cleared. Returns the
 * descriptor (close-on-exec), or -ENOENT, -EACCES ... as open(2) says;
 * -EINVAL for a FIFO, a device or a socket; -EISDIR, -ENOTDIR; -EFBIG past
 * max; -ELOOP for a link with GDX_FILE_NOFOLLOW.
 */
int gdx_file_open(int dirfd, const char *path, unsigned flags, size_t max, char *why,
		  size_t why_len);

/*
 * The whole of the regular file path, opened as gdx_file_open() opens it,
 * into a malloc'd buffer (*buf_p, the caller's to free) of *len_p bytes, a
 * NUL after them and extra spare bytes beyond: -EFBIG when it holds more
 * than max bytes (a file that grows while it is read too), -ENOMEM.
 */
int gdx_file_read(int dirfd, const char *path, unsigned flags, size_t max, size_t extra,
		  char **buf_p, size_t *len_p, char *why, size_t why_len);

/* The same from fd, opened and checked already (gdx_file_open_in()), to its
 * end; name is the file's, for why. fd stays the caller's. */
int gdx_file_read_fd(int fd, const char *name, size_t max, size_t extra, char **buf_p,
		     size_t *len_p, char *why, size_t why_len);

/*
 * A saved tree: rel (with or without a leading '/') resolved inside the
 * directory rootfd as if it were "/": an absolute link starts again at the
 * tree's root, ".." stops there, and no link leads out of it, whatever the
 * tree holds. openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) where the
 * kernel has it (5.6 and later), else a walk of its own by the same rules,
 * one component at a time, never following a link the kernel would follow
 * for it. Then checked as gdx_file_open() checks (flags, max). name is the
 * tree's, for why.
 */
int gdx_file_open_in(int rootfd, const char *name, const char *rel, unsigned flags, size_t max,
		     char *why, size_t why_len);
/* The path rel resolves to inside the tree, from its root ("/devices/pci0000:15/..."):
 * realpath(3) with the tree's root for "/", into out. 0, or -errno. */
int gdx_file_resolve_in(int rootfd, const char *rel, char *out, size_t len);

/* Writes fmt's line into why (len bytes), unless why is NULL or len 0, and
 * returns err: a failure said and returned in one step. */
int gdx_file_why(char *why, size_t len, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* For the tests only: no other file of the plugin uses what follows. */

/*
 * gdx_file_open_in()'s walk, which it falls back to where openat2 is not
 * there: rel resolved inside rootfd, opened with oflags (O_PATH, or
 * O_RDONLY with O_NOFOLLOW and O_NONBLOCK as the caller wants; O_NOFOLLOW
 * refuses a link as the last component). Returns the descriptor, the path
 * inside the tree in resolved (len bytes; NULL for none), or -errno.
 */
int gdx_file_walk_in(int rootfd, const char *rel, int oflags, char *resolved, size_t len);
/* Whether gdx_file_open_in() finds openat2 (false where it falls back). */
bool gdx_file_have_openat2(void);

#endif
