/* SPDX-License-Identifier: MIT */
/* A set of pointers with O(1) add, remove and lookup: the live comms, so that
 * a handle NCCL passes back is checked in constant time however many comms a
 * job opens. Not locked; the caller holds its own lock. */
#ifndef GDX_PTRSET_H
#define GDX_PTRSET_H

#include <stdbool.h>
#include <stddef.h>

struct gdx_ptrset {
	const void **slot; /* open addressing, linear probing; NULL = empty */
	size_t cap;	   /* a power of two, or 0 before the first add */
	size_t n;
};

/* 0, -EEXIST when p is already there, -ENOMEM. p must not be NULL. */
int gdx_ptrset_add(struct gdx_ptrset *s, const void *p);
/* 0 when p was there (and is now gone), -ENOENT otherwise. */
int gdx_ptrset_remove(struct gdx_ptrset *s, const void *p);
bool gdx_ptrset_has(const struct gdx_ptrset *s, const void *p);
/* The first entry match(entry, arg) accepts, NULL when none: walks that
 * remove as they go call it again after each removal. */
const void *gdx_ptrset_first(const struct gdx_ptrset *s, bool (*match)(const void *, void *),
			     void *arg);
void gdx_ptrset_free(struct gdx_ptrset *s);

#endif
