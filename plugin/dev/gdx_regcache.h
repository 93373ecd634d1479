/* SPDX-License-Identifier: MIT */
/*
 * A registration cache: ranges (page-rounded, or exact), sorted and
 * non-overlapping, refcounted, found by binary search. A request inside a
 * cached range with the same key is a hit; one that overlaps a cached range
 * without fitting inside (or with another key) gets a registration of its
 * own that is not cached (rare: NCCL registers each buffer once). The cache
 * makes no verbs call itself: reg/dereg come in as ops, so tests count them.
 *
 * The key tells registrations of one address range apart that are not
 * interchangeable: for DMA-BUF, the offset into the buffer object that
 * address 0 would have (offset - address), so that a range inside a cached
 * one hits only when it maps the same bytes of the object.
 */
#ifndef GDX_REGCACHE_H
#define GDX_REGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gdx_regcache_ops {
	/* Registers [start, end) with the key and the per-call data given to
	 * gdx_regcache_get(); returns 0 and *handle_p, or a negative errno. */
	int (*reg)(void *arg, uintptr_t start, uintptr_t end, uint64_t key, const void *call,
		   void **handle_p);
	void (*dereg)(void *arg, void *handle);
};

struct gdx_regcache_entry {
	uintptr_t start, end; /* page-rounded unless the cache is exact */
	uint64_t key;
	int refs;
	int cached; /* in the sorted array */
	void *handle;
};

struct gdx_regcache;

/* exact: ranges are registered as asked, not rounded out to pages (DMA-BUF,
 * whose offset cannot move below 0). */
int gdx_regcache_create(const struct gdx_regcache_ops *ops, void *arg, bool exact,
			struct gdx_regcache **cache_p);
/* Deregisters whatever is left. */
void gdx_regcache_destroy(struct gdx_regcache *c);
/* A registration covering [addr, addr + len) with key, len > 0; takes a
 * reference. call is handed to ops->reg on a miss. */
int gdx_regcache_get(struct gdx_regcache *c, uintptr_t addr, size_t len, uint64_t key,
		     const void *call, struct gdx_regcache_entry **entry_p);
/* Drops a reference; the last one deregisters. */
void gdx_regcache_put(struct gdx_regcache *c, struct gdx_regcache_entry *e);

/* For the tests only: no other file of the plugin uses what follows. */

struct gdx_regcache_stats {
	uint64_t hits, misses;
	int entries;
};
void gdx_regcache_stats(struct gdx_regcache *c, struct gdx_regcache_stats *s);

#endif
