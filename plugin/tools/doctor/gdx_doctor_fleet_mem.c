/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor fleet's memory: everything that grows with the reports counted
 * in one budget (gdx_doctor_fleet.c says why), the strings fleet makes kept
 * in chunks to the end, the hash maps names are found by, and the errors of
 * all of it said.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/common/gdx_escape.h"

#include "tools/doctor/gdx_doctor_fleet_records.h"

/* Strings fleet builds are kept in chunks of this size. */
#define FLEET_CHUNK (64 << 10)

/* -E2BIG when bytes more would take the budget past its limit. */
int fleet_charge(struct fleet *fl, size_t bytes)
{
	struct json_budget *b = &fl->budget;

	if (b->used > b->limit || bytes > b->limit - b->used)
		return -E2BIG;
	b->used += bytes;
	return 0;
}

void fleet_uncharge(struct fleet *fl, size_t bytes)
{
	fl->budget.used -= bytes < fl->budget.used ? bytes : fl->budget.used;
}

/* Room for one more element of size size in *arr (n used of *cap):
 * 0, -E2BIG or -ENOMEM. */
int fleet_grow(struct fleet *fl, void *arr, int *cap, int n, size_t size)
{
	void **a = arr, *p;
	int ncap;

	if (n < *cap)
		return 0;
	if (*cap > INT_MAX / 2)
		return -E2BIG;
	ncap = *cap ? 2 * *cap : 16;
	if (fleet_charge(fl, (size_t)(ncap - *cap) * size + (*cap ? 0 : FLEET_ALLOC_OVERHEAD)))
		return -E2BIG;
	p = realloc(*a, (size_t)ncap * size);
	if (!p)
		return -ENOMEM;
	*a = p;
	*cap = ncap;
	return 0;
}

/* A copy of s kept to the end, in *out. */
int fleet_keep(struct fleet *fl, const char *s, const char **out)
{
	size_t n = strlen(s) + 1;
	struct fleet_chunk *c = fl->strings;

	if (!c || c->cap - c->len < n) {
		size_t cap = n > FLEET_CHUNK / 4 ? n : FLEET_CHUNK;

		if (fleet_charge(fl, sizeof(*c) + cap + FLEET_ALLOC_OVERHEAD))
			return -E2BIG;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return -ENOMEM;
		c->len = 0;
		c->cap = cap;
		/* A large string's own chunk goes behind the one still filling. */
		if (cap > FLEET_CHUNK && fl->strings) {
			c->next = fl->strings->next;
			fl->strings->next = c;
		} else {
			c->next = fl->strings;
			fl->strings = c;
		}
	}
	memcpy(c->data + c->len, s, n);
	*out = c->data + c->len;
	c->len += n;
	return 0;
}

uint32_t fleet_hash(const char *s)
{
	return (uint32_t)json_hash(s, strlen(s));
}

/* The id in m with hash h for which same(ctx, id) holds; -1 when none. */
int fleet_map_find(const struct fleet_map *m, uint32_t h,
		   bool (*same)(const void *ctx, uint32_t id), const void *ctx)
{
	uint32_t mask = m->cap - 1;

	if (!m->cap)
		return -1;
	for (uint32_t i = h & mask; m->slots[i].id; i = (i + 1) & mask)
		if (m->slots[i].hash == h && same(ctx, m->slots[i].id - 1))
			return (int)(m->slots[i].id - 1);
	return -1;
}

int fleet_map_add(struct fleet *fl, struct fleet_map *m, uint32_t h, uint32_t id)
{
	uint32_t mask, i;

	if (2 * ((size_t)m->n + 1) > m->cap) {
		uint32_t ncap = m->cap ? 2 * m->cap : 64;
		struct fleet_slot *s;

		if (m->cap > UINT32_MAX / 4 ||
		    fleet_charge(fl, (size_t)ncap * sizeof(*s) + FLEET_ALLOC_OVERHEAD))
			return -E2BIG;
		s = calloc(ncap, sizeof(*s));
		if (!s)
			return -ENOMEM;
		for (i = 0; i < m->cap; i++) {
			uint32_t j = m->slots[i].hash & (ncap - 1);

			if (!m->slots[i].id)
				continue;
			while (s[j].id)
				j = (j + 1) & (ncap - 1);
			s[j] = m->slots[i];
		}
		free(m->slots);
		if (m->cap)
			fleet_uncharge(fl, (size_t)m->cap * sizeof(*s) + FLEET_ALLOC_OVERHEAD);
		m->slots = s;
		m->cap = ncap;
	}
	mask = m->cap - 1;
	for (i = h & mask; m->slots[i].id; i = (i + 1) & mask)
		;
	m->slots[i] = (struct fleet_slot){.hash = h, .id = id + 1};
	m->n++;
	return 0;
}

void fleet_map_free(struct fleet *fl, struct fleet_map *m)
{
	if (m->cap)
		fleet_uncharge(fl, (size_t)m->cap * sizeof(*m->slots) + FLEET_ALLOC_OVERHEAD);
	free(m->slots);
	*m = (struct fleet_map){0};
}

/* count zeroed elements of size size, counted: NULL with *ret set on failure. */
void *fleet_alloc(struct fleet *fl, size_t count, size_t size, int *ret)
{
	void *p;

	*ret = fleet_charge(fl, (count ? count : 1) * size + FLEET_ALLOC_OVERHEAD);
	if (*ret)
		return NULL;
	p = calloc(count ? count : 1, size);
	if (!p)
		*ret = -ENOMEM;
	return p;
}

/* A message on the error stream, escaped whole: it holds names from the
 * reports and the files'. Returns DOCTOR_NO_INPUT. */
int fleet_fail(struct fleet *fl, const char *fmt, ...)
{
	char *msg = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&msg, fmt, ap);
	va_end(ap);
	fprintf(fl->err, "%s: ", fl->name ? fl->name : "gdx-doctor fleet");
	gdx_esc_text(fl->err, n < 0 ? "(out of memory saying what)" : msg);
	fputc('\n', fl->err);
	free(n < 0 ? NULL : msg);
	return DOCTOR_NO_INPUT;
}

/* The exit status for an error of the helpers, -ENOMEM (70) or -E2BIG (3),
 * said, where: what fleet was reading. */
int fleet_status(struct fleet *fl, int err, const char *where)
{
	if (err == -ENOMEM) {
		fprintf(fl->err, "%s: out of memory\n", fl->name ? fl->name : "gdx-doctor fleet");
		return DOCTOR_ERROR;
	}
	if (err == -EOVERFLOW)
		return fleet_fail(fl, "%s: rail groups longer than %d KiB: not a node's topology",
				  where, FLEET_MAX_VALUE >> 10);
	return fleet_fail(
		fl,
		"%s: the reports would take more than the %zu MiB of memory allowed for "
		"them (%d bytes for each byte read, and 1 MiB): not what gdx-doctor writes",
		where, fl->budget.limit >> 20, JSON_BUDGET_PER_BYTE);
}

void fleet_free_read(struct fleet *fl)
{
	while (fl->strings) {
		struct fleet_chunk *next = fl->strings->next;

		free(fl->strings);
		fl->strings = next;
	}
	for (int i = 0; i < fl->ndocs; i++)
		json_free(fl->docs[i]);
	free(fl->docs);
	fl->docs = NULL;
	fl->ndocs = 0;
}
