/* SPDX-License-Identifier: MIT */
/* Where the tools find the plugin they came with (gdx_plugin_path.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/common/gdx_plugin_path.h"

int gdx_plugin_beside_self(char *out, size_t len)
{
	static const char *const dirs[] = {".", "../lib"};
	char exe[PATH_MAX], dir[PATH_MAX + 8], real[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -ENOENT;
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = '\0';
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(dir, sizeof(dir), "%s/%s", exe, dirs[i]);
		if (!realpath(dir, real) ||
		    (size_t)snprintf(out, len, "%s/" GDX_PLUGIN_FILE, real) >= len)
			continue;
		if (!access(out, R_OK))
			return 0;
	}
	if (len)
		out[0] = '\0';
	return -ENOENT;
}
