/* SPDX-License-Identifier: MIT */
#ifndef GDX_TESTS_FUZZ_CHECK_H
#define GDX_TESTS_FUZZ_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* Stops with a message libFuzzer keeps next to the crashing input. */
#define FUZZ_CHECK(cond)                                                                         \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			abort();                                                                 \
		}                                                                                \
	} while (0)

/* The common part of the fuzzers' loggers: formats the line into msg (so
 * that every logged value goes through vsnprintf) and prints it when the
 * environment variable env is set. */
__attribute__((format(printf, 7, 0))) static inline void
fuzz_log_format(char *msg, size_t len, const char *env, bool warn, const char *file, int line,
		const char *fmt, va_list ap)
{
	vsnprintf(msg, len, fmt, ap);
	if (getenv(env))
		fprintf(stderr, "[%s %s:%d] %s\n", warn ? "WARN" : "INFO", file, line, msg);
}

#endif
