/* SPDX-License-Identifier: MIT */
/*
 * Logging through the logger NCCL hands to init(); stderr when there is none
 * (the programs and the tests). Every line starts with GDX_LOG_PREFIX.
 */
#ifndef GDX_LOG_H
#define GDX_LOG_H

#include <stddef.h>

#include <nccl/net_common.h>

/*
 * What every line of the plugin starts with. Not "NET/GDX : ": NCCL's core
 * prints "NET/<network> : ..." lines of its own about a plugin's devices
 * ("NET/GDX : GPU Direct RDMA Enabled for HCA 0 'mlx5_0'", src/graph/topo.cc),
 * so that prefix said nothing about whose line it was. NCCL prints no
 * "NET/<network> plugin:" line.
 */
#define GDX_LOG_PREFIX "NET/GDX plugin: "
/* The prefix of 0.3.2 and earlier, for what reads their logs and library
 * files (gdx-doctor log, gdx-doctor check); never written. */
#define GDX_LOG_PREFIX_OLD "NET/GDX : "

/* NULL selects the stderr fallback, which prints WARN always and INFO when
 * NCCL_DEBUG is INFO or TRACE. */
void gdx_log_set(ncclDebugLogger_t fn);

/*
 * A copy of every line the calling thread logs goes to fn as well (after
 * the escaping below), until that thread calls gdx_log_tee(NULL, NULL):
 * how the plugin's start-up keeps its own account of what it said
 * (net/gdx_start.c), whatever NCCL's logger and level do with the lines.
 * One tee at a time in the process (the start-up runs under init's lock);
 * other threads' lines are not taken.
 */
typedef void (*gdx_log_tee_fn)(void *arg, ncclDebugLogLevel level, const char *text);
void gdx_log_tee(gdx_log_tee_fn fn, void *arg);

/* Saves and restores errno, so "GDX_WARN(...); return -errno;" stays correct.
 * The line is one of printable ASCII: every other byte of it (of a value
 * from the environment, a path, a name) is written as \xNN, as
 * gdx_log_sanitize() writes it. */
void gdx_log(ncclDebugLogLevel level, unsigned long flags, const char *where, int line,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * A string the peer sent (a device name, a failover note's reason), made fit
 * for a log line or a live counter slot where it enters the plugin: at most
 * src_len bytes of src, up to its NUL, into dst; printable ASCII is kept,
 * every other byte written as \xNN, so that a peer cannot start a line, move
 * the cursor or colour a terminal. Always terminated; an escape is never cut
 * in two. The result is printable, so sanitizing it again changes nothing.
 * dst and src may not overlap. Returns dst.
 */
char *gdx_log_sanitize(char *dst, size_t dst_len, const char *src, size_t src_len);

/*
 * A name another party chose (a peer's device name), as a log line shows
 * it: between double quotes, a quote or a backslash in it as \" and \\,
 * any byte that is not printable ASCII as \xNN; so that what follows the
 * closing quote is the plugin's own words, whatever the name holds (" at
 * 0: " included: gdx-doctor log reads the cause after it). At most len - 1
 * bytes, always closed and terminated, an escape never cut. Returns buf.
 */
const char *gdx_log_quote(char *buf, size_t len, const char *name);
/* The quoted name in a buffer of the statement's own (GDX_LOG_QUOTE_MAX:
 * a 64-byte name escaped whole), for a log call's arguments. */
#define GDX_LOG_QUOTE_MAX    (4 * 64 + 3)
#define GDX_LOG_QUOTED(name) gdx_log_quote((char[GDX_LOG_QUOTE_MAX]){0}, GDX_LOG_QUOTE_MAX, (name))

#define GDX_WARN(fmt, ...) \
	gdx_log(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, GDX_LOG_PREFIX fmt, ##__VA_ARGS__)
#define GDX_INFO(flags, fmt, ...) \
	gdx_log(NCCL_LOG_INFO, (flags), __func__, __LINE__, GDX_LOG_PREFIX fmt, ##__VA_ARGS__)

#ifdef GDX_ENABLE_TRACE
#define GDX_TRACE(flags, fmt, ...) \
	gdx_log(NCCL_LOG_TRACE, (flags), __func__, __LINE__, GDX_LOG_PREFIX fmt, ##__VA_ARGS__)
#else
#define GDX_TRACE(flags, fmt, ...) \
	do {                       \
	} while (0)
#endif

#endif
