/* SPDX-License-Identifier: MIT */
/* Outputs a user names, written beside their path and renamed into place
 * (gdx_file_out.h). The plugin writes none: this is the tools'. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/gdx_file.h"
#include "tools/common/gdx_file_out.h"

int gdx_file_out_open(const char *path, struct gdx_file_out *out, char *why, size_t why_len)
{
	const char *base = strrchr(path, '/');
	size_t dirlen = base ? (size_t)(base - path) + 1 : 0;
	unsigned long long rnd = 0;
	struct stat st;
	mode_t mask;
	int ret;

	out->fd = -1;
	out->path = strdup(path);
	out->tmp = malloc(strlen(path) + 32);
	if (!out->path || !out->tmp) {
		ret = gdx_file_why(why, why_len, -ENOMEM, "%s: out of memory", path);
		goto err;
	}
	base = base ? base + 1 : path;
	/* a directory is never replaced: said now, not once the output is made */
	if (!*base || (!lstat(path, &st) && S_ISDIR(st.st_mode))) {
		ret = gdx_file_why(why, why_len, -EISDIR, "%s names a directory, not a file", path);
		goto err;
	}
	for (int tries = 0; tries < 8 && out->fd < 0; tries++) {
		if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
			rnd ^= (unsigned long long)getpid() << 32 ^ (unsigned long long)rand();
		snprintf(out->tmp, strlen(path) + 32, "%.*s.%s.%016llx", (int)dirlen, path, base,
			 rnd);
		out->fd =
			open(out->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out->fd < 0 && errno != EEXIST)
			break;
	}
	if (out->fd < 0) {
		ret = gdx_file_why(why, why_len, -errno, "%s: cannot make a file beside it: %s",
				   path, strerror(errno));
		goto err;
	}
	/* the mode a plain create would have given: 0666 less the umask */
	mask = umask(0);
	umask(mask);
	if (fchmod(out->fd, 0666 & ~mask)) {
		ret = gdx_file_why(why, why_len, -errno, "%s: %s", out->tmp, strerror(errno));
		gdx_file_out_abandon(out);
		return ret;
	}
	return 0;
err:
	free(out->path);
	free(out->tmp);
	out->path = out->tmp = NULL;
	return ret;
}

int gdx_file_out_commit(struct gdx_file_out *out, char *why, size_t why_len)
{
	int ret = 0;

	if (out->fd >= 0 && close(out->fd))
		ret = gdx_file_why(why, why_len, -errno, "%s: %s", out->path, strerror(errno));
	out->fd = -1;
	if (!ret && rename(out->tmp, out->path))
		ret = gdx_file_why(why, why_len, -errno, "%s: cannot put it in place: %s",
				   out->path, strerror(errno));
	if (ret)
		unlink(out->tmp);
	free(out->path);
	free(out->tmp);
	out->path = out->tmp = NULL;
	return ret;
}

void gdx_file_out_abandon(struct gdx_file_out *out)
{
	if (out->fd >= 0)
		close(out->fd);
	out->fd = -1;
	if (out->tmp)
		unlink(out->tmp);
	free(out->path);
	free(out->tmp);
	out->path = out->tmp = NULL;
}
