/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for gdx-doctor's JSON reader and for fleet, which read
 * the reports other users and other nodes write (gdx_json.c,
 * gdx_doctor_fleet.c). Each input is read as fleet reads a file, a stream
 * of values, and then given to fleet itself, in both output forms.
 *
 *   make fuzz && build/tests/fuzz/json -max_total_time=60 -timeout=10 \
 *           NEW_DIR tests/fuzz/corpus/json
 *   build/tests/fuzz/json -max_total_time=3600 -timeout=10 -jobs=2 \
 *           NEW_DIR tests/fuzz/corpus/json
 *
 * What each value must be: parsed, a tree within the caps (depth, string
 * length, items, number length), its strings UTF-8 without a NUL, every
 * member of an object found by json_get under its name, and the same tree
 * again once written back out with json_str and read; refused, -EINVAL with
 * "line L, column C: " and printable ASCII alone. A tighter budget may
 * refuse what the default takes, never the other way round. fleet must
 * exit 0, 3 or 9, and what it prints (report and messages) holds no
 * control byte but the newline, no byte that is not UTF-8 and nothing that
 * reorders a line; its JSON report must parse. hang --merge likewise, on the
 * input as one node's report file (exit 0, 3 or 10), in its three forms.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tools/doctor/gdx_doctor.h"
#include "tools/doctor/gdx_doctor_hang_waits.h"
#include "tools/common/gdx_escape.h"
#include "check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What gdx-doctor prints: UTF-8 whose every character shows as itself
 * (gdx_esc_text's rule), newlines apart. */
static void fuzz_check_printed(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = gdx_utf8_next(s + i, len - i, &cp);

		FUZZ_CHECK(n > 0);
		FUZZ_CHECK(cp == '\n' || (cp >= 0x20 && cp != 0x7f));
		FUZZ_CHECK(cp < 0x80 || cp > 0x9f);
		FUZZ_CHECK(cp != 0x061c && cp != 0x200e && cp != 0x200f);
		FUZZ_CHECK(!(cp >= 0x2028 && cp <= 0x202e) && !(cp >= 0x2066 && cp <= 0x2069));
		i += n;
	}
}

static void fuzz_check_utf8(const char *s)
{
	size_t len = strlen(s);

	for (size_t i = 0; i < len;) {
		uint32_t cp;
		size_t n = gdx_utf8_next(s + i, len - i, &cp);

		FUZZ_CHECK(n > 0);
		i += n;
	}
}

static void fuzz_check_tree(const struct json_value *v, int depth)
{
	switch (v->type) {
	case JSON_STRING:
		FUZZ_CHECK(strlen(v->text) <= JSON_MAX_STRING);
		fuzz_check_utf8(v->text);
		break;
	case JSON_NUMBER:
		FUZZ_CHECK(strlen(v->text) <= JSON_MAX_NUMBER);
		FUZZ_CHECK(strspn(v->text, "-+.eE0123456789") == strlen(v->text));
		break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		FUZZ_CHECK(depth < JSON_MAX_DEPTH);
		FUZZ_CHECK(v->n >= 0 && v->n <= JSON_MAX_ITEMS);
		FUZZ_CHECK(!v->n || v->items);
		for (int i = 0; i < v->n; i++) {
			const struct json_value *item = &v->items[i];

			if (v->type == JSON_OBJECT) {
				FUZZ_CHECK(item->key && strlen(item->key) <= JSON_MAX_STRING);
				fuzz_check_utf8(item->key);
				FUZZ_CHECK(json_get(v, item->key) == item);
			} else {
				FUZZ_CHECK(!item->key);
			}
			fuzz_check_tree(item, depth + 1);
		}
		break;
	default: break;
	}
}

/* The tree as JSON again, through the doctor's own writer. */
static void fuzz_write(FILE *f, const struct json_value *v)
{
	switch (v->type) {
	case JSON_NULL: fputs("null", f); break;
	case JSON_FALSE: fputs("false", f); break;
	case JSON_TRUE: fputs("true", f); break;
	case JSON_NUMBER: fputs(v->text, f); break;
	case JSON_STRING: json_str(f, v->text); break;
	case JSON_ARRAY:
	case JSON_OBJECT:
		fputc(v->type == JSON_ARRAY ? '[' : '{', f);
		for (int i = 0; i < v->n; i++) {
			if (i)
				fputc(',', f);
			if (v->type == JSON_OBJECT) {
				json_str(f, v->items[i].key);
				fputc(':', f);
			}
			fuzz_write(f, &v->items[i]);
		}
		fputc(v->type == JSON_ARRAY ? ']' : '}', f);
		break;
	}
}

static void fuzz_check_same(const struct json_value *a, const struct json_value *b)
{
	FUZZ_CHECK(a->type == b->type);
	FUZZ_CHECK(!a->key == !b->key && (!a->key || !strcmp(a->key, b->key)));
	if (a->type == JSON_STRING || a->type == JSON_NUMBER)
		FUZZ_CHECK(!strcmp(a->text, b->text));
	if (a->type != JSON_ARRAY && a->type != JSON_OBJECT)
		return;
	FUZZ_CHECK(a->n == b->n);
	for (int i = 0; i < a->n; i++)
		fuzz_check_same(&a->items[i], &b->items[i]);
}

static void fuzz_check_why(const char *why)
{
	int line, col, n = 0;

	FUZZ_CHECK(sscanf(why, "line %d, column %d: %n", &line, &col, &n) == 2 && n > 0);
	FUZZ_CHECK(line >= 1 && col >= 1);
	for (const char *c = why; *c; c++)
		FUZZ_CHECK(*c >= 0x20 && *c < 0x7f);
}

static void fuzz_round_trip(const struct json_value *v)
{
	struct json_budget big = {.limit = (size_t)1 << 40};
	struct json_value *again;
	char *text = NULL, why[256];
	size_t len = 0, pos = 0;
	FILE *f = open_memstream(&text, &len);

	FUZZ_CHECK(f != NULL);
	fuzz_write(f, v);
	FUZZ_CHECK(fclose(f) == 0);
	FUZZ_CHECK(json_parse(text, len, &pos, &big, &again, why, sizeof(why)) == 0);
	FUZZ_CHECK(pos == len);
	fuzz_check_same(v, again);
	json_free(again);
	free(text);
}

/* The input as fleet reads a file: value after value. */
static void fuzz_reader(const char *text, size_t size)
{
	size_t pos = 0;

	for (int docs = 0; docs < 64; docs++) {
		struct json_budget tight;
		struct json_value *v, *w;
		size_t before, pos2, deflt;
		char why[256], why2[256];
		int ret, ret2;

		while (pos < size && strchr(" \t\r\n", text[pos]) && text[pos])
			pos++;
		if (pos == size)
			return;
		/* A budget below json_parse's own for the rest of the input. */
		deflt = JSON_BUDGET_PER_BYTE * (size - pos) + JSON_BUDGET_BASE;
		tight = (struct json_budget){.limit = 3 * size + 256 < deflt ? 3 * size + 256
									     : deflt};
		before = pos;
		pos2 = pos;
		ret = json_parse(text, size, &pos, NULL, &v, why, sizeof(why));
		FUZZ_CHECK(ret == 0 || ret == -EINVAL);
		ret2 = json_parse(text, size, &pos2, &tight, &w, why2, sizeof(why2));
		FUZZ_CHECK(ret2 == 0 || ret2 == -EINVAL);
		if (ret) {
			fuzz_check_why(why);
			FUZZ_CHECK(ret2 == -EINVAL);
			return;
		}
		FUZZ_CHECK(pos > before && pos <= size);
		fuzz_check_tree(v, 0);
		fuzz_round_trip(v);
		if (!ret2) {
			FUZZ_CHECK(pos2 == pos);
			FUZZ_CHECK(tight.used <= tight.limit);
			fuzz_check_same(v, w);
			json_free(w);
		} else {
			fuzz_check_why(why2);
		}
		json_free(v);
	}
}

static void fuzz_fleet(const char *text, size_t size, bool json)
{
	const char *name = "fuzz\x1b[31m.json";
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *o = open_memstream(&out, &out_len), *e = open_memstream(&err, &err_len);
	int ret;

	FUZZ_CHECK(o && e);
	ret = doctor_fleet_texts(1, &name, &text, &size, json, o, e);
	FUZZ_CHECK(fclose(o) == 0 && fclose(e) == 0);
	FUZZ_CHECK(ret == DOCTOR_OK || ret == DOCTOR_NO_INPUT || ret == DOCTOR_FLEET_DIFFERS);
	FUZZ_CHECK(!memchr(out, 0, out_len) && !memchr(err, 0, err_len));
	fuzz_check_printed(out, out_len);
	fuzz_check_printed(err, err_len);
	FUZZ_CHECK((ret == DOCTOR_NO_INPUT) == (err_len > 0));
	if (json && ret != DOCTOR_NO_INPUT) {
		struct json_budget big = {.limit = (size_t)1 << 40};
		struct json_value *v;
		size_t pos = 0;
		char why[256];

		FUZZ_CHECK(json_parse(out, out_len, &pos, &big, &v, why, sizeof(why)) == 0);
		FUZZ_CHECK(v->type == JSON_OBJECT && pos + 1 == out_len && out[pos] == '\n');
		json_free(v);
	}
	free(out);
	free(err);
}

/* hang --merge on the input as one node's report file: it exits 0, 3 or
 * 10, prints nothing that is not shown as itself, and its JSON parses. */
static void fuzz_hang(const char *text, size_t size, enum hang_merge_fmt fmt)
{
	char *out = NULL, *err = NULL, path[64];
	size_t out_len = 0, err_len = 0;
	FILE *o = open_memstream(&out, &out_len), *e = open_memstream(&err, &err_len);
	int fd = memfd_create("fuzz-hang", MFD_CLOEXEC), ret;
	char *srcs[1] = {path};

	FUZZ_CHECK(o && e && fd >= 0);
	FUZZ_CHECK(write(fd, text, size) == (ssize_t)size);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ret = hang_merge(1, srcs, fmt, o, e);
	close(fd);
	FUZZ_CHECK(fclose(o) == 0 && fclose(e) == 0);
	FUZZ_CHECK(ret == DOCTOR_OK || ret == DOCTOR_NO_INPUT || ret == DOCTOR_HANG);
	FUZZ_CHECK(!memchr(out, 0, out_len) && !memchr(err, 0, err_len));
	fuzz_check_printed(out, out_len);
	fuzz_check_printed(err, err_len);
	FUZZ_CHECK((ret == DOCTOR_NO_INPUT) == (err_len > 0));
	if (fmt == HANG_MERGE_JSON && ret != DOCTOR_NO_INPUT) {
		struct json_budget big = {.limit = (size_t)1 << 40};
		struct json_value *v;
		size_t pos = 0;
		char why[256];

		FUZZ_CHECK(json_parse(out, out_len, &pos, &big, &v, why, sizeof(why)) == 0);
		FUZZ_CHECK(v->type == JSON_OBJECT);
		json_free(v);
	}
	free(out);
	free(err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;

	fuzz_reader(text, size);
	fuzz_fleet(text, size, false);
	fuzz_fleet(text, size, true);
	fuzz_hang(text, size, HANG_MERGE_TEXT);
	fuzz_hang(text, size, HANG_MERGE_JSON);
	fuzz_hang(text, size, HANG_MERGE_DOT);
	return 0;
}
