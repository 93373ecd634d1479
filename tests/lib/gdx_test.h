/* SPDX-License-Identifier: MIT */
/*
 * A small test runner: each test runs in its own child process with a time
 * limit, so a crash or a hang fails that test and not the suite. Prints
 * "ok NAME" or "not ok NAME: why" per test and "N passed, N failed" last.
 */
#ifndef GDX_TEST_H
#define GDX_TEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct gdx_test {
	const char *name;
	void (*fn)(void);
	int timeout_s;
	const char *by_name; /* run only when named on the command line: why */
};

/* Runs the tests named on the command line (all when none); exit 0 when all pass. */
int gdx_test_main(int argc, char **argv, const struct gdx_test *tests, int n);

void gdx_test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
/* The test cannot run here (why): it ends, counted neither passed nor
 * failed, and the run says so. Only for what the machine lacks (root for
 * a test that plays other users), never for what the code does. */
void gdx_test_skip(const char *why) __attribute__((noreturn));

#define ASSERT(cond)                                                                      \
	do {                                                                              \
		if (!(cond))                                                              \
			gdx_test_fail(__FILE__, __LINE__, "assertion failed: %s", #cond); \
	} while (0)
#define ASSERT_EQ(a, b)                                                                         \
	do {                                                                                    \
		long long _a = (long long)(a), _b = (long long)(b);                             \
		if (_a != _b)                                                                   \
			gdx_test_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld", #a, #b, _a, \
				      _b);                                                      \
	} while (0)
#define ASSERT_NE(a, b)                                                                       \
	do {                                                                                  \
		long long _a = (long long)(a), _b = (long long)(b);                           \
		if (_a == _b)                                                                 \
			gdx_test_fail(__FILE__, __LINE__, "%s != %s: both %lld", #a, #b, _a); \
	} while (0)
#define ASSERT_STR_CONTAINS(hay, needle)                                                    \
	do {                                                                                \
		const char *_h = (hay), *_n = (needle);                                     \
		if (!_h || !strstr(_h, _n))                                                 \
			gdx_test_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", \
				      _h ? _h : "(null)", _n);                              \
	} while (0)

#define GDX_TESTS_MAIN(...)                                                              \
	static const struct gdx_test gdx_tests_[] = {__VA_ARGS__};                       \
	int main(int argc, char **argv)                                                  \
	{                                                                                \
		return gdx_test_main(argc, argv, gdx_tests_,                             \
				     (int)(sizeof(gdx_tests_) / sizeof(gdx_tests_[0]))); \
	}
#define TEST(fn, timeout)        \
	{                        \
#fn, fn, timeout \
	}
/* A test that a run of all of them leaves out, saying so and why (it is
 * not counted as passed); naming it on the command line runs it. */
#define TEST_BY_NAME(fn, timeout, why) \
	{                              \
#fn, fn, timeout, why  \
	}

#endif
