/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <gdx/gdx_env.h>
#include <gdx/gdx_sysfs.h>

const char *gdx_sysfs_root(void)
{
	const char *s = gdx_env(GDX_ENV_SYSFS_ROOT);

	return s ? s : "/sys";
}

int gdx_sysfs_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	buf[0] = '\0';
	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f)) {
		buf[0] = '\0';
		ret = ferror(f) ? -EIO : -ENODATA;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}
