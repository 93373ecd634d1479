/* SPDX-License-Identifier: MIT */
/*
 * What gdx-doctor reads from another process's live counter file, escaped
 * before it is printed (gdx_escape.h).
 */
#include <gdx/gdx_escape.h>

#include "gdx_test.h"

/* ---- the one escaping helper ---- */

static void expect_escape(enum gdx_escape how, const char *in, const char *want)
{
	char out[GDX_ESCAPE_LEN(64)];

	ASSERT_EQ(gdx_escape(how, in, out, sizeof(out)), strlen(in));
	if (strcmp(out, want))
		gdx_test_fail(__FILE__, __LINE__, "escaped '%s', want '%s'", out, want);
}

static void test_escape(void)
{
	char small[10];

	expect_escape(GDX_ESCAPE_TEXT, "rxe0 10.0.0.1", "rxe0 10.0.0.1");
	expect_escape(GDX_ESCAPE_TEXT, "a\x1b[2J\x07\n\\\x7f\xc3\xa9",
		      "a\\x1b[2J\\x07\\x0a\\\\\\x7f\\xc3\\xa9");
	expect_escape(GDX_ESCAPE_PROM_LABEL, "x\"} 1\nevil 1\n#\\", "x\\\"} 1\\nevil 1\\n#\\\\");
	/* UTF-8 kept; control characters and broken UTF-8 as U+FFFD */
	expect_escape(GDX_ESCAPE_PROM_LABEL, "\xc3\xa9\x1b\xc2\x9b\xff\xc3",
		      "\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	expect_escape(
		GDX_ESCAPE_JSON, "a\"b\\c\n\x1b\xc2\x9b\xc3\xa9\xed\xa0\x80\xe2\x82",
		"a\\\"b\\\\c\\u000a\\u001b\\u009b\xc3\xa9\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd");
	/* overlong, and past U+10FFFF */
	expect_escape(GDX_ESCAPE_JSON, "\xc0\xaf\xf4\x90\x80\x80",
		      "\\ufffd\\ufffd\\ufffd\\ufffd"
		      "\\ufffd\\ufffd");
	/* too small a buffer: an escape is left out whole, and the caller is
	 * told where to go on */
	ASSERT_EQ(gdx_escape(GDX_ESCAPE_JSON,
			     "ab\x1b"
			     "cd",
			     small, 8),
		  2);
	ASSERT_EQ(strcmp(small, "ab"), 0);
	ASSERT_EQ(gdx_escape(GDX_ESCAPE_TEXT, "\x01\x02\x03", small, 10), 2);
	ASSERT_EQ(strcmp(small, "\\x01\\x02"), 0);
}

GDX_TESTS_MAIN(TEST(test_escape, 10))
