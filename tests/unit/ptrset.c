/* SPDX-License-Identifier: MIT */
/* The live-comm set: adds, removes in random order against a reference, and
 * probe runs that stay short at 100,000 heap pointers. */
#include <errno.h>
#include <stdlib.h>

#include "comm/gdx_ptrset.h"

#include "gdx_test.h"

static void test_add_remove(void)
{
	struct gdx_ptrset s = {0};
	int a = 0, b = 0;

	ASSERT(!gdx_ptrset_has(&s, &a));
	ASSERT_EQ(gdx_ptrset_remove(&s, &a), -ENOENT);
	ASSERT_EQ(gdx_ptrset_add(&s, &a), 0);
	ASSERT_EQ(gdx_ptrset_add(&s, &a), -EEXIST);
	ASSERT(gdx_ptrset_has(&s, &a));
	ASSERT(!gdx_ptrset_has(&s, &b));
	ASSERT(!gdx_ptrset_has(&s, NULL));
	ASSERT_EQ(gdx_ptrset_remove(&s, &a), 0);
	ASSERT_EQ(gdx_ptrset_remove(&s, &a), -ENOENT);
	ASSERT_EQ(s.n, 0);
	gdx_ptrset_free(&s);
}

/* Random adds and removes of pointers that share high bits, as heap
 * allocations do, checked after every step against a flag per pointer:
 * backward-shift deletion must never lose an entry behind the hole. */
static void test_against_reference(void)
{
	enum { N = 4096, STEPS = 200000 };
	static char pool[N * 64];
	static bool in[N];
	struct gdx_ptrset s = {0};
	size_t count = 0;

	srand(7);
	for (int step = 0; step < STEPS; step++) {
		int k = rand() % N;
		const void *p = &pool[k * 64];

		if (in[k]) {
			ASSERT_EQ(gdx_ptrset_remove(&s, p), 0);
			count--;
		} else {
			ASSERT_EQ(gdx_ptrset_add(&s, p), 0);
			count++;
		}
		in[k] = !in[k];
		ASSERT_EQ(s.n, count);
		if (step % 1000 == 0)
			for (int i = 0; i < N; i++)
				ASSERT_EQ(gdx_ptrset_has(&s, &pool[i * 64]), in[i]);
	}
	for (int i = 0; i < N; i++)
		ASSERT_EQ(gdx_ptrset_has(&s, &pool[i * 64]), in[i]);
	gdx_ptrset_free(&s);
}

static bool is_odd_slot(const void *p, void *base)
{
	return (((const char *)p - (const char *)base) / 64) % 2 == 1;
}

static void test_first_match_drains(void)
{
	static char pool[1000 * 64];
	struct gdx_ptrset s = {0};
	const void *p;
	int removed = 0;

	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(gdx_ptrset_add(&s, &pool[i * 64]), 0);
	while ((p = gdx_ptrset_first(&s, is_odd_slot, pool))) {
		ASSERT_EQ(gdx_ptrset_remove(&s, p), 0);
		removed++;
	}
	ASSERT_EQ(removed, 500);
	ASSERT_EQ(s.n, 500);
	for (int i = 0; i < 1000; i++)
		ASSERT_EQ(gdx_ptrset_has(&s, &pool[i * 64]), i % 2 == 0);
	gdx_ptrset_free(&s);
}

/* The longest run of occupied slots in the table: no lookup probes more.
 * Heap pointers of one size class differ only in a few middle bits; a hash
 * that kept them clustered would make the runs, and every isend, irecv and
 * test NCCL makes, grow with the number of comms. */
static size_t longest_run(const struct gdx_ptrset *s)
{
	size_t best = 0, run = 0;

	/* twice round, for a run that wraps past the end */
	for (size_t i = 0; i < 2 * s->cap; i++) {
		run = s->slot[i & (s->cap - 1)] ? run + 1 : 0;
		if (run > best)
			best = run;
	}
	return best;
}

static void test_probes_short(void)
{
	enum { N = 100000 };
	struct gdx_ptrset s = {0};
	void **p = calloc(N, sizeof(*p));

	ASSERT(p);
	for (int i = 0; i < N; i++) {
		p[i] = malloc(1500); /* a comm's size class */
		ASSERT(p[i]);
		ASSERT_EQ(gdx_ptrset_add(&s, p[i]), 0);
	}
	printf("# %d heap pointers in %zu slots: longest probe %zu\n", N, s.cap, longest_run(&s));
	ASSERT(s.cap >= 2 * (size_t)N);
	ASSERT(longest_run(&s) < 64);
	/* half removed, in allocation order: the runs stay short, no tombstones */
	for (int i = 0; i < N; i += 2)
		ASSERT_EQ(gdx_ptrset_remove(&s, p[i]), 0);
	ASSERT(longest_run(&s) < 64);
	for (int i = 0; i < N; i++) {
		ASSERT_EQ(gdx_ptrset_has(&s, p[i]), i % 2 == 1);
		free(p[i]);
	}
	free(p);
	gdx_ptrset_free(&s);
}

GDX_TESTS_MAIN(TEST(test_add_remove, 5), TEST(test_against_reference, 20),
	       TEST(test_first_match_drains, 5), TEST(test_probes_short, 30))
