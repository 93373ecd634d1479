/* SPDX-License-Identifier: MIT */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static char gdx_warn_buf[65536];
static char gdx_info_buf[65536];
static int gdx_warn_count;

/* Every line with its level and flags, for what NCCL's mask would print. */
#define GDX_TEST_LINES 2048
static struct gdx_test_line {
	ncclDebugLogLevel level;
	unsigned long flags;
	char text[1024];
} gdx_lines[GDX_TEST_LINES];
static int gdx_nlines;

/* The table's pages touched once at start: the lifecycle tests measure the
 * process's RSS, and 2 MiB of log lines filling up would read as a leak. */
__attribute__((constructor)) static void gdx_lines_touch(void)
{
	volatile char *p = (volatile char *)gdx_lines;

	for (size_t i = 0; i < sizeof(gdx_lines); i += 4096)
		p[i] = 0;
}

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

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (gdx_nlines < GDX_TEST_LINES) {
		struct gdx_test_line *l = &gdx_lines[gdx_nlines++];

		l->level = level;
		l->flags = flags;
		snprintf(l->text, sizeof(l->text), "%.*s", (int)sizeof(l->text) - 1, msg);
	}
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
	gdx_nlines = 0;
}

static bool gdx_line_shown(const struct gdx_test_line *l, ncclDebugLogLevel level,
			   unsigned long mask)
{
	return l->level == level && (l->flags & mask);
}

int gdx_test_log_count(ncclDebugLogLevel level, unsigned long mask, const char *needle)
{
	int n = 0;

	for (int i = 0; i < gdx_nlines; i++)
		if (gdx_line_shown(&gdx_lines[i], level, mask) &&
		    (!needle || strstr(gdx_lines[i].text, needle)))
			n++;
	return n;
}

int gdx_test_log_index(ncclDebugLogLevel level, const char *needle)
{
	for (int i = 0; i < gdx_nlines; i++)
		if (gdx_lines[i].level == level && strstr(gdx_lines[i].text, needle))
			return i;
	return -1;
}

void gdx_test_log_print(ncclDebugLogLevel level, unsigned long mask)
{
	for (int i = 0; i < gdx_nlines; i++)
		if (gdx_line_shown(&gdx_lines[i], level, mask))
			printf("    %s %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO",
			       gdx_lines[i].text);
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
