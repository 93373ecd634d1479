/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sys/gdx_name_list.h"

/* One number field of "name:port:rail:plane" ([s, s + len)); empty is -1. */
static int gdx_name_list_field(const char *s, size_t len, long lo, long hi, int *out)
{
	long v = 0;

	if (len == 0) {
		*out = -1;
		return 0;
	}
	if (len > 5)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
	}
	if (v < lo || v > hi)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

static int gdx_name_list_entry_parse(const char *s, size_t len, bool with_ports,
				     struct gdx_name_list_entry *e, const char **err_p)
{
	static const struct {
		long lo, hi;
		const char *err;
	} fields[] = {
		{1, 255, "bad port number (1-255)"},
		{0, 32767, "bad rail id (0-32767)"},
		{0, 32767, "bad plane id (0-32767)"},
	};
	const char *colon = with_ports ? memchr(s, ':', len) : NULL;
	size_t name_len = colon ? (size_t)(colon - s) : len;
	int *outs[] = {&e->port, &e->rail, &e->plane};

	if (name_len == 0) {
		*err_p = "empty device name";
		return -EINVAL;
	}
	if (name_len >= GDX_NAME_LIST_NAME_MAX) {
		*err_p = "device name too long";
		return -EINVAL;
	}
	memcpy(e->name, s, name_len);
	e->name[name_len] = '\0';
	e->port = e->rail = e->plane = -1;
	/* NCCL_IB_HCA's name[:port[:rail[:plane]]]; an empty field is "any" / none */
	for (int f = 0; colon && f < 3; f++) {
		const char *p = colon + 1, *end = s + len;
		const char *next = memchr(p, ':', (size_t)(end - p));
		size_t flen = (size_t)((next ? next : end) - p);

		if (gdx_name_list_field(p, flen, fields[f].lo, fields[f].hi, outs[f])) {
			*err_p = fields[f].err;
			return -EINVAL;
		}
		colon = next;
	}
	if (colon) {
		*err_p = "more than name:port:rail:plane";
		return -EINVAL;
	}
	return 0;
}

int gdx_name_list_parse(const char *spec, bool with_ports, struct gdx_name_list *f,
			const char **err_p)
{
	const char *s = spec ? spec : "";

	memset(f, 0, sizeof(*f));
	if (*s == '^') {
		f->exclude = true;
		s++;
	}
	if (*s == '=') {
		f->exact = true;
		s++;
	}
	if (*s == '\0') {
		if (f->exclude || f->exact) {
			*err_p = "no device after '^' or '='";
			return -EINVAL;
		}
		return 0;
	}
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		int ret;

		if (f->n == GDX_NAME_LIST_MAX) {
			*err_p = "more than 32 devices listed";
			return -EINVAL;
		}
		ret = gdx_name_list_entry_parse(s, len, with_ports, &f->entries[f->n], err_p);
		if (ret)
			return ret;
		f->n++;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

static bool gdx_name_list_entry_match(const struct gdx_name_list_entry *e, bool exact,
				      const char *dev, int port)
{
	bool name_ok =
		exact ? strcmp(e->name, dev) == 0 : strncmp(e->name, dev, strlen(e->name)) == 0;

	return name_ok && (e->port == -1 || e->port == port);
}

const struct gdx_name_list_entry *gdx_name_list_find(const struct gdx_name_list *f, const char *dev,
						     int port)
{
	for (int i = 0; i < f->n; i++)
		if (gdx_name_list_entry_match(&f->entries[i], f->exact, dev, port))
			return &f->entries[i];
	return NULL;
}

bool gdx_name_list_match(const struct gdx_name_list *f, const char *dev, int port)
{
	bool listed;

	if (f->n == 0)
		return true;
	listed = gdx_name_list_find(f, dev, port) != NULL;
	return f->exclude ? !listed : listed;
}
