/* SPDX-License-Identifier: MIT */
/*
 * Printing strings that came from elsewhere: other nodes' reports, a job's
 * log, file names in a shared directory. What gdx-doctor prints of them can
 * neither act on the terminal it is read on (an ESC sequence, a BEL, a
 * carriage return) nor add lines to what a script reads (a newline that
 * starts a forged line), whoever wrote them.
 */
#ifndef GDX_DOCTOR_ESCAPE_H
#define GDX_DOCTOR_ESCAPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The UTF-8 sequence at s, of at most avail bytes (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF): its length, 1 to 4, with its
 * code point in *cp; 0 when the bytes are not one.
 */
size_t gdx_utf8_next(const char *s, size_t avail, uint32_t *cp);

/*
 * s for text output: printable ASCII and printable UTF-8 as they are, a
 * backslash doubled, every other byte as \xNN: the C0 controls and DEL, the
 * C1 controls (U+0080-U+009F), the line and paragraph separators and the
 * bidirectional controls (which reorder what a terminal shows), and each
 * byte that is not valid UTF-8.
 */
void gdx_esc_text(FILE *f, const char *s);

/* The same into buf (always terminated; size 0 leaves it alone). When it
 * does not fit, it is cut after a whole character or escape and ends in
 * "...". Returns buf. */
const char *gdx_esc_text_buf(char *buf, size_t size, const char *s);

/*
 * s as the inside of a JSON string (RFC 8259), without the quotes: '"' and
 * '\' escaped, the C0 controls, DEL, the C1 controls, the separators and
 * the bidirectional controls as \uXXXX, and each byte that is not valid
 * UTF-8 as \ufffd (JSON has no way to carry it), so that the output is
 * valid UTF-8 whatever s is.
 */
void gdx_esc_json(FILE *f, const char *s);

#endif
