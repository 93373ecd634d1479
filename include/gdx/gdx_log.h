/* SPDX-License-Identifier: MIT */
/*
 * Logging through the logger NCCL hands to init(); stderr when there is none
 * (the programs and the tests). Every line starts with "NET/GDX : ".
 */
#ifndef GDX_LOG_H
#define GDX_LOG_H

#include <nccl/net_common.h>

/* NULL selects the stderr fallback, which prints WARN always and INFO when
 * NCCL_DEBUG is INFO or TRACE. */
void gdx_log_set(ncclDebugLogger_t fn);

/* Saves and restores errno, so "GDX_WARN(...); return -errno;" stays correct. */
void gdx_log(ncclDebugLogLevel level, unsigned long flags, const char *where, int line,
	     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define GDX_WARN(fmt, ...) \
	gdx_log(NCCL_LOG_WARN, NCCL_ALL, __FILE__, __LINE__, "NET/GDX : " fmt, ##__VA_ARGS__)
#define GDX_INFO(flags, fmt, ...) \
	gdx_log(NCCL_LOG_INFO, (flags), __func__, __LINE__, "NET/GDX : " fmt, ##__VA_ARGS__)

#ifdef GDX_ENABLE_TRACE
#define GDX_TRACE(flags, fmt, ...) \
	gdx_log(NCCL_LOG_TRACE, (flags), __func__, __LINE__, "NET/GDX : " fmt, ##__VA_ARGS__)
#else
#define GDX_TRACE(flags, fmt, ...) \
	do {                       \
	} while (0)
#endif

#endif
