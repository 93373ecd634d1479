/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dev/gdx_regcache.h"

struct gdx_regcache {
	pthread_mutex_t lock; /* NCCL registers from several service threads */
	const struct gdx_regcache_ops *ops;
	void *arg;
	uintptr_t page;
	struct gdx_regcache_entry **v; /* sorted by start, non-overlapping */
	int n, cap;
	uint64_t hits, misses;
};

int gdx_regcache_create(const struct gdx_regcache_ops *ops, void *arg, bool exact,
			struct gdx_regcache **cache_p)
{
	struct gdx_regcache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	pthread_mutex_init(&c->lock, NULL);
	c->ops = ops;
	c->arg = arg;
	c->page = exact ? 1 : (uintptr_t)sysconf(_SC_PAGESIZE);
	*cache_p = c;
	return 0;
}

void gdx_regcache_destroy(struct gdx_regcache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++) {
		c->ops->dereg(c->arg, c->v[i]->handle);
		free(c->v[i]);
	}
	free(c->v);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* Index of the first entry whose start is > start (0..n). */
static int gdx_regcache_upper(const struct gdx_regcache *c, uintptr_t start)
{
	int lo = 0, hi = c->n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (c->v[mid]->start <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int gdx_regcache_insert(struct gdx_regcache *c, int at, struct gdx_regcache_entry *e)
{
	if (c->n == c->cap) {
		int cap = c->cap ? 2 * c->cap : 64;
		struct gdx_regcache_entry **v = realloc(c->v, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		c->v = v;
		c->cap = cap;
	}
	memmove(&c->v[at + 1], &c->v[at], (size_t)(c->n - at) * sizeof(*c->v));
	c->v[at] = e;
	c->n++;
	e->cached = 1;
	return 0;
}

int gdx_regcache_get(struct gdx_regcache *c, uintptr_t addr, size_t len, uint64_t key,
		     const void *call, struct gdx_regcache_entry **entry_p)
{
	uintptr_t start = addr & ~(c->page - 1);
	uintptr_t end = (addr + len + c->page - 1) & ~(c->page - 1);
	struct gdx_regcache_entry *e;
	bool overlaps;
	int at, ret;

	if (len == 0 || addr + len < addr)
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	at = gdx_regcache_upper(c, start);
	if (at > 0 && c->v[at - 1]->end >= end && c->v[at - 1]->key == key) {
		e = c->v[at - 1];
		e->refs++;
		c->hits++;
		pthread_mutex_unlock(&c->lock);
		*entry_p = e;
		return 0;
	}
	c->misses++;
	overlaps = (at > 0 && c->v[at - 1]->end > start) || (at < c->n && c->v[at]->start < end);
	e = calloc(1, sizeof(*e));
	if (!e) {
		pthread_mutex_unlock(&c->lock);
		return -ENOMEM;
	}
	e->start = start;
	e->end = end;
	e->key = key;
	e->refs = 1;
	ret = c->ops->reg(c->arg, start, end, key, call, &e->handle);
	if (!ret && !overlaps && gdx_regcache_insert(c, at, e)) {
		c->ops->dereg(c->arg, e->handle);
		ret = -ENOMEM;
	}
	pthread_mutex_unlock(&c->lock);
	if (ret) {
		free(e);
		return ret;
	}
	*entry_p = e;
	return 0;
}

void gdx_regcache_put(struct gdx_regcache *c, struct gdx_regcache_entry *e)
{
	pthread_mutex_lock(&c->lock);
	if (--e->refs > 0) {
		pthread_mutex_unlock(&c->lock);
		return;
	}
	if (e->cached) {
		int at = gdx_regcache_upper(c, e->start) - 1;

		memmove(&c->v[at], &c->v[at + 1], (size_t)(c->n - at - 1) * sizeof(*c->v));
		c->n--;
	}
	pthread_mutex_unlock(&c->lock);
	c->ops->dereg(c->arg, e->handle);
	free(e);
}

void gdx_regcache_stats(struct gdx_regcache *c, struct gdx_regcache_stats *s)
{
	pthread_mutex_lock(&c->lock);
	s->hits = c->hits;
	s->misses = c->misses;
	s->entries = c->n;
	pthread_mutex_unlock(&c->lock);
}
