/* SPDX-License-Identifier: MIT */
/*
 * Loads the built plugin the way NCCL does (dlopen RTLD_NOW|RTLD_LOCAL, then
 * the ncclNetPlugin_v7 symbol) and gives it a logger that keeps every line,
 * so tests can assert what the plugin said.
 */
#ifndef GDX_PLUGIN_LOADER_H
#define GDX_PLUGIN_LOADER_H

#include <nccl/net.h>

struct gdx_plugin {
	void *lib;
	const ncclNet_v7_t *v7;
};

/* Path from $GDX_PLUGIN, else build/libnccl-net-gdx.so. Fails the test on error. */
void gdx_plugin_load(struct gdx_plugin *p);
void gdx_plugin_unload(struct gdx_plugin *p);

/* The logger handed to init(): prints to stderr when $GDX_TEST_VERBOSE is set,
 * and keeps the lines, each with its level and subsystem flags. */
void gdx_test_logger(ncclDebugLogLevel level, unsigned long flags, const char *file, int line,
		     const char *fmt, ...);
/* All WARN lines logged since the last call to gdx_test_log_clear(). */
const char *gdx_test_warnings(void);
int gdx_test_warning_count(void);
const char *gdx_test_infos(void);
void gdx_test_log_clear(void);
/*
 * Lines of this level logged since the last gdx_test_log_clear() that NCCL
 * would print with NCCL_DEBUG_SUBSYS = mask (NCCL prints a line whose flags
 * share a bit with its mask; WARN lines carry them all), and that hold
 * needle (NULL: any). The first 2048 lines are kept, each to 1 KiB as
 * NCCL's logger cuts them.
 */
int gdx_test_log_count(ncclDebugLogLevel level, unsigned long mask, const char *needle);
/* The position (0 first) among every line logged since the last
 * gdx_test_log_clear() of the first line of this level that holds needle;
 * -1 when none does: for what must be said before something else. */
int gdx_test_log_index(ncclDebugLogLevel level, const char *needle);
/* Prints those lines to stdout, each indented, for a test's report. */
void gdx_test_log_print(ncclDebugLogLevel level, unsigned long mask);

#endif
