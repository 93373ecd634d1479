/* SPDX-License-Identifier: MIT */
/*
 * Strings that come from another process (a live counter file, gdx_live.h)
 * made safe to print where they go: a terminal, a Prometheus label value or a
 * JSON string. Every reader escapes through here, so all of them agree.
 */
#ifndef GDX_ESCAPE_H
#define GDX_ESCAPE_H

#include <stddef.h>

enum gdx_escape {
	/* printable ASCII as it is, a backslash as \\, every other byte as
	 * \xNN: nothing reaches the terminal that it could act on */
	GDX_ESCAPE_TEXT,
	/* the exposition format's \\, \" and \n; UTF-8 as it is; any other
	 * control character and invalid UTF-8 as U+FFFD, which the format has
	 * no escape for */
	GDX_ESCAPE_PROM_LABEL,
	/* \", \\ and control characters (C0, DEL, C1) as \u00NN; UTF-8 as it
	 * is; invalid UTF-8 as \ufffd, so that the output stays valid JSON */
	GDX_ESCAPE_JSON,
};

/* The most a byte of input becomes (JSON's \u00NN), and a buffer that holds
 * n bytes of input escaped with its terminator. */
#define GDX_ESCAPE_MAX	  6
#define GDX_ESCAPE_LEN(n) ((n)*GDX_ESCAPE_MAX + 1)

/*
 * s escaped as how says into buf, always terminated; an escape that does not
 * fit is left out whole, never cut. Returns how many bytes of s went in:
 * strlen(s) when buf has GDX_ESCAPE_LEN(strlen(s)) bytes; a caller with a
 * smaller buffer goes on from there (at least one byte goes in when len >=
 * GDX_ESCAPE_LEN(1)).
 */
size_t gdx_escape(enum gdx_escape how, const char *s, char *buf, size_t len);

#endif
