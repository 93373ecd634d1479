/* SPDX-License-Identifier: MIT */
/*
 * Escaping for what gdx-doctor prints of strings it did not write (see
 * gdx_doctor_escape.h): one walk over the string by UTF-8 character, and a
 * verdict per character, shared by the text and the JSON forms.
 */
#include <stdbool.h>
#include <string.h>

#include "gdx_doctor_escape.h"

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
		return 0; /* a continuation byte, or a lead byte of an overlong or too large form */
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
static bool esc_shows_as_itself(uint32_t cp)
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
	return true;
}

/* Where escaped text goes: a stream, or a buffer that may fill up. */
struct esc_out {
	FILE *f;
	char *buf;
	size_t size, len;
	bool full;
};

static void esc_put(struct esc_out *o, const char *s, size_t n)
{
	if (o->f) {
		fwrite(s, 1, n, o->f);
		return;
	}
	if (o->full || o->len + n >= o->size) {
		o->full = true;
		return;
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

static void esc_text(struct esc_out *o, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	size_t len = strlen(s);

	for (size_t i = 0; i < len && !o->full;) {
		uint32_t cp;
		size_t n = gdx_utf8_next(s + i, len - i, &cp);

		if (n && esc_shows_as_itself(cp)) {
			esc_put(o, cp == '\\' ? "\\\\" : s + i, cp == '\\' ? 2 : n);
			i += n;
			continue;
		}
		/* Each byte of a control character, or the one byte that is not UTF-8. */
		for (size_t k = 0; k < (n ? n : 1); k++) {
			unsigned char b = (unsigned char)s[i + k];
			char e[4] = {'\\', 'x', hex[b >> 4], hex[b & 15]};

			esc_put(o, e, sizeof(e));
		}
		i += n ? n : 1;
	}
}

void gdx_esc_text(FILE *f, const char *s)
{
	struct esc_out o = {.f = f};

	esc_text(&o, s);
}

const char *gdx_esc_text_buf(char *buf, size_t size, const char *s)
{
	struct esc_out o = {.buf = buf, .size = size};

	if (!size)
		return buf;
	esc_text(&o, s);
	if (o.full && size > 4) {
		/* Room for "...": give back whole pieces, never half an escape or
		 * half a character. */
		o.size -= 3;
		o.full = false;
		o.len = 0;
		esc_text(&o, s);
		memcpy(buf + o.len, "...", 3);
		o.len += 3;
	}
	buf[o.len] = '\0';
	return buf;
}

void gdx_esc_json(FILE *f, const char *s)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = gdx_utf8_next(s + i, len - i, &cp);

		if (!n) {
			fputs("\\ufffd", f);
			i++;
		} else if (cp == '"' || cp == '\\') {
			fprintf(f, "\\%c", (char)cp);
			i++;
		} else if (!esc_shows_as_itself(cp)) {
			fprintf(f, "\\u%04x", (unsigned)cp); /* all of them are in the BMP */
			i += n;
		} else {
			fwrite(s + i, 1, n, f);
			i += n;
		}
	}
}
