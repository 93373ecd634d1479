/* SPDX-License-Identifier: MIT */
/*
 * What the files of gdx-doctor fleet share (gdx_doctor_fleet.c, the command
 * and its comparison; _read.c, the reports read; _attrs.c, each node's
 * attributes; _mem.c, memory counted in the budget, and errors said): the
 * nodes, the attributes and their values, as the reports are read. hang
 * --merge (gdx_doctor_hang_waits.h) reads its reports with the same reader and
 * memory.
 */
#ifndef GDX_DOCTOR_FLEET_RECORDS_H
#define GDX_DOCTOR_FLEET_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/doctor/gdx_doctor.h"

/* The rail groups of a node as one value: a real node's are a few hundred
 * bytes. */
#define FLEET_MAX_VALUE (64 << 10)

/* What malloc adds to an allocation, counted in the budget. */
#define FLEET_ALLOC_OVERHEAD 32

/* Which report an attribute comes from: it is compared only between the
 * nodes that sent that report ("reports" itself between all). */
enum fleet_kind { FLEET_CHECK, FLEET_TOPO, FLEET_ALL };

/* Where a report came from: "SOURCE, report N". */
struct fleet_from {
	const char *source; /* NULL: no such report */
	int ordinal;
};

struct fleet_node {
	const char *name;		    /* the reports' hostname, else where they came from */
	const struct json_value *report[2]; /* check, topo; NULL when none came */
	struct fleet_from from[2];
};

struct fleet_key {
	const char *name;
	enum fleet_kind kind;
	const char *absent; /* what a node that has the report but not this shows */
	int head, tail;	    /* its values in fleet.vals, in node order; -1: none */
};

/* A node's value of a key; next: the key's next value. */
struct fleet_val {
	int node, next;
	const char *value;
};

/* An open-addressing hash table of ids into an array its user keeps: each
 * slot holds an id + 1 (0: empty) and the id's hash. */
struct fleet_slot {
	uint32_t hash, id;
};

struct fleet_map {
	struct fleet_slot *slots;
	uint32_t cap, n;
};

/* Strings fleet made (names, values it formatted), kept to the end. */
struct fleet_chunk {
	struct fleet_chunk *next;
	size_t len, cap;
	char data[];
};

struct fleet {
	struct json_budget budget; /* everything below that grows with the input */
	FILE *out, *err;
	bool json;
	struct json_value **docs; /* every document read, freed at the end */
	int ndocs, docs_cap;
	struct fleet_node *nodes;
	int nnodes, nodes_cap;
	struct fleet_map node_map; /* by name, while the reports are read */
	struct fleet_key *keys;
	int nkeys, keys_cap;
	struct fleet_map key_map;
	struct fleet_val *vals;
	int nvals, vals_cap;
	struct fleet_chunk *strings;
	int *with[3]; /* the nodes that have a check report, a topo report, any: in order */
	int nreports[2];
	char *scratch; /* FLEET_MAX_VALUE + 1 bytes for a value being built */
	/* Set: each report read goes here instead of to fleet's nodes (hang
	 * --merge reads its reports so); doc lives until fl->docs are freed.
	 * Returns the exit status, said when not DOCTOR_OK. */
	int (*on_report)(struct fleet *fl, void *ctx, const char *source, int ordinal,
			 const struct json_value *doc);
	void *on_report_ctx;
	const char *name; /* what its messages open with; NULL: "gdx-doctor fleet" */
};

struct fleet_lookup {
	const struct fleet *fl;
	const char *name;
};

/* Memory, counted in fl->budget (gdx_doctor_fleet_mem.c): each returns 0,
 * -E2BIG past the budget or -ENOMEM; fleet_status says which. */
int fleet_charge(struct fleet *fl, size_t bytes);
void fleet_uncharge(struct fleet *fl, size_t bytes);
/* Room for one more element of size size in *arr (n used of *cap). */
int fleet_grow(struct fleet *fl, void *arr, int *cap, int n, size_t size);
/* A copy of s kept to the end, in *out. */
int fleet_keep(struct fleet *fl, const char *s, const char **out);
/* count zeroed elements of size size: NULL with *ret set on failure. */
void *fleet_alloc(struct fleet *fl, size_t count, size_t size, int *ret);
uint32_t fleet_hash(const char *s);
/* The id in m with hash h for which same(ctx, id) holds; -1 when none. */
int fleet_map_find(const struct fleet_map *m, uint32_t h,
		   bool (*same)(const void *ctx, uint32_t id), const void *ctx);
int fleet_map_add(struct fleet *fl, struct fleet_map *m, uint32_t h, uint32_t id);
void fleet_map_free(struct fleet *fl, struct fleet_map *m);
/* What the reader kept: the strings it made and the documents it read. */
void fleet_free_read(struct fleet *fl);
/* A message on the error stream, escaped whole; returns DOCTOR_NO_INPUT. */
int fleet_fail(struct fleet *fl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The exit status for an error of the helpers, said, where: what fleet was
 * reading. */
int fleet_status(struct fleet *fl, int err, const char *where);

/* The reports (gdx_doctor_fleet_read.c): a file, or standard input for
 * "-", or a text already read (source names it and lives to the end); srun
 * -l output or plain reports. Returns the exit status, said when not 0. */
int fleet_read_file(struct fleet *fl, const char *path);
int fleet_read_buffer(struct fleet *fl, const char *source, const char *text, size_t len);

/* Each node's attributes (gdx_doctor_fleet_attrs.c), the nodes in order:
 * 0, or an error of the helpers. */
int fleet_attrs(struct fleet *fl, int node);
/* Whether node n sent the report attributes of kind come from (FLEET_ALL: any). */
bool fleet_compares(const struct fleet_node *n, enum fleet_kind kind);
/* The key of that name; -1 when there is none. */
int fleet_key_find(const struct fleet *fl, const char *name);

#endif
