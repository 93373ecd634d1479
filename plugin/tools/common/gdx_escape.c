/* SPDX-License-Identifier: MIT */
/* Strings from another process, another node or a peer made safe to print
 * (gdx_escape.h): one walk by UTF-8 character, and one verdict per
 * character, shared by every form. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tools/common/gdx_escape.h"

#define GDX_REPLACEMENT_UTF8 "\xef\xbf\xbd" /* U+FFFD */

size_t gdx_utf8_next(const char *s, size_t avail, uint32_t *cp)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t c, min;
	size_t n;

	if (!avail)
		return 0;
	c = u[0];
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		c &= 0x1f;
		min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		c &= 0x0f;
		min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		c &= 0x07;
		min = 0x10000;
	} else {
		return 0; /* a continuation byte, or the lead of an overlong or too large form */
	}
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (u[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Code points that show as themselves: not a control, and nothing that
 * moves or reorders what is around it. */
static bool gdx_shows_as_itself(uint32_t cp)
{
	if (cp < 0x20 || cp == 0x7f)
		return false;
	if (cp >= 0x80 && cp <= 0x9f) /* C1: CSI (0x9b) acts on some terminals */
		return false;
	if (cp == 0x061c || cp == 0x200e || cp == 0x200f) /* the directional marks */
		return false;
	if (cp >= 0x2028 && cp <= 0x202e) /* separators, embeddings, overrides */
		return false;
	if (cp >= 0x2066 && cp <= 0x2069) /* isolates */
		return false;
	/* characters that show as nothing: the soft hyphen, the Mongolian vowel
	 * separator, the zero-width space, non-joiner and joiner, the word joiner
	 * and the invisible operators, and the zero-width no-break space (a byte
	 * order mark): text hidden in a name, or two names that look alike */
	if (cp == 0x00ad || cp == 0x180e || (cp >= 0x200b && cp <= 0x200d) ||
	    (cp >= 0x2060 && cp <= 0x2064) || cp == 0xfeff)
		return false;
	return true;
}

/* The character (or the one byte that is not UTF-8) at s escaped as how
 * says, into out (at least 17 bytes: four \xNN); returns how many bytes of
 * s it takes, 0 at the end. */
static size_t gdx_escape_one(enum gdx_escape how, const char *s, size_t avail, char *out)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t cp = 0;
	size_t n = gdx_utf8_next(s, avail, &cp), take = n ? n : 1;

	out[0] = '\0';
	if (!avail)
		return 0;
	/* In JSON, U+FFFD is spelt \ufffd like a byte that is not UTF-8: every
	 * character has one spelling, so two strings escaped alike are the same
	 * JSON string (an object's member name once) and others are not. */
	if (n && gdx_shows_as_itself(cp) && cp != '\\' && (cp != '"' || how == GDX_ESCAPE_TEXT) &&
	    (cp != 0xfffd || how != GDX_ESCAPE_JSON)) {
		memcpy(out, s, n);
		out[n] = '\0';
		return n;
	}
	if (n && (cp == '\\' || cp == '"')) {
		snprintf(out, 3, "\\%c", (char)cp);
		return 1;
	}
	switch (how) {
	case GDX_ESCAPE_TEXT:
		/* each byte of a control character, or the byte that is not UTF-8 */
		for (size_t k = 0; k < take; k++) {
			unsigned char b = (unsigned char)s[k];

			memcpy(out + 4 * k, (char[4]){'\\', 'x', hex[b >> 4], hex[b & 15]}, 4);
		}
		out[4 * take] = '\0';
		break;
	case GDX_ESCAPE_PROM_LABEL:
		/* the format escapes a newline and nothing else it could meet */
		strcpy(out, n && cp == '\n' ? "\\n" : GDX_REPLACEMENT_UTF8);
		break;
	case GDX_ESCAPE_JSON:
		if (n) /* every one of them is in the BMP */
			snprintf(out, 7, "\\u%04x", (unsigned)cp);
		else
			strcpy(out, "\\ufffd");
		break;
	}
	return take;
}

size_t gdx_escape(enum gdx_escape how, const char *s, char *buf, size_t len)
{
	size_t in = 0, off = 0, avail = strlen(s);

	if (!len)
		return 0;
	while (in < avail) {
		char one[GDX_ESCAPE_ONE_MAX];
		size_t n = gdx_escape_one(how, s + in, avail - in, one), w = strlen(one);

		if (off + w >= len)
			break; /* left out whole: the caller goes on from here */
		memcpy(buf + off, one, w);
		off += w;
		in += n;
	}
	buf[off] = '\0';
	return in;
}

static void gdx_escape_to(FILE *f, enum gdx_escape how, const char *s)
{
	char buf[256];

	while (*s) {
		s += gdx_escape(how, s, buf, sizeof(buf));
		fputs(buf, f);
	}
}

void gdx_esc_text(FILE *f, const char *s)
{
	gdx_escape_to(f, GDX_ESCAPE_TEXT, s);
}

void gdx_esc_json(FILE *f, const char *s)
{
	gdx_escape_to(f, GDX_ESCAPE_JSON, s);
}

const char *gdx_esc_text_buf(char *buf, size_t size, const char *s)
{
	size_t in;

	if (!size)
		return buf;
	in = gdx_escape(GDX_ESCAPE_TEXT, s, buf, size);
	if (s[in] && size > 4) {
		/* cut: room for "...", after a whole character or escape */
		gdx_escape(GDX_ESCAPE_TEXT, s, buf, size - 3);
		strcat(buf, "...");
	}
	return buf;
}
