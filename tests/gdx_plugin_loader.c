/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static char gdx_warn_buf[65536];
static char gdx_info_buf[65536];
static int gdx_warn_count;

static void gdx_buf_append(char *buf, size_t cap, const char *line)
{
	size_t used = strlen(buf);

	if (used + strlen(line) + 2 < cap) {
		strcat(buf, line);
		strcat(buf, "\n");
	}
}

void gdx_test_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		     const char *fmt, ...)
{
	char msg[2048];
	va_list ap;

	(void)flags;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (level == NCCL_LOG_WARN) {
		gdx_buf_append(gdx_warn_buf, sizeof(gdx_warn_buf), msg);
		gdx_warn_count++;
	} else {
		gdx_buf_append(gdx_info_buf, sizeof(gdx_info_buf), msg);
	}
	if (getenv("GDX_TEST_VERBOSE") || level == NCCL_LOG_WARN)
		fprintf(stderr, "  [%s %s:%d] %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", file,
			line, msg);
}

const char *gdx_test_warnings(void)
{
	return gdx_warn_buf;
}

int gdx_test_warning_count(void)
{
	return gdx_warn_count;
}

const char *gdx_test_infos(void)
{
	return gdx_info_buf;
}

void gdx_test_log_clear(void)
{
	gdx_warn_buf[0] = '\0';
	gdx_info_buf[0] = '\0';
	gdx_warn_count = 0;
}

void gdx_plugin_load(struct gdx_plugin *p)
{
	const char *path = getenv("GDX_PLUGIN");

	if (!path)
		path = "build/libnccl-net-gdx.so";
	p->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!p->lib)
		gdx_test_fail(__FILE__, __LINE__, "dlopen(%s): %s", path, dlerror());
	p->v7 = dlsym(p->lib, "ncclNetPlugin_v7");
	if (!p->v7)
		gdx_test_fail(__FILE__, __LINE__, "dlsym(ncclNetPlugin_v7): %s", dlerror());
}

void gdx_plugin_unload(struct gdx_plugin *p)
{
	if (p->lib && dlclose(p->lib))
		gdx_test_fail(__FILE__, __LINE__, "dlclose: %s", dlerror());
	p->lib = NULL;
	p->v7 = NULL;
}
