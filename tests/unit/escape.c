/* SPDX-License-Identifier: MIT */
/*
 * The escaper every reader prints through (gdx_escape.h): characters that
 * show as nothing (zero-width ones, the soft hyphen, the byte order mark)
 * are escaped in every form, so that two names that look alike on a
 * terminal are told apart and none hides text inside another.
 */
#include "tools/common/gdx_escape.h"

#include "gdx_test.h"

static void expect(enum gdx_escape how, const char *in, const char *want)
{
	char out[GDX_ESCAPE_LEN(64)];

	ASSERT_EQ(gdx_escape(how, in, out, sizeof(out)), strlen(in));
	if (strcmp(out, want))
		gdx_test_fail(__FILE__, __LINE__, "'%s' escaped as '%s', want '%s'", in, out, want);
}

/* U+00AD SOFT HYPHEN, U+180E MONGOLIAN VOWEL SEPARATOR, U+200B to U+200D
 * (zero width space, non-joiner, joiner), U+2060 to U+2064 (word joiner and
 * the invisible operators) and U+FEFF (the zero width no-break space, a
 * byte order mark) as text: each byte as \xNN. */
static void test_invisible_as_text(void)
{
	expect(GDX_ESCAPE_TEXT, "mlx5\xc2\xad_0", "mlx5\\xc2\\xad_0");
	expect(GDX_ESCAPE_TEXT,
	       "a\xe1\xa0\x8e"
	       "b",
	       "a\\xe1\\xa0\\x8eb");
	expect(GDX_ESCAPE_TEXT,
	       "rxe\xe2\x80\x8b"
	       "0",
	       "rxe\\xe2\\x80\\x8b0");
	expect(GDX_ESCAPE_TEXT, "\xe2\x80\x8c\xe2\x80\x8d", "\\xe2\\x80\\x8c\\xe2\\x80\\x8d");
	expect(GDX_ESCAPE_TEXT, "\xe2\x81\xa0\xe2\x81\xa4", "\\xe2\\x81\\xa0\\xe2\\x81\\xa4");
	expect(GDX_ESCAPE_TEXT, "\xef\xbb\xbfhost", "\\xef\\xbb\\xbfhost");
	/* their neighbours show as themselves and stay */
	expect(GDX_ESCAPE_TEXT, "\xc2\xac\xe2\x80\x90\xe2\x81\xb0\xef\xbb\xbe",
	       "\xc2\xac\xe2\x80\x90\xe2\x81\xb0\xef\xbb\xbe");
}

static void test_invisible_as_json_and_label(void)
{
	expect(GDX_ESCAPE_JSON, "a\xc2\xad\xe2\x80\x8b\xef\xbb\xbf", "a\\u00ad\\u200b\\ufeff");
	/* the exposition format has no escape for them: U+FFFD, visible */
	expect(GDX_ESCAPE_PROM_LABEL,
	       "rxe\xe2\x80\x8d"
	       "0",
	       "rxe\xef\xbf\xbd"
	       "0");
}

/* In JSON, U+FFFD is spelt as a byte that is not UTF-8 is: two strings
 * escaped alike are one JSON string, so a writer that compares escaped
 * names never puts one name twice in an object. */
static void test_json_one_spelling_per_character(void)
{
	expect(GDX_ESCAPE_JSON, "a\xef\xbf\xbd", "a\\ufffd");
	expect(GDX_ESCAPE_JSON, "a\xff", "a\\ufffd");
	/* text keeps it as it is, and tells the byte apart */
	expect(GDX_ESCAPE_TEXT, "a\xef\xbf\xbd", "a\xef\xbf\xbd");
	expect(GDX_ESCAPE_TEXT, "a\xff", "a\\xff");
}

/* Two NIC names a terminal shows alike print differently. */
static void test_lookalikes_differ(void)
{
	char a[GDX_ESCAPE_LEN(16)], b[GDX_ESCAPE_LEN(16)];

	gdx_esc_text_buf(a, sizeof(a), "mlx5_0");
	gdx_esc_text_buf(b, sizeof(b), "mlx5\xe2\x80\x8b_0");
	ASSERT(strcmp(a, b) != 0);
	ASSERT(strstr(b, "\\x") != NULL);
}

GDX_TESTS_MAIN(TEST(test_invisible_as_text, 5), TEST(test_invisible_as_json_and_label, 5),
	       TEST(test_lookalikes_differ, 5), TEST(test_json_one_spelling_per_character, 5))
