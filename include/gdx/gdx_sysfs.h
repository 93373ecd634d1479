/* SPDX-License-Identifier: MIT */
/* Reading the one-line files of sysfs (and of fixture trees shaped like it). */
#ifndef GDX_SYSFS_H
#define GDX_SYSFS_H

#include <stddef.h>

/* Path of the sysfs tree: "/sys", or the fixture tree GDX_SYSFS_ROOT names
 * (tests only, gdx_env.h). */
const char *gdx_sysfs_root(void);

/* The first line of path, without its newline, into buf (empty on failure):
 * 0, -errno when it cannot be opened, -EIO when reading fails (sysfs answers
 * EINVAL for an unpopulated attribute), -ENODATA when it is empty. */
int gdx_sysfs_read_line(const char *path, char *buf, size_t len);

#endif
