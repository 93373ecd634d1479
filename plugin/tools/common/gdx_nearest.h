/* SPDX-License-Identifier: MIT */
/*
 * Names a user may have misspelt (a command, an option, a variable): how
 * far one is from another, and the known name a mistyped one was meant to
 * be, for the tools' "did you mean" (gdx-doctor's and gdx-bench's alike).
 */
#ifndef GDX_NEAREST_H
#define GDX_NEAREST_H

#include <stddef.h>

/* The edit distance of a and b (an insertion, a deletion, a change or two
 * neighbours swapped each count 1), up to 3: more is 3. */
int gdx_distance(const char *a, size_t la, const char *b, size_t lb);
/* Of cands[] (n names), the one nearest name's first len bytes, near enough
 * to be what was meant (1 edit in a name under 5 characters, else 2); NULL
 * when none is. */
const char *gdx_nearest(const char *name, size_t len, const char *const *cands, int n);

#endif
