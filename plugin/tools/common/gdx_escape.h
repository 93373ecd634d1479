/* SPDX-License-Identifier: MIT */
/*
 * Strings that come from elsewhere (another process's live counter file,
 * another node's report, a job's log, a peer's handshake) made safe to print
 * where they go: a terminal, a Prometheus label value or a JSON string. What
 * is printed of them can neither act on the terminal it is read on (an ESC
 * sequence, a BEL, a carriage return, a bidirectional override) nor add lines
 * to what a script reads. Every reader escapes through here, so all agree.
 */
#ifndef GDX_ESCAPE_H
#define GDX_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Characters that do not show as themselves: the C0 controls and DEL, the
 * C1 controls, the line and paragraph separators, the bidirectional
 * controls, and those that show as nothing (the soft hyphen, the zero-width
 * ones, the word joiner, the invisible operators, the byte order mark); and
 * bytes that are not UTF-8. */
enum gdx_escape {
	/* printable ASCII and UTF-8 as they are, a backslash as \\, every byte of
	 * anything else as \xNN */
	GDX_ESCAPE_TEXT,
	/* the exposition format's \\, \" and \n; anything else that does not
	 * show as itself as U+FFFD, which the format has no escape for */
	GDX_ESCAPE_PROM_LABEL,
	/* \", \\ and the rest as \uXXXX; a byte that is not UTF-8 as \ufffd, so
	 * that the output is valid UTF-8 and JSON whatever the input (U+FFFD
	 * itself as \ufffd too: two strings escaped alike decode alike) */
	GDX_ESCAPE_JSON,
};

/* The most a byte of input becomes (JSON's \u00NN), a buffer that holds n
 * bytes of input escaped with its terminator, and one character's most. */
#define GDX_ESCAPE_MAX	   6
#define GDX_ESCAPE_LEN(n)  ((n)*GDX_ESCAPE_MAX + 1)
#define GDX_ESCAPE_ONE_MAX 17

/*
 * s escaped as how says into buf, always terminated; an escape that does not
 * fit is left out whole, never cut. Returns how many bytes of s went in:
 * strlen(s) when buf has GDX_ESCAPE_LEN(strlen(s)) bytes; a caller with a
 * smaller buffer goes on from there (at least one character goes in when len
 * >= GDX_ESCAPE_ONE_MAX).
 */
size_t gdx_escape(enum gdx_escape how, const char *s, char *buf, size_t len);

/* s escaped for text, or for the inside of a JSON string, onto f. */
void gdx_esc_text(FILE *f, const char *s);
void gdx_esc_json(FILE *f, const char *s);
/* s escaped for text into buf (always terminated; size 0 leaves it alone);
 * when it does not fit, cut after a whole character or escape, ending in
 * "...". Returns buf. */
const char *gdx_esc_text_buf(char *buf, size_t size, const char *s);

/*
 * The UTF-8 sequence at s, of at most avail bytes (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF): its length, 1 to 4, with its
 * code point in *cp; 0 when the bytes are not one.
 */
size_t gdx_utf8_next(const char *s, size_t avail, uint32_t *cp);

#endif
