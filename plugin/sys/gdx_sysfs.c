/* SPDX-License-Identifier: MIT */
/* Reading sysfs, or a saved tree shaped like it, inside its root (gdx_sysfs.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/gdx_env.h"
#include "sys/gdx_file.h"
#include "sys/gdx_sysfs.h"

/* An attribute of sysfs is a page at most; a saved tree's file is a copy of
 * one (config space: 4 KiB). Anything larger is not one. */
#define GDX_SYSFS_FILE_MAX (1 << 20)

const char *gdx_sysfs_root(void)
{
	const char *s = gdx_env(GDX_ENV_SYSFS_ROOT);

	return s ? s : "/sys";
}

/* The first line of fd, closed after. */
static int gdx_sysfs_first_line(int fd, char *buf, size_t len)
{
	FILE *f;
	int ret = 0;

	buf[0] = '\0';
	if (fd < 0)
		return fd;
	f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		close(fd);
		return ret;
	}
	if (!fgets(buf, (int)len, f)) {
		buf[0] = '\0';
		ret = ferror(f) ? -EIO : -ENODATA;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

int gdx_sysfs_read_line(const char *path, char *buf, size_t len)
{
	return gdx_sysfs_first_line(
		gdx_file_open(AT_FDCWD, path, GDX_FILE_NOFOLLOW, GDX_SYSFS_FILE_MAX, NULL, 0), buf,
		len);
}

/* rel inside root, opened as flags say (gdx_file_open_in). */
static int gdx_sysfs_open_in(const char *root, const char *rel, unsigned flags, size_t max,
			     char *why, size_t why_len)
{
	int rootfd = gdx_file_open(AT_FDCWD, root, GDX_FILE_DIR | GDX_FILE_ANY, 0, why, why_len);
	int fd;

	if (rootfd < 0)
		return rootfd;
	fd = gdx_file_open_in(rootfd, root, rel, flags, max, why, why_len);
	close(rootfd);
	return fd;
}

int gdx_sysfs_read_line_in(const char *root, const char *rel, char *buf, size_t len)
{
	buf[0] = '\0';
	return gdx_sysfs_first_line(
		gdx_sysfs_open_in(root, rel, GDX_FILE_NOFOLLOW, GDX_SYSFS_FILE_MAX, NULL, 0), buf,
		len);
}

ssize_t gdx_sysfs_read_in(const char *root, const char *rel, void *buf, size_t len)
{
	int fd = gdx_sysfs_open_in(root, rel, GDX_FILE_NOFOLLOW, GDX_SYSFS_FILE_MAX, NULL, 0);
	size_t got = 0;
	ssize_t n = 0;

	if (fd < 0)
		return fd;
	while (got < len && (n = read(fd, (char *)buf + got, len - got)) > 0)
		got += (size_t)n;
	close(fd);
	return n < 0 && !got ? -errno : (ssize_t)got;
}

int gdx_sysfs_read_file_in(const char *root, const char *rel, size_t max, char **buf_p,
			   size_t *len_p, char *why, size_t why_len)
{
	char name[4096];
	int fd = gdx_sysfs_open_in(root, rel, 0, max, why, why_len), ret;

	if (fd < 0)
		return fd;
	snprintf(name, sizeof(name), "%s/%s", root, rel);
	ret = gdx_file_read_fd(fd, name, max, 0, buf_p, len_p, why, why_len);
	close(fd);
	return ret;
}

bool gdx_sysfs_exists_in(const char *root, const char *rel)
{
	int fd = gdx_sysfs_open_in(root, rel, GDX_FILE_ANY, 0, NULL, 0);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

DIR *gdx_sysfs_opendir_in(const char *root, const char *rel)
{
	int fd = gdx_sysfs_open_in(root, rel, GDX_FILE_DIR, 0, NULL, 0);
	DIR *d;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	d = fdopendir(fd);
	if (!d)
		close(fd);
	return d;
}

int gdx_sysfs_realpath_in(const char *root, const char *rel, char *out, size_t len)
{
	int rootfd = gdx_file_open(AT_FDCWD, root, GDX_FILE_DIR | GDX_FILE_ANY, 0, NULL, 0);
	int ret;

	if (rootfd < 0)
		return rootfd;
	ret = gdx_file_resolve_in(rootfd, rel, out, len);
	close(rootfd);
	return ret;
}

/* The realpath of the device's PCI function ("/sys/devices/pci..."), or
 * NULL for a virtual device such as rxe, whose "device" link is missing or
 * not on the PCI bus. Its links resolved inside the sysfs root. */
char *gdx_sysfs_ib_pci_path(const char *ibdev)
{
	const char *root = gdx_sysfs_root();
	char link[PATH_MAX + 32], real[PATH_MAX], subsys[PATH_MAX], *path;
	const char *base;
	size_t rl;

	snprintf(link, sizeof(link), "class/infiniband/%s/device", ibdev);
	if (gdx_sysfs_realpath_in(root, link, real, sizeof(real)))
		return NULL;
	snprintf(link, sizeof(link), "%s/subsystem", real);
	if (gdx_sysfs_realpath_in(root, link, subsys, sizeof(subsys)))
		return NULL;
	base = strrchr(subsys, '/');
	if (!base || strcmp(base, "/pci") != 0)
		return NULL;
	/* the path NCCL reads: the tree's root in front of the path inside it */
	rl = strlen(root);
	if (rl && root[rl - 1] == '/')
		rl--;
	if (asprintf(&path, "%.*s%s", (int)rl, root, real) < 0)
		return NULL;
	return path;
}
