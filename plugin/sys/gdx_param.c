/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

struct gdx_params gdx_params;

const struct gdx_param_info gdx_param_infos[] = {
#define GDX_PARAM_INFO(type, field, name, def, twin, lo, hi, help) \
	{name, #type, def, twin, lo, hi, help, offsetof(struct gdx_params, field)},
	GDX_PARAM_TABLE(GDX_PARAM_INFO)
#undef GDX_PARAM_INFO
};
const int gdx_param_count = sizeof(gdx_param_infos) / sizeof(gdx_param_infos[0]);

const struct gdx_nccl_var gdx_nccl_vars[] = {
#define GDX_NCCL_VAR(name, def, kind, what) {name, def, GDX_NCCL_##kind, what},
	GDX_NCCL_IB_TABLE(GDX_NCCL_VAR)
#undef GDX_NCCL_VAR
};
const int gdx_nccl_var_count = sizeof(gdx_nccl_vars) / sizeof(gdx_nccl_vars[0]);
/* Where each value came from, indexed as gdx_param_infos. */
static enum gdx_param_src gdx_param_srcs[sizeof(gdx_param_infos) / sizeof(gdx_param_infos[0])];

const char *gdx_param_env(const char *name)
{
	char var[64] = "NCCL_GDX_";

	strncat(var, name, sizeof(var) - strlen(var) - 1);
	return getenv(var);
}

const char *gdx_param_twin_env(const struct gdx_param_info *p)
{
	const char *v = p->twin ? getenv(p->twin) : NULL;

	if (!v || !*v)
		return NULL;
	/* NCCL takes NCCL_SOCKET_IFNAME only when it is longer than one character */
	if (!strcmp(p->twin, "NCCL_SOCKET_IFNAME") && strlen(v) < 2)
		return NULL;
	return v;
}

/* NCCL's variables that are read only to say, once each load, that they
 * are not applied here and why: a site that set them keeps running. */
static void gdx_params_noted(void)
{
	for (int i = 0; i < gdx_nccl_var_count; i++) {
		const struct gdx_nccl_var *n = &gdx_nccl_vars[i];
		const char *v = n->kind == GDX_NCCL_noted ? getenv(n->name) : NULL;

		if (v && *v)
			GDX_INFO(NCCL_INIT | NCCL_ENV,
				 "%s=%s is NCCL's IB transport's and is not "
				 "applied by this plugin: %s",
				 n->name, v, n->what);
	}
}

enum gdx_param_src gdx_param_src(const char *name)
{
	for (int i = 0; i < gdx_param_count; i++)
		if (!strcmp(gdx_param_infos[i].name, name))
			return gdx_param_srcs[i];
	return GDX_PARAM_DEFAULT;
}

/* The variable a value came from, for messages. */
static void gdx_param_var(const struct gdx_param_info *p, enum gdx_param_src src, char *buf,
			  size_t len)
{
	if (src == GDX_PARAM_TWIN)
		snprintf(buf, len, "%s", p->twin);
	else
		snprintf(buf, len, "NCCL_GDX_%s", p->name);
}

/* Ours strictly (the whole string an integer); a twin as NCCL reads it:
 * strtoll base 0, what follows the digits ignored, the default on overflow. */
static int gdx_param_parse_int(const struct gdx_param_info *p, enum gdx_param_src src,
			       const char *s, int *out)
{
	char var[64], *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 0);
	if (src == GDX_PARAM_TWIN) {
		if (errno || v < INT_MIN || v > INT_MAX)
			v = strtoll(p->def, NULL, 0);
		*out = (int)v;
		return 0;
	}
	if (errno || end == s || *end != '\0' || v < INT_MIN || v > INT_MAX) {
		gdx_param_var(p, src, var, sizeof(var));
		GDX_WARN("%s=\"%s\" is not an integer", var, s);
		return -EINVAL;
	}
	*out = (int)v;
	return 0;
}

/* NCCL's values of a twin that its code reads as another: below min it
 * acts as min (NCCL gives up after the first failed attempt for any
 * NCCL_IB_RESILIENCY_PORT_RECOVERY_ATTEMPTS_MAX up to 1, where this
 * plugin's 0 means never). */
static const struct {
	const char *name;
	int min;
} gdx_param_twin_floors[] = {
	{"RECOVERY_ATTEMPTS", 1},
};

static int gdx_param_parse_twin_int(const struct gdx_param_info *p, const char *s, int *out)
{
	int ret = gdx_param_parse_int(p, GDX_PARAM_TWIN, s, out);

	for (size_t i = 0; i < sizeof(gdx_param_twin_floors) / sizeof(gdx_param_twin_floors[0]);
	     i++)
		if (!strcmp(gdx_param_twin_floors[i].name, p->name) &&
		    *out < gdx_param_twin_floors[i].min)
			*out = gdx_param_twin_floors[i].min;
	return ret;
}

/* 0 or 1; a twin as NCCL reads its switches, where any value but 0 is on. */
static int gdx_param_parse_bool(const struct gdx_param_info *p, enum gdx_param_src src,
				const char *s, int *out)
{
	int ret = gdx_param_parse_int(p, src, s, out);

	if (!ret && src == GDX_PARAM_TWIN)
		*out = *out != 0;
	return ret;
}

/* 4, 6, AF_INET or AF_INET6; a twin as NCCL reads NCCL_IB_ADDR_FAMILY,
 * where anything but AF_INET6 means AF_INET. */
static int gdx_param_parse_family(const struct gdx_param_info *p, enum gdx_param_src src,
				  const char *s, int *out)
{
	char var[64];

	if (!strcmp(s, "AF_INET6") || (src != GDX_PARAM_TWIN && !strcmp(s, "6"))) {
		*out = 6;
		return 0;
	}
	if (src == GDX_PARAM_TWIN || !strcmp(s, "AF_INET") || !strcmp(s, "4")) {
		*out = 4;
		return 0;
	}
	gdx_param_var(p, src, var, sizeof(var));
	GDX_WARN("%s=\"%s\" must be AF_INET or AF_INET6 (or 4, 6)", var, s);
	return -EINVAL;
}

static int gdx_param_parse_str(const struct gdx_param_info *p, enum gdx_param_src src,
			       const char *s, const char **out)
{
	(void)p;
	(void)src;
	*out = s;
	return 0;
}

/* An int outside its range: ours fails init (-EINVAL); a twin's gets the
 * default (1: the caller says the default is kept, not the value refused). */
static int gdx_param_check_range(const struct gdx_param_info *p, enum gdx_param_src src, int *field)
{
	char var[64];

	if (p->lo > p->hi || (*field >= p->lo && *field <= p->hi))
		return 0;
	gdx_param_var(p, src, var, sizeof(var));
	if (src == GDX_PARAM_TWIN) {
		GDX_WARN("%s=%d is outside %lld-%lld, which this plugin takes: using NCCL_GDX_%s's "
			 "default %s",
			 var, *field, p->lo, p->hi, p->name, p->def);
		*field = (int)strtoll(p->def, NULL, 0);
		return 1;
	}
	GDX_WARN("%s=%d is out of range %lld-%lld", var, *field, p->lo, p->hi);
	return -EINVAL;
}

/* Where parameter i's value comes from, and the string to parse. */
static const char *gdx_param_raw(int i, enum gdx_param_src *src)
{
	const struct gdx_param_info *p = &gdx_param_infos[i];
	const char *v = gdx_param_env(p->name);

	if (v) {
		*src = GDX_PARAM_OURS;
		return v;
	}
	v = gdx_param_twin_env(p);
	*src = v ? GDX_PARAM_TWIN : GDX_PARAM_DEFAULT;
	return v ? v : p->def;
}

/* An int twin is read as NCCL reads it, with its floors. */
static int gdx_param_parse_int_src(const struct gdx_param_info *p, enum gdx_param_src src,
				   const char *s, int *out)
{
	return src == GDX_PARAM_TWIN ? gdx_param_parse_twin_int(p, s, out)
				     : gdx_param_parse_int(p, src, s, out);
}

#define GDX_PARAM_PARSE_int    gdx_param_parse_int_src
#define GDX_PARAM_PARSE_bool   gdx_param_parse_bool
#define GDX_PARAM_PARSE_family gdx_param_parse_family
#define GDX_PARAM_PARSE_str    gdx_param_parse_str

#define GDX_PARAM_RANGE_int(p, src, field)    gdx_param_check_range(p, src, field)
#define GDX_PARAM_RANGE_bool(p, src, field)   gdx_param_check_range(p, src, field)
#define GDX_PARAM_RANGE_family(p, src, field) 0
#define GDX_PARAM_RANGE_str(p, src, field)    0

/* The INFO line of parameter i, whose value s came from src: the value
 * taken, or for a twin refused (range 1) the default kept. */
static void gdx_param_said(int i, enum gdx_param_src src, const char *s, int range)
{
	const struct gdx_param_info *p = &gdx_param_infos[i];

	if (range > 0) {
		gdx_param_srcs[i] = GDX_PARAM_TWIN_REFUSED;
		GDX_INFO(NCCL_ENV,
			 "NCCL_GDX_%s keeps its default %s: %s=%s is refused (outside %lld-%lld)",
			 p->name, p->def, p->twin, s, p->lo, p->hi);
	} else if (src != GDX_PARAM_DEFAULT) {
		GDX_INFO(NCCL_ENV, "NCCL_GDX_%s set by %s to %s", p->name,
			 src == GDX_PARAM_TWIN ? p->twin : "environment", s);
	}
}

int gdx_params_load(void)
{
	enum gdx_param_src src;
	int ret = 0, i = 0, range;
	const char *s;

#define GDX_PARAM_LOAD(type, field, name, def, twin, lo, hi, help)                             \
	s = gdx_param_raw(i, &src);                                                            \
	gdx_param_srcs[i] = src;                                                               \
	if (GDX_PARAM_PARSE_##type(&gdx_param_infos[i], src, s, &gdx_params.field) ||          \
	    (range = GDX_PARAM_RANGE_##type(&gdx_param_infos[i], src, &gdx_params.field)) < 0) \
		ret = -EINVAL;                                                                 \
	else                                                                                   \
		gdx_param_said(i, src, s, range);                                              \
	i++;
	GDX_PARAM_TABLE(GDX_PARAM_LOAD)
#undef GDX_PARAM_LOAD
	gdx_params_noted();
	return ret;
}
