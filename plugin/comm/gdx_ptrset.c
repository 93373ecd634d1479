/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "comm/gdx_ptrset.h"

/* Fibonacci hashing of the address: the low bits of heap pointers are zero
 * and their high bits alike, the multiply spreads the middle ones. */
static size_t gdx_ptrset_home(const struct gdx_ptrset *s, const void *p)
{
	return (size_t)(((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15ull) >> 32) & (s->cap - 1);
}

static int gdx_ptrset_grow(struct gdx_ptrset *s)
{
	size_t cap = s->cap ? 2 * s->cap : 64;
	struct gdx_ptrset n = {.slot = calloc(cap, sizeof(*n.slot)), .cap = cap};

	if (!n.slot)
		return -ENOMEM;
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i])
			gdx_ptrset_add(&n, s->slot[i]);
	free(s->slot);
	*s = n;
	return 0;
}

int gdx_ptrset_add(struct gdx_ptrset *s, const void *p)
{
	size_t i;

	/* Keep at most half full, so that probes stay short. */
	if (2 * (s->n + 1) > s->cap) {
		int ret = gdx_ptrset_grow(s);

		if (ret)
			return ret;
	}
	for (i = gdx_ptrset_home(s, p); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == p)
			return -EEXIST;
	s->slot[i] = p;
	s->n++;
	return 0;
}

static size_t gdx_ptrset_find(const struct gdx_ptrset *s, const void *p)
{
	if (!s->cap || !p)
		return SIZE_MAX;
	for (size_t i = gdx_ptrset_home(s, p); s->slot[i]; i = (i + 1) & (s->cap - 1))
		if (s->slot[i] == p)
			return i;
	return SIZE_MAX;
}

bool gdx_ptrset_has(const struct gdx_ptrset *s, const void *p)
{
	return gdx_ptrset_find(s, p) != SIZE_MAX;
}

int gdx_ptrset_remove(struct gdx_ptrset *s, const void *p)
{
	const size_t mask = s->cap - 1;
	size_t hole = gdx_ptrset_find(s, p);

	if (hole == SIZE_MAX)
		return -ENOENT;
	/* Backward-shift deletion: move up every later entry of the run whose
	 * home is at or before the hole, so that no lookup meets a gap early
	 * and no tombstones pile up over a long job. */
	for (size_t j = (hole + 1) & mask; s->slot[j]; j = (j + 1) & mask) {
		size_t home = gdx_ptrset_home(s, s->slot[j]);

		if (((j - home) & mask) >= ((j - hole) & mask)) {
			s->slot[hole] = s->slot[j];
			hole = j;
		}
	}
	s->slot[hole] = NULL;
	s->n--;
	return 0;
}

const void *gdx_ptrset_first(const struct gdx_ptrset *s, bool (*match)(const void *, void *),
			     void *arg)
{
	for (size_t i = 0; i < s->cap; i++)
		if (s->slot[i] && match(s->slot[i], arg))
			return s->slot[i];
	return NULL;
}

void gdx_ptrset_free(struct gdx_ptrset *s)
{
	free(s->slot);
	*s = (struct gdx_ptrset){0};
}
