/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the hwloc XML reader (gdx_topo_read.c, through
 * gdx_topo_load()): what topo --xml, check and the plugin's
 * NCCL_GDX_TOPO_FILE read, a file anyone may have written; and the same
 * file through the reader of NCCL's own format (gdx_topo_nccl.c), what
 * NCCL_TOPO_FILE names. The input's
 * first byte chooses its form; the rest is the file:
 *
 *   0  the rest as it is;
 *   1  "HEAD\x01UNIT\x01TAIL": HEAD, UNIT repeated N times, TAIL, N from
 *      the next two bytes (up to 65,535): nesting far past any machine;
 *   2  the rest, then the file grown sparse past the 64 MiB bound.
 *
 *   make fuzz && build/tests/fuzz/topo_xml -max_total_time=60 -timeout=10 \
 *           NEW_DIR tests/fuzz/corpus/topo_xml
 *
 * What must hold: the load returns 0 or one of gdx_topo_load()'s errors,
 * with a reason when it fails; a file past the bound is refused as such
 * (-EFBIG) without being read; a file nesting deeper than the reader's
 * bound is refused before hwloc reads it, the bound in the reason, and
 * never crashes (hwloc's import recurses once per level). A topology that
 * loads has every path class within its range. NCCL's reader returns 0 or
 * its errors with a reason, and only NCCL's classes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topo/gdx_topo.h"
#include "topo/gdx_topo_nccl.h"
#include "tools/common/gdx_topo_query.h"

#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__lsan_default_suppressions(void);

/* hwloc's own import leaks an object on some files it refuses (inside
 * libhwloc, not this reader): what LeakSanitizer finds there is not ours. */
const char *__lsan_default_suppressions(void)
{
	return "leak:hwloc_alloc_setup_object\nleak:libhwloc.so\n";
}

static char fuzz_path[64];

static void fuzz_cleanup(void)
{
	unlink(fuzz_path);
}

/* The file the input makes (see the top of this file). */
static void fuzz_write(int fd, const uint8_t *data, size_t size)
{
	const uint8_t *unit, *tail, *end = data + size;
	size_t n;

	if (!size)
		return;
	if (data[0] != 1 || size < 3) {
		FUZZ_CHECK(write(fd, data + 1, size - 1) == (ssize_t)(size - 1));
		return;
	}
	n = (size_t)data[1] | (size_t)data[2] << 8;
	data += 3;
	unit = memchr(data, 1, (size_t)(end - data));
	tail = unit ? memchr(unit + 1, 1, (size_t)(end - unit - 1)) : NULL;
	if (!unit || !tail) {
		FUZZ_CHECK(write(fd, data, (size_t)(end - data)) == (ssize_t)(end - data));
		return;
	}
	FUZZ_CHECK(write(fd, data, (size_t)(unit - data)) == (ssize_t)(unit - data));
	for (size_t i = 0; i < n; i++)
		FUZZ_CHECK(write(fd, unit + 1, (size_t)(tail - unit - 1)) ==
			   (ssize_t)(tail - unit - 1));
	FUZZ_CHECK(write(fd, tail + 1, (size_t)(end - tail - 1)) == (ssize_t)(end - tail - 1));
}

/* The same file as NCCL's format. */
static void fuzz_nccl(bool huge)
{
	struct gdx_topo_nccl *n;
	char why[256] = "";
	int ret = gdx_topo_nccl_read(-1, fuzz_path, &n, why, sizeof(why));

	FUZZ_CHECK(ret == 0 || ret == -EINVAL || ret == -EFBIG || ret == -ENOMEM);
	FUZZ_CHECK(!ret || why[0]);
	FUZZ_CHECK(!huge || ret == -EFBIG);
	for (int g = 0; !ret && g < n->ngpus; g++)
		for (int k = 0; k < n->nnics; k++) {
			enum gdx_tnc_class p = gdx_topo_nccl_path(n, g, k);

			FUZZ_CHECK(p == GDX_TNC_PIX || p == GDX_TNC_PXB || p == GDX_TNC_PHB ||
				   p == GDX_TNC_SYS);
		}
	gdx_topo_nccl_free(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gdx_topo *t = NULL;
	char why[512] = "";
	int fd, ret;

	if (!fuzz_path[0]) {
		snprintf(fuzz_path, sizeof(fuzz_path), "/tmp/fuzz_topo_xml.XXXXXX");
		fd = mkstemp(fuzz_path);
		FUZZ_CHECK(fd >= 0);
		close(fd);
		atexit(fuzz_cleanup);
	}
	fd = open(fuzz_path, O_WRONLY | O_TRUNC);
	FUZZ_CHECK(fd >= 0);
	fuzz_write(fd, data, size);
	if (size && data[0] == 2)
		FUZZ_CHECK(ftruncate(fd, (64 << 20) + 1 + (off_t)size) == 0);
	close(fd);
	ret = gdx_topo_load(fuzz_path, &t, why, sizeof(why));
	FUZZ_CHECK(ret == 0 || ret == -EINVAL || ret == -EFBIG || ret == -ENOMEM);
	FUZZ_CHECK(!ret || why[0]);
	if (size && data[0] == 2)
		FUZZ_CHECK(ret == -EFBIG && strstr(why, "larger than 64 MiB"));
	if (ret == -EINVAL && strstr(why, "nest deeper"))
		FUZZ_CHECK(strstr(why, "deeper than 256 levels"));
	for (int g = 0; !ret && g < gdx_topo_ngpus(t); g++)
		for (int n = 0; n < gdx_topo_nnics(t); n++)
			FUZZ_CHECK(gdx_topo_path(t, g, n) >= GDX_PATH_PIX &&
				   gdx_topo_path(t, g, n) <= GDX_PATH_UNKNOWN);
	gdx_topo_free(t);
	fuzz_nccl(size && data[0] == 2);
	return 0;
}
