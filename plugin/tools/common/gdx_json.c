/* SPDX-License-Identifier: MIT */
/*
 * gdx-doctor's JSON: the writers every command's --json prints with, and a
 * small reader for gdx-doctor fleet, which reads what check --json
 * and topo --json wrote on other nodes, and for gdx-bench's plots: RFC 8259
 * values into a tree, with the line and column of the first thing wrong.
 * Strings are decoded (and must be UTF-8); numbers are kept as written,
 * since fleet only compares and prints them.
 *
 * The input may be a stranger's, so it is read twice. The first pass checks
 * all of it (syntax, UTF-8, escapes, numbers in range, the caps in
 * gdx_doctor.h) and counts what the tree will take, refusing at the value
 * that takes it past the caller's budget. The second builds the tree in one
 * allocation of exactly that size: the values not yet closed sit on a stack
 * at the front of the node array, and a container, when it closes, moves
 * its items to the back, where they stay. Each node is in one of the two
 * places, so the array the first pass counted holds both, and the items of
 * each container end up side by side.
 */
#include <endian.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tools/common/gdx_json.h"
#include "tools/common/gdx_escape.h"

/* Objects of more members than this get a hash index; json_get walks the
 * smaller ones. */
#define JSON_INDEX_MIN 8

/* What malloc adds to the tree's one allocation, counted in the budget. */
#define JSON_ALLOC_OVERHEAD 32

struct json_parser {
	const char *s;
	size_t len, pos;
	int depth;
	char *why;
	size_t why_len;
	bool build; /* the second pass */
	/* The first pass: what the tree takes, and what it may. */
	size_t nodes, slots, bytes, room, limit;
	/* The second: where it goes. */
	struct json_value *nd;
	size_t sp, back;
	uint32_t *slot;
	char *str;
};

static int json_fail(struct json_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int json_fail(struct json_parser *p, const char *fmt, ...)
{
	int line = 1, col = 1, n;
	va_list ap;

	/* Columns in characters: what comes before pos is checked UTF-8. */
	for (size_t i = 0; i < p->pos && i < p->len; i++) {
		unsigned char c = (unsigned char)p->s[i];

		if (c == '\n')
			line++, col = 1;
		else if ((c & 0xc0) != 0x80)
			col++;
	}
	n = snprintf(p->why, p->why_len, "line %d, column %d: ", line, col);
	if (n >= 0 && (size_t)n < p->why_len) {
		va_start(ap, fmt);
		vsnprintf(p->why + n, p->why_len - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* What stands at the position, for "expected X, found Y". */
static const char *json_found(const struct json_parser *p, char *buf, size_t len)
{
	unsigned char c;

	if (p->pos >= p->len)
		return "the end of the input (truncated?)";
	c = (unsigned char)p->s[p->pos];
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", c);
	return buf;
}

static void json_skip_space(struct json_parser *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]) && p->s[p->pos])
		p->pos++;
}

/* The slots of an index for n members: a power of two, at most half full. */
static size_t json_index_slots(int n)
{
	size_t s = 16;

	while (s < 2 * (size_t)n)
		s <<= 1;
	return s;
}

static size_t json_tree_size(const struct json_parser *p)
{
	return p->nodes * sizeof(struct json_value) + p->slots * sizeof(uint32_t) + p->bytes;
}

/* The first pass, after counting more: refused, at the value that starts at
 * at, when the tree would no longer fit the budget. */
static int json_charge(struct json_parser *p, size_t at)
{
	if (json_tree_size(p) + JSON_ALLOC_OVERHEAD <= p->room)
		return 0;
	p->pos = at;
	return json_fail(p,
			 "the values up to here would take more than the %zu KiB of memory allowed "
			 "for this input",
			 p->limit >> 10);
}

/* A value's node: counted (first pass), or pushed on the stack (second). */
static int json_node(struct json_parser *p, enum json_type type, char *key, struct json_value **out)
{
	if (!p->build) {
		*out = NULL;
		p->nodes++;
		return json_charge(p, p->pos);
	}
	*out = &p->nd[p->sp++];
	**out = (struct json_value){.type = type, .key = key};
	return 0;
}

static int json_hex4(struct json_parser *p, uint32_t *out)
{
	uint32_t v = 0;

	if (p->len - p->pos < 4)
		return json_fail(p, "\\u needs four hex digits");
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos + (size_t)i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (uint32_t)(c - 'A' + 10);
		else
			return json_fail(p, "\\u needs four hex digits");
	}
	p->pos += 4;
	*out = v;
	return 0;
}

static size_t json_put_utf8(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* After a backslash: the escape's code point. */
static int json_escape_at(struct json_parser *p, uint32_t *cp)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *e = p->pos < p->len && p->s[p->pos] ? strchr(from, p->s[p->pos]) : NULL;
	uint32_t lo;
	int ret;

	if (p->pos < p->len && p->s[p->pos] == 'u') {
		p->pos++;
		ret = json_hex4(p, cp);
		if (ret)
			return ret;
		if (*cp >= 0xdc00 && *cp <= 0xdfff)
			return json_fail(p, "a lone low surrogate \\u%04x in a string", *cp);
		if (*cp >= 0xd800 && *cp <= 0xdbff) {
			if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u')
				return json_fail(p, "a high surrogate \\u%04x without its low half",
						 *cp);
			p->pos += 2;
			ret = json_hex4(p, &lo);
			if (ret)
				return ret;
			if (lo < 0xdc00 || lo > 0xdfff)
				return json_fail(p, "a high surrogate \\u%04x without its low half",
						 *cp);
			*cp = 0x10000 + ((*cp - 0xd800) << 10) + (lo - 0xdc00);
		}
		/* A NUL would cut the C string short: a name that is not one. */
		if (!*cp)
			return json_fail(p, "\\u0000 in a string");
		return 0;
	}
	if (!e) {
		char buf[16];

		return json_fail(p, "unknown escape in a string: a backslash before %s",
				 json_found(p, buf, sizeof(buf)));
	}
	p->pos++;
	*cp = (uint32_t)(unsigned char)to[e - from];
	return 0;
}

/* At the opening quote: the string checked, and decoded into the tree
 * (second pass) or counted (first). */
static int json_string_at(struct json_parser *p, char **out)
{
	size_t start = p->pos++, n = 0, end;
	char *o = p->build ? p->str : NULL;

	for (;;) {
		const char *from = p->s + p->pos;
		char u[4];
		uint32_t cp;
		size_t k;
		int ret;
		unsigned char c;

		if (p->pos >= p->len) {
			p->pos = start; /* where it starts: the end says nothing */
			return json_fail(p, "a string that starts here does not end (truncated?)");
		}
		c = (unsigned char)p->s[p->pos];
		if (c == '"')
			break;
		if (c < 0x20)
			return json_fail(p, "control character 0x%02x in a string", c);
		if (c == '\\') {
			p->pos++;
			ret = json_escape_at(p, &cp);
			if (ret)
				return ret;
			k = json_put_utf8(u, cp);
			from = u;
		} else {
			k = gdx_utf8_next(from, p->len - p->pos, &cp);
			if (!k)
				return json_fail(p, "invalid UTF-8 in a string: byte 0x%02x", c);
			p->pos += k;
		}
		if (n + k > JSON_MAX_STRING) {
			p->pos = start;
			return json_fail(p, "a string longer than %d bytes", JSON_MAX_STRING);
		}
		if (o)
			memcpy(o + n, from, k);
		n += k;
	}
	end = ++p->pos;
	if (!p->build) {
		p->bytes += n + 1;
		if (json_charge(p, start))
			return -EINVAL;
		p->pos = end;
		return 0;
	}
	o[n] = '\0';
	p->str += n + 1;
	*out = o;
	return 0;
}

static bool json_digit(const struct json_parser *p)
{
	return p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, of at most JSON_MAX_NUMBER
 * characters; an integer from -2^63 to 2^64-1 (what the reports carry, such
 * as a memlock in bytes), any other number a double's. */
static int json_number_at(struct json_parser *p, char **out)
{
	size_t start = p->pos, n, end;
	char text[JSON_MAX_NUMBER + 1];
	bool integer = true;
	double d;

	if (p->s[p->pos] == '-')
		p->pos++;
	if (!json_digit(p))
		return json_fail(p, "a number needs a digit here");
	if (p->s[p->pos] == '0')
		p->pos++;
	else
		while (json_digit(p))
			p->pos++;
	if (p->pos < p->len && p->s[p->pos] == '.') {
		p->pos++;
		integer = false;
		if (!json_digit(p))
			return json_fail(p, "a number needs a digit after '.'");
		while (json_digit(p))
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		integer = false;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (!json_digit(p))
			return json_fail(p, "a number needs a digit in its exponent");
		while (json_digit(p))
			p->pos++;
	}
	end = p->pos;
	n = end - start;
	if (n > JSON_MAX_NUMBER) {
		p->pos = start;
		return json_fail(p, "a number longer than %d characters", JSON_MAX_NUMBER);
	}
	memcpy(text, p->s + start, n);
	text[n] = '\0';
	if (p->build) {
		memcpy(p->str, text, n + 1);
		*out = p->str;
		p->str += n + 1;
		return 0;
	}
	errno = 0;
	if (integer && text[0] == '-') {
		(void)strtoll(text, NULL, 10);
	} else if (integer) {
		(void)strtoull(text, NULL, 10);
	} else {
		d = strtod(text, NULL);
		if (!isfinite(d))
			errno = ERANGE;
	}
	if (errno == ERANGE) {
		p->pos = start;
		return json_fail(p, "the number %s is out of range (%s)", text,
				 integer ? "an integer from -2^63 to 2^64-1"
					 : "beyond the range of a double");
	}
	p->bytes += n + 1;
	if (json_charge(p, start))
		return -EINVAL;
	p->pos = end;
	return 0;
}

static int json_value_at(struct json_parser *p, char *key);

/* The second pass, at a closed object: its index when it has many members,
 * and no name twice. */
static int json_index(struct json_parser *p, struct json_value *v, size_t start)
{
	size_t slots, mask;
	uint32_t *idx;
	int i, j;

	if (v->n <= JSON_INDEX_MIN) {
		for (i = 1; i < v->n; i++)
			for (j = 0; j < i; j++)
				if (!strcmp(v->items[i].key, v->items[j].key))
					goto twice;
		return 0;
	}
	slots = json_index_slots(v->n);
	mask = slots - 1;
	idx = p->slot;
	p->slot += slots;
	memset(idx, 0, slots * sizeof(*idx));
	for (i = 0; i < v->n; i++) {
		const char *key = v->items[i].key;
		size_t h = (size_t)json_hash(key, strlen(key)) & mask;

		for (; idx[h]; h = (h + 1) & mask) {
			j = (int)idx[h] - 1;
			if (!strcmp(v->items[j].key, key))
				goto twice;
		}
		idx[h] = (uint32_t)i + 1;
	}
	v->index = idx;
	return 0;
twice:
	p->pos = start;
	return json_fail(p, "in the object that starts here, member %d has the name of member %d",
			 i + 1, j + 1);
}

/* A container's end: its items moved from the stack to the back (second
 * pass), its index counted (first). */
static int json_close(struct json_parser *p, bool object, int n, size_t c, size_t start)
{
	struct json_value *v;

	if (!p->build) {
		if (object && n > JSON_INDEX_MIN) {
			p->slots += json_index_slots(n);
			return json_charge(p, start);
		}
		return 0;
	}
	v = &p->nd[c];
	p->back -= (size_t)n;
	memmove(&p->nd[p->back], v + 1, (size_t)n * sizeof(*v));
	p->sp = c + 1;
	v->items = &p->nd[p->back];
	v->n = n;
	return object ? json_index(p, v, start) : 0;
}

/* At '[' or '{'. */
static int json_container_at(struct json_parser *p, char *key)
{
	bool object = p->s[p->pos] == '{';
	char close = object ? '}' : ']', buf[16];
	const char *what = object ? "an object" : "an array";
	size_t start = p->pos, c = p->sp, end;
	struct json_value *v;
	int n = 0, ret;

	if (p->depth == JSON_MAX_DEPTH)
		return json_fail(p, "nested deeper than %d levels", JSON_MAX_DEPTH);
	ret = json_node(p, object ? JSON_OBJECT : JSON_ARRAY, key, &v);
	if (ret)
		return ret;
	p->depth++;
	p->pos++;
	json_skip_space(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		p->depth--;
		return 0;
	}
	for (;;) {
		char *name = NULL;

		json_skip_space(p);
		if (n == JSON_MAX_ITEMS)
			return json_fail(p, "more than %d %s in %s", JSON_MAX_ITEMS,
					 object ? "members" : "elements", what);
		if (object) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return json_fail(p,
						 "expected a member name in quotes in %s, found %s",
						 what, json_found(p, buf, sizeof(buf)));
			ret = json_string_at(p, &name);
			if (ret)
				return ret;
			json_skip_space(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return json_fail(p, "expected ':' after a member name, found %s",
						 json_found(p, buf, sizeof(buf)));
			p->pos++;
		}
		ret = json_value_at(p, name);
		if (ret)
			return ret;
		n++;
		json_skip_space(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close)
			break;
		return json_fail(p, "expected ',' or '%c' in %s, found %s", close, what,
				 json_found(p, buf, sizeof(buf)));
	}
	end = ++p->pos;
	p->depth--;
	ret = json_close(p, object, n, c, start);
	p->pos = end;
	return ret;
}

static int json_value_at(struct json_parser *p, char *key)
{
	static const struct {
		const char *word;
		enum json_type type;
	} words[] = {{"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
	struct json_value *v;
	char buf[16], *text = NULL, c;
	int ret;

	json_skip_space(p);
	if (p->pos >= p->len)
		return json_fail(p, "expected a value, found %s", json_found(p, buf, sizeof(buf)));
	c = p->s[p->pos];
	if (c == '{' || c == '[')
		return json_container_at(p, key);
	if (c == '"' || c == '-' || (c >= '0' && c <= '9')) {
		ret = json_node(p, c == '"' ? JSON_STRING : JSON_NUMBER, key, &v);
		if (ret)
			return ret;
		ret = c == '"' ? json_string_at(p, &text) : json_number_at(p, &text);
		if (!ret && v)
			v->text = text;
		return ret;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].word);

		if (p->len - p->pos >= n && !memcmp(p->s + p->pos, words[i].word, n)) {
			ret = json_node(p, words[i].type, key, &v);
			p->pos += n;
			return ret;
		}
	}
	return json_fail(p, "expected a value, found %s", json_found(p, buf, sizeof(buf)));
}

void json_free(struct json_value *v)
{
	free(v);
}

int json_parse(const char *text, size_t len, size_t *pos, struct json_budget *budget,
	       struct json_value **out, char *why, size_t why_len)
{
	struct json_parser p = {.s = text, .len = len, .pos = *pos, .why = why, .why_len = why_len};
	struct json_budget own;
	size_t size;
	int ret;

	if (!budget) {
		own = (struct json_budget){.limit = JSON_BUDGET_PER_BYTE * (len - *pos) +
						    JSON_BUDGET_BASE};
		budget = &own;
	}
	p.limit = budget->limit;
	p.room = budget->used < budget->limit ? budget->limit - budget->used : 0;
	ret = json_value_at(&p, NULL);
	if (ret)
		return ret;

	size = json_tree_size(&p);
	p.nd = malloc(size);
	if (!p.nd) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	p.slot = (uint32_t *)(p.nd + p.nodes);
	p.str = (char *)(p.slot + p.slots);
	p.back = p.nodes;
	p.build = true;
	p.pos = *pos;
	ret = json_value_at(&p, NULL);
	if (ret) {
		free(p.nd); /* a name twice: only the tree shows it */
		return ret;
	}
	budget->used += size + JSON_ALLOC_OVERHEAD;
	*pos = p.pos;
	*out = p.nd;
	return 0;
}

const struct json_value *json_get(const struct json_value *obj, const char *key)
{
	size_t mask, h;

	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	if (!obj->index) {
		for (int i = 0; i < obj->n; i++)
			if (!strcmp(obj->items[i].key, key))
				return &obj->items[i];
		return NULL;
	}
	mask = json_index_slots(obj->n) - 1;
	for (h = (size_t)json_hash(key, strlen(key)) & mask; obj->index[h]; h = (h + 1) & mask)
		if (!strcmp(obj->items[obj->index[h] - 1].key, key))
			return &obj->items[obj->index[h] - 1];
	return NULL;
}

const char *json_string(const struct json_value *v)
{
	return v && v->type == JSON_STRING ? v->text : NULL;
}

/* SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF"). */
static uint64_t json_rotl(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

static void json_sipround(uint64_t v[4])
{
	v[0] += v[1];
	v[1] = json_rotl(v[1], 13) ^ v[0];
	v[0] = json_rotl(v[0], 32);
	v[2] += v[3];
	v[3] = json_rotl(v[3], 16) ^ v[2];
	v[0] += v[3];
	v[3] = json_rotl(v[3], 21) ^ v[0];
	v[2] += v[1];
	v[1] = json_rotl(v[1], 17) ^ v[2];
	v[2] = json_rotl(v[2], 32);
}

static uint64_t json_siphash(uint64_t k0, uint64_t k1, const unsigned char *d, size_t len)
{
	uint64_t v[4] = {k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
			 k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL};
	uint64_t m, last = (uint64_t)len << 56;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&m, d + i, 8);
		m = le64toh(m);
		v[3] ^= m;
		json_sipround(v);
		json_sipround(v);
		v[0] ^= m;
	}
	for (size_t k = 0; i + k < len; k++)
		last |= (uint64_t)d[i + k] << (8 * k);
	v[3] ^= last;
	json_sipround(v);
	json_sipround(v);
	v[0] ^= last;
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		json_sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

uint64_t json_siphash_keyed(const uint64_t key[2], const void *data, size_t len)
{
	return json_siphash(key[0], key[1], data, len);
}

uint64_t json_hash(const void *data, size_t len)
{
	static uint64_t key[2];
	static bool keyed;

	if (!keyed) {
		/* Without the kernel's randomness, what differs from run to run. */
		if (getrandom(key, sizeof(key), GRND_NONBLOCK) != (ssize_t)sizeof(key)) {
			key[0] = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&key;
			key[1] = (uint64_t)getpid() ^ (uint64_t)(uintptr_t)data;
		}
		keyed = true;
	}
	return json_siphash(key[0], key[1], data, len);
}

/* The writers, which every command's --json prints with. */

void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	gdx_esc_json(f, s);
	fputc('"', f);
}

void json_str_or_null(FILE *f, const char *s)
{
	if (s && s[0])
		json_str(f, s);
	else
		fputs("null", f);
}

void json_key_str(FILE *f, const char *key, const char *s)
{
	json_str(f, key);
	fputs(": ", f);
	json_str_or_null(f, s);
}

void json_key_count(FILE *f, const char *key, long long v)
{
	json_str(f, key);
	if (v >= 0)
		fprintf(f, ": %lld", v);
	else
		fputs(": null", f);
}

void json_tri(FILE *f, int v)
{
	fputs(v < 0 ? "null" : v ? "true" : "false", f);
}

const char *json_this_host(char *buf, size_t len)
{
	/* gethostname may truncate without a terminator. */
	buf[len - 1] = '\0';
	return gethostname(buf, len - 1) ? NULL : buf;
}

void json_report_origin_of(FILE *f, const char *command, const char *hostname)
{
	fprintf(f, "\"command\": \"%s\", ", command);
	json_key_str(f, "hostname", hostname);
}

void json_report_origin(FILE *f, const char *command)
{
	char host[256];

	json_report_origin_of(f, command, json_this_host(host, sizeof(host)));
}
