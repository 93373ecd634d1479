/* SPDX-License-Identifier: MIT */
/* The registration cache with counting fake ops: hits, containment, overlap,
 * refcounts, and the lookup time at 10,000 entries. */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "dev/gdx_regcache.h"

#include "gdx_test.h"

struct fake {
	int regs, deregs, live;
	int fail;
};

static int fake_reg(void *arg, uintptr_t start, uintptr_t end, uint64_t key, const void *call,
		    void **handle_p)
{
	struct fake *f = arg;

	(void)key;
	(void)call;
	ASSERT(end > start);
	if (f->fail)
		return -ENOMEM;
	f->regs++;
	f->live++;
	*handle_p = (void *)start;
	return 0;
}

static void fake_dereg(void *arg, void *handle)
{
	struct fake *f = arg;

	(void)handle;
	f->deregs++;
	f->live--;
}

static const struct gdx_regcache_ops fake_ops = {.reg = fake_reg, .dereg = fake_dereg};

#define PAGE ((uintptr_t)sysconf(_SC_PAGESIZE))

static void test_hit_and_containment(void)
{
	struct fake f = {0};
	struct gdx_regcache *c;
	struct gdx_regcache_entry *a, *b, *d;
	struct gdx_regcache_stats s;

	ASSERT_EQ(gdx_regcache_create(&fake_ops, &f, false, &c), 0);
	ASSERT_EQ(gdx_regcache_get(c, 100 * PAGE + 10, 10 * PAGE, 0, NULL, &a), 0);
	ASSERT_EQ(f.regs, 1);
	ASSERT_EQ(a->start, 100 * PAGE);
	ASSERT_EQ(a->end, 111 * PAGE);
	/* same range, and a range inside it: hits */
	ASSERT_EQ(gdx_regcache_get(c, 100 * PAGE + 10, 10 * PAGE, 0, NULL, &b), 0);
	ASSERT_EQ(gdx_regcache_get(c, 105 * PAGE, 3, 0, NULL, &d), 0);
	ASSERT(a == b && b == d);
	ASSERT_EQ(f.regs, 1);
	ASSERT_EQ(a->refs, 3);
	gdx_regcache_stats(c, &s);
	ASSERT_EQ(s.hits, 2);
	ASSERT_EQ(s.misses, 1);
	ASSERT_EQ(s.entries, 1);
	gdx_regcache_put(c, a);
	gdx_regcache_put(c, b);
	ASSERT_EQ(f.deregs, 0);
	gdx_regcache_put(c, d);
	ASSERT_EQ(f.deregs, 1);
	gdx_regcache_stats(c, &s);
	ASSERT_EQ(s.entries, 0);
	gdx_regcache_destroy(c);
	ASSERT_EQ(f.live, 0);
}

static void test_overlap_gets_its_own(void)
{
	struct fake f = {0};
	struct gdx_regcache *c;
	struct gdx_regcache_entry *a, *b, *d;
	struct gdx_regcache_stats s;

	ASSERT_EQ(gdx_regcache_create(&fake_ops, &f, false, &c), 0);
	ASSERT_EQ(gdx_regcache_get(c, 10 * PAGE, 4 * PAGE, 0, NULL, &a), 0);
	/* straddles the end of a: registered, not cached */
	ASSERT_EQ(gdx_regcache_get(c, 12 * PAGE, 4 * PAGE, 0, NULL, &b), 0);
	ASSERT(a != b);
	ASSERT_EQ(b->cached, 0);
	ASSERT_EQ(f.regs, 2);
	/* adjacent, not overlapping: cached */
	ASSERT_EQ(gdx_regcache_get(c, 14 * PAGE, PAGE, 0, NULL, &d), 0);
	ASSERT_EQ(d->cached, 1);
	gdx_regcache_stats(c, &s);
	ASSERT_EQ(s.entries, 2);
	gdx_regcache_put(c, b);
	ASSERT_EQ(f.deregs, 1);
	gdx_regcache_put(c, a);
	gdx_regcache_put(c, d);
	ASSERT_EQ(f.live, 0);
	gdx_regcache_destroy(c);
}

static void test_errors(void)
{
	struct fake f = {.fail = 1};
	struct gdx_regcache *c;
	struct gdx_regcache_entry *a;
	struct gdx_regcache_stats s;

	ASSERT_EQ(gdx_regcache_create(&fake_ops, &f, false, &c), 0);
	ASSERT_EQ(gdx_regcache_get(c, PAGE, 0, 0, NULL, &a), -EINVAL);
	ASSERT_EQ(gdx_regcache_get(c, UINTPTR_MAX - 5, 100, 0, NULL, &a), -EINVAL);
	ASSERT_EQ(gdx_regcache_get(c, PAGE, 100, 0, NULL, &a), -ENOMEM);
	gdx_regcache_stats(c, &s);
	ASSERT_EQ(s.entries, 0);
	gdx_regcache_destroy(c);
}

static void test_destroy_releases_everything(void)
{
	struct fake f = {0};
	struct gdx_regcache *c;
	struct gdx_regcache_entry *a;

	ASSERT_EQ(gdx_regcache_create(&fake_ops, &f, false, &c), 0);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(gdx_regcache_get(c, (uintptr_t)(1000 + 3 * i) * PAGE, PAGE, 0, NULL, &a),
			  0);
	ASSERT_EQ(f.live, 100);
	gdx_regcache_destroy(c);
	ASSERT_EQ(f.live, 0);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void test_10k_entries_lookup_time(void)
{
	enum { N = 10000, LOOKUPS = 1000000 };
	static struct gdx_regcache_entry *e[N];
	struct fake f = {0};
	struct gdx_regcache *c;
	uint32_t x = 1;
	double t0, ns;

	ASSERT_EQ(gdx_regcache_create(&fake_ops, &f, false, &c), 0);
	/* inserted in a scrambled order, two pages apart */
	for (int i = 0; i < N; i++) {
		int k = (int)(((uint64_t)i * 7919) % N);

		ASSERT_EQ(gdx_regcache_get(c, (uintptr_t)(1 << 20) * PAGE + (uintptr_t)k * 2 * PAGE,
					   PAGE, 0, NULL, &e[k]),
			  0);
	}
	ASSERT_EQ(f.regs, N);
	t0 = now_ns();
	for (int i = 0; i < LOOKUPS; i++) {
		struct gdx_regcache_entry *h;
		int k;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		k = (int)(x % N);
		gdx_regcache_get(c, (uintptr_t)(1 << 20) * PAGE + (uintptr_t)k * 2 * PAGE + 64, 128,
				 0, NULL, &h);
		if (h != e[k])
			gdx_test_fail(__FILE__, __LINE__, "lookup %d found the wrong entry", k);
		gdx_regcache_put(c, h);
	}
	ns = (now_ns() - t0) / LOOKUPS;
	printf("  regcache: %.0f ns per hit (get + put) at %d entries\n", ns, N);
	ASSERT_EQ(f.regs, N);
	for (int i = 0; i < N; i++)
		gdx_regcache_put(c, e[i]);
	ASSERT_EQ(f.live, 0);
	gdx_regcache_destroy(c);
}

/*
 * DMA-BUF registrations, as NCCL makes them: the same buffer pool
 * registered once per connection, each time with a new file descriptor
 * (NCCL exports the range again and closes the fd after the call). Keyed by
 * the object's offset at address 0 and registered exactly: a range inside a
 * cached one that maps the same bytes is a hit whatever the fd; one that
 * maps other bytes of an object (another offset) is not.
 */
static void test_dmabuf_keys(void)
{
	struct fake f = {0};
	struct gdx_regcache *c;
	struct gdx_regcache_entry *pool, *again, *part, *other;
	const uintptr_t base = 0x7f0000000000ull;
	int fd1 = 41, fd2 = 57;

	ASSERT_EQ(gdx_regcache_create(&fake_ops, &f, true, &c), 0);
	/* the pool at offset 0 of its object: key = 0 - base */
	ASSERT_EQ(gdx_regcache_get(c, base, 64 * PAGE, 0 - (uint64_t)base, &fd1, &pool), 0);
	ASSERT_EQ(f.regs, 1);
	ASSERT(pool->start == base && pool->end == base + 64 * PAGE); /* not rounded */
	/* the next connection: same range, a new fd, the same bytes */
	ASSERT_EQ(gdx_regcache_get(c, base, 64 * PAGE, 0 - (uint64_t)base, &fd2, &again), 0);
	ASSERT(again == pool);
	/* a part of it, at its offset in the same object */
	ASSERT_EQ(gdx_regcache_get(c, base + 3 * PAGE + 128, 500, 0 - (uint64_t)base, &fd2, &part),
		  0);
	ASSERT(part == pool);
	ASSERT_EQ(f.regs, 1);
	/* the same addresses mapping other bytes of an object: a registration of its own */
	ASSERT_EQ(gdx_regcache_get(c, base, 64 * PAGE, 4096 - (uint64_t)base, &fd2, &other), 0);
	ASSERT(other != pool);
	ASSERT_EQ(f.regs, 2);
	gdx_regcache_put(c, other);
	gdx_regcache_put(c, part);
	gdx_regcache_put(c, again);
	ASSERT_EQ(f.live, 1);
	gdx_regcache_put(c, pool);
	ASSERT_EQ(f.live, 0);
	gdx_regcache_destroy(c);
}

GDX_TESTS_MAIN(TEST(test_hit_and_containment, 5), TEST(test_overlap_gets_its_own, 5),
	       TEST(test_errors, 5), TEST(test_destroy_releases_everything, 5),
	       TEST(test_10k_entries_lookup_time, 60), TEST(test_dmabuf_keys, 5))
