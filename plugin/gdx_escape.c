/* SPDX-License-Identifier: MIT */
/* Strings from another process made safe to print (gdx_escape.h). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <gdx/gdx_escape.h>

#define GDX_REPLACEMENT_UTF8 "\xef\xbf\xbd" /* U+FFFD */

/* The length of the valid UTF-8 sequence at p (1 to 4) with its code point in
 * *cp, or 0: a stray continuation byte, a sequence cut short (the terminator
 * is not a continuation byte), an overlong form, a surrogate or a code point
 * past U+10FFFF. */
static int gdx_utf8_decode(const unsigned char *p, uint32_t *cp)
{
	static const uint32_t shortest[] = {0, 0, 0x80, 0x800, 0x10000};
	int n = *p < 0x80	      ? 1
		: (*p & 0xe0) == 0xc0 ? 2
		: (*p & 0xf0) == 0xe0 ? 3
		: (*p & 0xf8) == 0xf0 ? 4
				      : 0;
	uint32_t c;

	if (!n)
		return 0;
	c = n == 1 ? *p : *p & (0x7fu >> n);
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3fu);
	}
	if (c < shortest[n] || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

static bool gdx_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

/* What the character at p becomes, into out; returns how many bytes of p it
 * takes. */
static int gdx_escape_one(enum gdx_escape how, const unsigned char *p, char out[8])
{
	uint32_t cp;
	int n;

	if (how == GDX_ESCAPE_TEXT) {
		if (*p == '\\')
			strcpy(out, "\\\\");
		else if (*p >= 0x20 && *p < 0x7f)
			snprintf(out, 8, "%c", *p);
		else
			snprintf(out, 8, "\\x%02x", *p);
		return 1;
	}
	n = gdx_utf8_decode(p, &cp);
	if (!n) {
		strcpy(out, how == GDX_ESCAPE_JSON ? "\\ufffd" : GDX_REPLACEMENT_UTF8);
		return 1;
	}
	if (cp == '"' || cp == '\\')
		snprintf(out, 8, "\\%c", (char)cp);
	else if (how == GDX_ESCAPE_PROM_LABEL && cp == '\n')
		strcpy(out, "\\n");
	else if (gdx_is_control(cp) && how == GDX_ESCAPE_JSON)
		snprintf(out, 8, "\\u%04x", (unsigned)cp);
	else if (gdx_is_control(cp))
		strcpy(out, GDX_REPLACEMENT_UTF8);
	else {
		memcpy(out, p, (size_t)n);
		out[n] = '\0';
	}
	return n;
}

size_t gdx_escape(enum gdx_escape how, const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t off = 0;

	if (!len)
		return 0;
	while (*p) {
		char one[8];
		int n = gdx_escape_one(how, p, one);
		size_t w = strlen(one);

		if (off + w >= len)
			break;
		memcpy(buf + off, one, w);
		off += w;
		p += n;
	}
	buf[off] = '\0';
	return (size_t)(p - (const unsigned char *)s);
}
