/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <gdx/gdx_hca.h>

static int gdx_hca_entry_parse(const char *s, size_t len, bool with_ports, struct gdx_hca_entry *e,
			       const char **err_p)
{
	const char *colon = with_ports ? memchr(s, ':', len) : NULL;
	size_t name_len = colon ? (size_t)(colon - s) : len;

	if (name_len == 0) {
		*err_p = "empty device name";
		return -EINVAL;
	}
	if (name_len >= GDX_HCA_NAME_MAX) {
		*err_p = "device name too long";
		return -EINVAL;
	}
	memcpy(e->name, s, name_len);
	e->name[name_len] = '\0';
	e->port = -1;
	if (colon) {
		const char *p = colon + 1;
		size_t plen = len - name_len - 1;
		long port = 0;

		if (plen == 0 || plen > 3) {
			*err_p = "bad port number";
			return -EINVAL;
		}
		for (size_t i = 0; i < plen; i++) {
			if (p[i] < '0' || p[i] > '9') {
				*err_p = "bad port number";
				return -EINVAL;
			}
			port = port * 10 + (p[i] - '0');
		}
		if (port < 1 || port > 255) {
			*err_p = "port number out of range 1-255";
			return -EINVAL;
		}
		e->port = (int)port;
	}
	return 0;
}

int gdx_hca_filter_parse(const char *spec, bool with_ports, struct gdx_hca_filter *f,
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

		if (f->n == GDX_HCA_MAX_ENTRIES) {
			*err_p = "more than 32 devices listed";
			return -EINVAL;
		}
		ret = gdx_hca_entry_parse(s, len, with_ports, &f->entries[f->n], err_p);
		if (ret)
			return ret;
		f->n++;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

static bool gdx_hca_entry_match(const struct gdx_hca_entry *e, bool exact, const char *dev,
				int port)
{
	bool name_ok =
		exact ? strcmp(e->name, dev) == 0 : strncmp(e->name, dev, strlen(e->name)) == 0;

	return name_ok && (e->port == -1 || e->port == port);
}

bool gdx_hca_filter_match(const struct gdx_hca_filter *f, const char *dev, int port)
{
	bool listed = false;

	if (f->n == 0)
		return true;
	for (int i = 0; i < f->n && !listed; i++)
		listed = gdx_hca_entry_match(&f->entries[i], f->exact, dev, port);
	return f->exclude ? !listed : listed;
}
