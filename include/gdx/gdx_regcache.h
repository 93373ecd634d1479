/* SPDX-License-Identifier: MIT */
/*
 * A registration cache: page-rounded ranges, sorted and non-overlapping,
 * refcounted, found by binary search. A request inside a cached range is a
 * hit; one that overlaps a cached range without fitting inside gets a
 * registration of its own that is not cached (rare: NCCL registers each
 * buffer once). The cache makes no verbs call itself: reg/dereg come in as
 * ops, so tests count them.
 */
#ifndef GDX_REGCACHE_H
#define GDX_REGCACHE_H

#include <stddef.h>
#include <stdint.h>

struct gdx_regcache_ops {
	/* Registers [start, end); returns 0 and *handle_p, or a negative errno. */
	int (*reg)(void *arg, uintptr_t start, uintptr_t end, void **handle_p);
	void (*dereg)(void *arg, void *handle);
};

struct gdx_regcache_entry {
	uintptr_t start, end; /* page-rounded */
	int refs;
	int cached; /* in the sorted array */
	void *handle;
};

struct gdx_regcache;

int gdx_regcache_create(const struct gdx_regcache_ops *ops, void *arg,
			struct gdx_regcache **cache_p);
/* Deregisters whatever is left. */
void gdx_regcache_destroy(struct gdx_regcache *c);
/* A registration covering [addr, addr + len), len > 0; takes a reference. */
int gdx_regcache_get(struct gdx_regcache *c, uintptr_t addr, size_t len,
		     struct gdx_regcache_entry **entry_p);
/* Drops a reference; the last one deregisters. */
void gdx_regcache_put(struct gdx_regcache *c, struct gdx_regcache_entry *e);

struct gdx_regcache_stats {
	uint64_t hits, misses;
	int entries;
};
void gdx_regcache_stats(struct gdx_regcache *c, struct gdx_regcache_stats *s);

#endif
