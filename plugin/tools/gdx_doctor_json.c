/* SPDX-License-Identifier: MIT */
/*
 * A small JSON reader for gdx-doctor fleet, which reads what check --json
 * and topo --json wrote on other nodes: RFC 8259 values into a tree, with
 * the line and column of the first thing wrong. Strings are decoded to UTF-8
 * (other bytes pass as they are); numbers are kept as written, since fleet
 * only compares and prints them.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdx_doctor.h"

/* Deeper than any report; a bound keeps garbage such as "[[[[..." from
 * exhausting the stack. */
#define JSON_MAX_DEPTH 64

struct json_parser {
	const char *s;
	size_t len, pos;
	int depth;
	char *why;
	size_t why_len;
};

static int json_fail(struct json_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int json_fail(struct json_parser *p, const char *fmt, ...)
{
	int line = 1, col = 1, n;
	va_list ap;

	for (size_t i = 0; i < p->pos && i < p->len; i++) {
		if (p->s[i] == '\n')
			line++, col = 1;
		else
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

static int json_hex4(struct json_parser *p, unsigned *out)
{
	unsigned v = 0;

	if (p->len - p->pos < 4)
		return json_fail(p, "\\u needs four hex digits");
	for (int i = 0; i < 4; i++) {
		char c = p->s[p->pos + (size_t)i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return json_fail(p, "\\u needs four hex digits");
	}
	p->pos += 4;
	*out = v;
	return 0;
}

static char *json_put_utf8(char *o, unsigned cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/* At the opening quote. A decoded string is never longer than its escaped
 * form (\uXXXX is six bytes for at most three, a surrogate pair twelve for
 * four), so the raw length bounds the buffer. */
static int json_string_at(struct json_parser *p, char **out)
{
	size_t start = ++p->pos, end = start;
	char *buf, *o;

	while (end < p->len && p->s[end] != '"')
		end += p->s[end] == '\\' ? 2 : 1;
	if (end >= p->len) {
		p->pos = start - 1; /* where it starts: the end says nothing */
		return json_fail(p, "a string that starts here does not end (truncated?)");
	}
	buf = malloc(end - start + 1);
	if (!buf)
		return -ENOMEM;
	o = buf;
	while (p->pos < end) {
		unsigned char c = (unsigned char)p->s[p->pos];
		unsigned cp, lo;

		if (c < 0x20) {
			free(buf);
			return json_fail(p, "control character 0x%02x in a string", c);
		}
		if (c != '\\') {
			*o++ = (char)c;
			p->pos++;
			continue;
		}
		p->pos++;
		switch (p->s[p->pos++]) {
		case '"': *o++ = '"'; continue;
		case '\\': *o++ = '\\'; continue;
		case '/': *o++ = '/'; continue;
		case 'b': *o++ = '\b'; continue;
		case 'f': *o++ = '\f'; continue;
		case 'n': *o++ = '\n'; continue;
		case 'r': *o++ = '\r'; continue;
		case 't': *o++ = '\t'; continue;
		case 'u': break;
		default:
			p->pos--;
			free(buf);
			return json_fail(p, "unknown escape \\%c in a string", p->s[p->pos]);
		}
		if (json_hex4(p, &cp))
			goto bad;
		if (cp >= 0xdc00 && cp <= 0xdfff) {
			json_fail(p, "a lone low surrogate \\u%04x in a string", cp);
			goto bad;
		}
		if (cp >= 0xd800 && cp <= 0xdbff) {
			if (p->len - p->pos < 2 || p->s[p->pos] != '\\' ||
			    p->s[p->pos + 1] != 'u') {
				json_fail(p, "a high surrogate \\u%04x without its low half", cp);
				goto bad;
			}
			p->pos += 2;
			if (json_hex4(p, &lo))
				goto bad;
			if (lo < 0xdc00 || lo > 0xdfff) {
				json_fail(p, "a high surrogate \\u%04x without its low half", cp);
				goto bad;
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		}
		/* A NUL would cut the C string short: a name that is not one. */
		if (!cp) {
			json_fail(p, "\\u0000 in a string");
			goto bad;
		}
		o = json_put_utf8(o, cp);
	}
	*o = '\0';
	p->pos = end + 1;
	*out = buf;
	return 0;
bad:
	free(buf);
	return -EINVAL;
}

static bool json_digit(const struct json_parser *p)
{
	return p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int json_number_at(struct json_parser *p, char **out)
{
	size_t start = p->pos;

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
		if (!json_digit(p))
			return json_fail(p, "a number needs a digit after '.'");
		while (json_digit(p))
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (!json_digit(p))
			return json_fail(p, "a number needs a digit in its exponent");
		while (json_digit(p))
			p->pos++;
	}
	*out = strndup(p->s + start, p->pos - start);
	return *out ? 0 : -ENOMEM;
}

static int json_value_at(struct json_parser *p, struct json_value *v);

/* Appends a zeroed item to an array's or object's items. */
static struct json_value *json_push(struct json_value *v, int *cap)
{
	if (v->n == *cap) {
		int ncap = *cap ? 2 * *cap : 8;
		struct json_value *items = realloc(v->items, (size_t)ncap * sizeof(*items));

		if (!items)
			return NULL;
		v->items = items;
		*cap = ncap;
	}
	memset(&v->items[v->n], 0, sizeof(v->items[0]));
	return &v->items[v->n++];
}

/* At '[' or '{'. */
static int json_container_at(struct json_parser *p, struct json_value *v)
{
	bool object = p->s[p->pos] == '{';
	char close = object ? '}' : ']', buf[16];
	const char *what = object ? "an object" : "an array";
	int cap = 0, ret;

	if (++p->depth > JSON_MAX_DEPTH)
		return json_fail(p, "nested deeper than %d levels", JSON_MAX_DEPTH);
	v->type = object ? JSON_OBJECT : JSON_ARRAY;
	p->pos++;
	json_skip_space(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		p->depth--;
		return 0;
	}
	for (;;) {
		struct json_value *item = json_push(v, &cap);

		if (!item)
			return -ENOMEM;
		json_skip_space(p);
		if (object) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return json_fail(p,
						 "expected a member name in quotes in %s, found %s",
						 what, json_found(p, buf, sizeof(buf)));
			ret = json_string_at(p, &item->key);
			if (ret)
				return ret;
			json_skip_space(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return json_fail(
					p, "expected ':' after the member name \"%s\", found %s",
					item->key, json_found(p, buf, sizeof(buf)));
			p->pos++;
		}
		ret = json_value_at(p, item);
		if (ret)
			return ret;
		json_skip_space(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			p->depth--;
			return 0;
		}
		return json_fail(p, "expected ',' or '%c' in %s, found %s", close, what,
				 json_found(p, buf, sizeof(buf)));
	}
}

static int json_value_at(struct json_parser *p, struct json_value *v)
{
	static const struct {
		const char *word;
		enum json_type type;
	} words[] = {{"true", JSON_TRUE}, {"false", JSON_FALSE}, {"null", JSON_NULL}};
	char buf[16], c;

	json_skip_space(p);
	if (p->pos >= p->len)
		return json_fail(p, "expected a value, found %s", json_found(p, buf, sizeof(buf)));
	c = p->s[p->pos];
	if (c == '{' || c == '[')
		return json_container_at(p, v);
	if (c == '"') {
		v->type = JSON_STRING;
		return json_string_at(p, &v->text);
	}
	if (c == '-' || (c >= '0' && c <= '9')) {
		v->type = JSON_NUMBER;
		return json_number_at(p, &v->text);
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		size_t n = strlen(words[i].word);

		if (p->len - p->pos >= n && !memcmp(p->s + p->pos, words[i].word, n)) {
			v->type = words[i].type;
			p->pos += n;
			return 0;
		}
	}
	return json_fail(p, "expected a value, found %s", json_found(p, buf, sizeof(buf)));
}

static void json_free_items(struct json_value *v)
{
	for (int i = 0; i < v->n; i++)
		json_free_items(&v->items[i]);
	free(v->items);
	free(v->text);
	free(v->key);
}

void json_free(struct json_value *v)
{
	if (!v)
		return;
	json_free_items(v);
	free(v);
}

int json_parse(const char *text, size_t len, size_t *pos, struct json_value **out, char *why,
	       size_t why_len)
{
	struct json_parser p = {.s = text, .len = len, .pos = *pos, .why = why, .why_len = why_len};
	struct json_value *v = calloc(1, sizeof(*v));
	int ret;

	if (!v) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	ret = json_value_at(&p, v);
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(why, why_len, "out of memory");
		json_free(v);
		return ret;
	}
	*pos = p.pos;
	*out = v;
	return 0;
}

const struct json_value *json_get(const struct json_value *obj, const char *key)
{
	if (!obj || obj->type != JSON_OBJECT)
		return NULL;
	for (int i = 0; i < obj->n; i++)
		if (!strcmp(obj->items[i].key, key))
			return &obj->items[i];
	return NULL;
}

const char *json_string(const struct json_value *v)
{
	return v && v->type == JSON_STRING ? v->text : NULL;
}
