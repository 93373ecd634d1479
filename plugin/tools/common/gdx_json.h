/* SPDX-License-Identifier: MIT */
/*
 * The tools' JSON (gdx_json.c): the writers gdx-doctor's --json prints with,
 * and the reader gdx-doctor fleet and gdx-bench's plots read with. Shared by
 * both tools, so it lives apart from either.
 */
#ifndef GDX_JSON_H
#define GDX_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* JSON values (gdx_json.c): a string with quotes, backslashes and
 * control characters escaped; null for NULL or ""; "key": string-or-null;
 * null/true/false for -1/1/0. */
void json_str(FILE *f, const char *s);
void json_str_or_null(FILE *f, const char *s);
void json_key_str(FILE *f, const char *key, const char *s);
/* "key": v, or "key": null when v is negative (none, as a rank -1). */
void json_key_count(FILE *f, const char *key, long long v);
void json_tri(FILE *f, int v);

/* What opens every report fleet reads: "command": "check", "hostname": the
 * node's name (null when unknown), which fleet tells nodes apart by: this
 * machine's, or for a saved tree or topology the machine it was taken on. */
void json_report_origin_of(FILE *f, const char *command, const char *hostname);
/* The same with this machine's name. */
void json_report_origin(FILE *f, const char *command);
/* This machine's name in buf; NULL when gethostname fails. */
const char *json_this_host(char *buf, size_t len);

/*
 * The JSON reader (gdx_json.c). Its input may come from another user
 * or another node, so it takes nothing on trust: a value past one of these
 * caps, a number out of range, a byte that is not UTF-8 in a string, a
 * member name twice in one object, or a tree that would take more memory
 * than the caller allows, is refused with its line and column like any
 * other error.
 */
#define JSON_MAX_DEPTH	64	   /* arrays and objects inside each other */
#define JSON_MAX_STRING (64 << 10) /* bytes of one string or member name, decoded */
#define JSON_MAX_ITEMS	(1 << 20)  /* elements of one array, members of one object */
#define JSON_MAX_NUMBER 64	   /* characters of one number as written */

/* The memory json_parse may take for the trees it returns, in bytes: it
 * refuses a value that would take used past limit, and adds what each tree
 * takes to used. A caller can count its own allocations in it too. */
struct json_budget {
	size_t limit, used;
};

/* The budget json_parse gives an input of len bytes when the caller gives
 * none: 6 bytes for each of its bytes, and 1 MiB, so that the input and its
 * tree take at most about 8 times its size. */
#define JSON_BUDGET_PER_BYTE 6
#define JSON_BUDGET_BASE     ((size_t)1 << 20)

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT
};

/* A parsed JSON value. A tree is one allocation: its nodes, the hash index
 * of its large objects and its strings. */
struct json_value {
	enum json_type type;
	int n;	   /* ARRAY: the elements; OBJECT: the members */
	char *key; /* a member of an object: its name */
	union {
		char *text; /* STRING: decoded, valid UTF-8, no NUL; NUMBER: as written */
		struct json_value *items; /* ARRAY: the elements; OBJECT: the members, in order */
	};
	const uint32_t *index; /* OBJECT of more than a few members: json_get's hash of the names */
};

/*
 * Parses the one value that starts at text[*pos] after white space. Returns
 * 0 with *out (json_free it) and *pos just past the value (more may follow:
 * a stream of reports); -EINVAL with why, "line L, column C: what was
 * wrong" (counted from text[0], the column in characters; why takes from
 * the input only a printable ASCII character it found, or a number's
 * digits, so it can be printed as it is); or -ENOMEM. budget NULL: the
 * default for the bytes from *pos on.
 */
int json_parse(const char *text, size_t len, size_t *pos, struct json_budget *budget,
	       struct json_value **out, char *why, size_t why_len);
void json_free(struct json_value *v);
/* The member named key (a name is in an object once); NULL when there is
 * none or obj is no object. */
const struct json_value *json_get(const struct json_value *obj, const char *key);
/* v's text when v is a string, else NULL. */
const char *json_string(const struct json_value *v);
/* SipHash-2-4 of the bytes under a key drawn at random once per process:
 * what the reader and fleet hash names with, which input cannot aim at one
 * bucket. */
uint64_t json_hash(const void *data, size_t len);
/* SipHash-2-4 of the bytes under key: gdx-bench's proof of its token. */
uint64_t json_siphash_keyed(const uint64_t key[2], const void *data, size_t len);

#endif
