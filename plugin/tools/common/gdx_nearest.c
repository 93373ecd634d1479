/* SPDX-License-Identifier: MIT */
/* Misspelt names (gdx_nearest.h): an edit distance, and the known name
 * nearest a mistyped one. */
#include <stddef.h>
#include <string.h>

#include "tools/common/gdx_nearest.h"

/* The edit distance of a and b (optimal string alignment: an insertion, a
 * deletion, a change or two neighbours swapped each count 1), up to 3:
 * more is reported as 3. */
int gdx_distance(const char *a, size_t la, const char *b, size_t lb)
{
	int d[64][64];

	if (la >= 64 || lb >= 64)
		return 3;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb] < 3 ? d[la][lb] : 3;
}

/* The name of cands[] (n of them) nearest name, its first len bytes, close
 * enough to be a misspelling of it: 1 edit in a short name, 2 in one of 5
 * or more characters; NULL when none is. */
const char *gdx_nearest(const char *name, size_t len, const char *const *cands, int n)
{
	const char *best = NULL;
	int best_d = 3;

	for (int i = 0; i < n; i++) {
		size_t cl = strlen(cands[i]);
		int d = gdx_distance(name, len, cands[i], cl);

		if (d <= (cl >= 5 ? 2 : 1) && d < best_d) {
			best = cands[i];
			best_d = d;
		}
	}
	return best;
}
