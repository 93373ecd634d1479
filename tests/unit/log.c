/* SPDX-License-Identifier: MIT */
/* gdx_log_sanitize(): what a peer's strings become before a log line or a
 * live counter shows them. */
#include <stdlib.h>

#include "sys/gdx_log.h"

#include "gdx_test.h"

static const char *san(char *buf, size_t len, const char *src)
{
	return gdx_log_sanitize(buf, len, src, strlen(src) + 1);
}

static bool all_printable(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

static void test_printable_kept(void)
{
	char buf[64];

	ASSERT_EQ(strcmp(san(buf, sizeof(buf), "mlx5_0+mlx5_1"), "mlx5_0+mlx5_1"), 0);
	/* a backslash is printable and kept: an escape's output stays as it is */
	ASSERT_EQ(strcmp(san(buf, sizeof(buf), "a\\x0ab %d \"q\""), "a\\x0ab %d \"q\""), 0);
	ASSERT_EQ(strcmp(san(buf, sizeof(buf), ""), ""), 0);
}

static void test_control_bytes_escaped(void)
{
	char buf[128];

	/* a forged second log line, a terminal escape, DEL and bytes above 0x7f */
	san(buf, sizeof(buf), "rxe0\nNET/GDX plugin: WARN fake\r\x1b[31mred\x7f\x80\xff");
	ASSERT_EQ(strcmp(buf, "rxe0\\x0aNET/GDX plugin: WARN fake\\x0d\\x1b[31mred\\x7f\\x80\\xff"),
		  0);
	ASSERT(all_printable(buf));
	san(buf, sizeof(buf), "\t");
	ASSERT_EQ(strcmp(buf, "\\x09"), 0);
}

static void test_bounds(void)
{
	char buf[16];
	const char raw[4] = {'a', 'b', '\n', 'c'}; /* not terminated */

	/* never more than src_len bytes of a string without its NUL */
	ASSERT_EQ(strcmp(gdx_log_sanitize(buf, sizeof(buf), raw, 2), "ab"), 0);
	ASSERT_EQ(strcmp(gdx_log_sanitize(buf, sizeof(buf), raw, 4), "ab\\x0ac"), 0);
	/* an escape that does not fit is left out whole, never cut */
	ASSERT_EQ(strcmp(gdx_log_sanitize(buf, 6, "abc\n", 5), "abc"), 0);
	ASSERT_EQ(strcmp(gdx_log_sanitize(buf, 8, "abc\n", 5), "abc\\x0a"), 0);
	ASSERT_EQ(strcmp(gdx_log_sanitize(buf, 4, "abcdef", 7), "abc"), 0);
	ASSERT_EQ(strcmp(gdx_log_sanitize(buf, 1, "abc", 4), ""), 0);
	buf[0] = 'z';
	gdx_log_sanitize(buf, 0, "abc", 4); /* no room at all: nothing written */
	ASSERT_EQ(buf[0], 'z');
}

/* Random bytes: the result is printable, fits, and is its own sanitized form. */
static void test_random_bytes(void)
{
	char src[96], once[64], twice[64];

	srand(7);
	for (int round = 0; round < 20000; round++) {
		size_t n = (size_t)(rand() % (int)sizeof(src)), len = 1 + (size_t)(rand() % 64);

		for (size_t i = 0; i < n; i++)
			src[i] = (char)(rand() % 256);
		memset(once, 0x55, sizeof(once));
		gdx_log_sanitize(once, len, src, n);
		ASSERT(strlen(once) < len);
		ASSERT(all_printable(once));
		gdx_log_sanitize(twice, len, once, len);
		ASSERT_EQ(strcmp(once, twice), 0);
	}
}

/* gdx_log_quote(): a name another party chose, quoted so that nothing in
 * it reads as the words after it. */
static void test_quote(void)
{
	char buf[64];

	ASSERT_EQ(strcmp(gdx_log_quote(buf, sizeof(buf), "rxe0+rxe2"), "\"rxe0+rxe2\""), 0);
	ASSERT_EQ(strcmp(gdx_log_quote(buf, sizeof(buf), "x at 0: forged"), "\"x at 0: forged\""),
		  0);
	/* a quote and a backslash escaped: the closing quote is the only bare one */
	ASSERT_EQ(strcmp(gdx_log_quote(buf, sizeof(buf), "a\") b\\"), "\"a\\\") b\\\\\""), 0);
	ASSERT_EQ(strcmp(gdx_log_quote(buf, sizeof(buf), "\n\x1b\xff"), "\"\\x0a\\x1b\\xff\""), 0);
	ASSERT_EQ(strcmp(gdx_log_quote(buf, sizeof(buf), ""), "\"\""), 0);
	/* cut: an escape left out whole, the quote still closed */
	ASSERT_EQ(strcmp(gdx_log_quote(buf, 6, "ab\"c"), "\"ab\""), 0);
	ASSERT_EQ(strcmp(gdx_log_quote(buf, 7, "ab\"c"), "\"ab\\\"\""), 0);
	ASSERT_EQ(strcmp(gdx_log_quote(buf, 3, "abc"), "\"\""), 0);
	ASSERT_EQ(strcmp(gdx_log_quote(buf, 2, "abc"), ""), 0);
	/* the macro's buffer holds a whole device name, escaped */
	ASSERT_EQ(strlen(GDX_LOG_QUOTED("\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"
					"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"
					"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"
					"\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01\x01"
					"\x01\x01\x01\x01\x01\x01\x01")),
		  4 * 63 + 2);
}

GDX_TESTS_MAIN(TEST(test_printable_kept, 5), TEST(test_control_bytes_escaped, 5),
	       TEST(test_bounds, 5), TEST(test_random_bytes, 10), TEST(test_quote, 5))
