/* SPDX-License-Identifier: MIT */
/*
 * Reading sysfs (gdx_sysfs.c), or a saved tree shaped like it: every path
 * is one inside the tree's root, resolved there (gdx_file_open_in()), so
 * that a link a saved tree holds never leads out of it, and every file is
 * opened as a hostile input (never waiting on a FIFO, no device opened).
 */
#ifndef GDX_SYSFS_H
#define GDX_SYSFS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Path of the sysfs tree: "/sys", or the fixture tree GDX_SYSFS_ROOT names
 * (tests only, gdx_env.h). */
const char *gdx_sysfs_root(void);

/* The first line of the file path (an absolute path: /proc's, which has no
 * saved trees; its last component never a link), without its newline, into
 * buf (empty on failure): 0, -errno when it cannot be opened (-EINVAL: not
 * a regular file; -ELOOP: a link), -EIO when reading fails (sysfs answers
 * EINVAL for an unpopulated attribute), -ENODATA when it is empty. */
int gdx_sysfs_read_line(const char *path, char *buf, size_t len);

/* The same for rel inside the tree root ("/sys", a saved tree). An
 * attribute is never a link: one as rel's last component is refused
 * (-ELOOP), the links on the way to it resolved inside root. */
int gdx_sysfs_read_line_in(const char *root, const char *rel, char *buf, size_t len);
/* Up to len bytes of rel inside root (a device's config space; an
 * attribute, no link): how many, or -errno. */
ssize_t gdx_sysfs_read_in(const char *root, const char *rel, void *buf, size_t len);
/* The whole of rel inside root, at most max bytes, into a malloc'd buffer
 * (the caller frees it), NUL-terminated: 0, or -errno with why said. */
int gdx_sysfs_read_file_in(const char *root, const char *rel, size_t max, char **buf_p,
			   size_t *len_p, char *why, size_t why_len);
/* Whether rel is there inside root, whatever it is. */
bool gdx_sysfs_exists_in(const char *root, const char *rel);
/* The directory rel inside root, to list (closedir it), or NULL with errno set. */
DIR *gdx_sysfs_opendir_in(const char *root, const char *rel);
/* The path rel resolves to inside root, from the tree's own root
 * ("/devices/pci0000:15/0000:15:01.0"): 0, or -errno. */
int gdx_sysfs_realpath_in(const char *root, const char *rel, char *out, size_t len);
/* The realpath of RDMA device ibdev's PCI function, the tree's root in
 * front ("/sys/devices/pci..."), malloc'd; NULL for a virtual device such as
 * rxe, whose "device" link is missing or not on the PCI bus. */
char *gdx_sysfs_ib_pci_path(const char *ibdev);

#endif
