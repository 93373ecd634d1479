/* SPDX-License-Identifier: MIT */
/* NCCL's GPUDirect RDMA distance rule by NCCL version (gdx_gdr_rule.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gdr/gdx_gdr_rule.h"
#include "sys/gdx_env.h"

static const char *const gdx_nccl_path_names[GDX_NCCL_NPATHS] = {
	"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS",
};

const char *gdx_nccl_path_name(enum gdx_nccl_path p)
{
	return p >= 0 && p < GDX_NCCL_NPATHS ? gdx_nccl_path_names[p] : "?";
}

static int gdx_gdr_rule_version(const struct gdx_gdr_rule *r)
{
	return r->version > 0 ? r->version : GDX_GDR_RULE_NEWEST;
}

/*
 * The place of a path type in that version's table, which is the order
 * NCCL compares with; -1 when the version has no such type. C2C from 2.26,
 * P2C from 2.27 (after PXN in 2.27.3, before it from 2.27.5), PXN from 2.12.
 */
static int gdx_nccl_path_rank(enum gdx_nccl_path p, int v)
{
	static const enum gdx_nccl_path v2273[] = {
		GDX_NCCL_LOC, GDX_NCCL_NVL, GDX_NCCL_NVB, GDX_NCCL_C2C, GDX_NCCL_PIX,
		GDX_NCCL_PXB, GDX_NCCL_PXN, GDX_NCCL_P2C, GDX_NCCL_PHB, GDX_NCCL_SYS,
	};
	int rank = 0;

	if (v >= 22700 && v < 22705) {
		for (size_t i = 0; i < sizeof(v2273) / sizeof(v2273[0]); i++)
			if (v2273[i] == p)
				return (int)i;
		return -1;
	}
	for (int t = 0; t < GDX_NCCL_NPATHS; t++) {
		bool has = !((t == GDX_NCCL_C2C && v < 22600) || (t == GDX_NCCL_P2C && v < 22700) ||
			     (t == GDX_NCCL_PXN && v < 21200));

		if (t == (int)p)
			return has ? rank : -1;
		rank += has;
	}
	return -1;
}

void gdx_gdr_rule_init(struct gdx_gdr_rule *r, int version)
{
	const char *level = gdx_env(GDX_ENV_NET_GDR_LEVEL);
	const char *c2c = gdx_env(GDX_ENV_NET_GDR_C2C);

	memset(r, 0, sizeof(*r));
	r->version = version > 0 ? version : 0;
	snprintf(r->level_env, sizeof(r->level_env), "%s", level ? level : "");
	if (c2c) {
		/* ncclLoadParam: strtoll with base 0, the default only on ERANGE;
		 * "yes" reads as 0. */
		errno = 0;
		r->c2c = strtoll(c2c, NULL, 0);
		r->c2c_set = errno == 0;
	}
}

bool gdx_gdr_rule_c2c(const struct gdx_gdr_rule *r)
{
	int v = gdx_gdr_rule_version(r);

	if (v < 22600)
		return false;
	if (r->c2c_set)
		return r->c2c != 0;
	return v >= 22700;
}

int gdx_gdr_rule_user_level(const struct gdx_gdr_rule *r, bool *ignored)
{
	/* ncclGetLevel: an exact name up to SYS, else a leading digit's old
	 * numbering (0 LOC, 1 PIX, 2 PXB, 3 PHB, 4 and above SYS). */
	static const enum gdx_nccl_path old[] = {GDX_NCCL_LOC, GDX_NCCL_PIX, GDX_NCCL_PXB,
						 GDX_NCCL_PHB, GDX_NCCL_SYS};
	const char *s = r->level_env;
	int v = gdx_gdr_rule_version(r);

	if (ignored)
		*ignored = false;
	if (!s[0])
		return -1;
	for (int t = 0; t < GDX_NCCL_NPATHS; t++)
		if (gdx_nccl_path_rank((enum gdx_nccl_path)t, v) >= 0 &&
		    !strcmp(s, gdx_nccl_path_names[t]))
			return t;
	if (s[0] >= '0' && s[0] <= '9') {
		long n = strtol(s, NULL, 0);

		return (int)old[n < 0 || n > 4 ? 4 : n];
	}
	if (ignored)
		*ignored = true;
	return -1;
}

enum gdx_nccl_path gdx_gdr_rule_level(const struct gdx_gdr_rule *r)
{
	int user = gdx_gdr_rule_user_level(r, NULL);

	if (user >= 0)
		return (enum gdx_nccl_path)user;
	return gdx_gdr_rule_version(r) >= 22900 && gdx_gdr_rule_c2c(r) ? GDX_NCCL_P2C
								       : GDX_NCCL_PXB;
}

/*
 * The path type NCCL computes for a pair of this plugin's class, c2c being
 * whether the GPU is on NVLink-C2C to its CPU (1, 0) and nearest whether
 * the NIC is among the GPU's nearest (NCCL 2.29 types only those P2C).
 */
static enum gdx_nccl_path gdx_gdr_rule_class(const struct gdx_gdr_rule *r, enum gdx_path cls,
					     int c2c, bool nearest)
{
	int v = gdx_gdr_rule_version(r);

	switch (cls) {
	case GDX_PATH_PIX: return GDX_NCCL_PIX;
	case GDX_PATH_PXB: return GDX_NCCL_PXB;
	case GDX_PATH_PHB:
	case GDX_PATH_NODE:
		/* Through the GPU's CPU: P2C when the GPU reaches it over C2C. */
		if (c2c == 1 && v >= 22700 && (v < 22900 || nearest))
			return GDX_NCCL_P2C;
		return GDX_NCCL_PHB;
	/* NODE or SYS, hwloc does not say: NCCL's verdict is staged either way. */
	case GDX_PATH_NUMA_UNKNOWN:
	case GDX_PATH_SYS: return GDX_NCCL_SYS;
	default: return GDX_NCCL_UNKNOWN;
	}
}

/* The same with C2C known. */
static int gdx_gdr_rule_within_known(const struct gdx_gdr_rule *r, enum gdx_path cls, int c2c,
				     bool nearest, enum gdx_nccl_path *type_p)
{
	int v = gdx_gdr_rule_version(r);
	enum gdx_nccl_path t = gdx_gdr_rule_class(r, cls, c2c, nearest), d = t;

	*type_p = t;
	if (t == GDX_NCCL_UNKNOWN)
		return -1;
	/* 2.26 to 2.28 count a C2C pair as C2C against the level. */
	if (gdx_gdr_rule_c2c(r) && ((v < 22700 && t == GDX_NCCL_PHB && c2c == 1) ||
				    (v >= 22700 && v < 22900 && t == GDX_NCCL_P2C)))
		d = GDX_NCCL_C2C;
	return gdx_nccl_path_rank(d, v) <= gdx_nccl_path_rank(gdx_gdr_rule_level(r), v);
}

int gdx_gdr_rule_within(const struct gdx_gdr_rule *r, enum gdx_path cls, int c2c, bool nearest,
			enum gdx_nccl_path *type_p)
{
	enum gdx_nccl_path with;
	int yes, no;

	if (c2c >= 0)
		return gdx_gdr_rule_within_known(r, cls, c2c, nearest, type_p);
	no = gdx_gdr_rule_within_known(r, cls, 0, nearest, type_p);
	yes = gdx_gdr_rule_within_known(r, cls, 1, nearest, &with);
	return yes == no ? no : -1;
}

void gdx_gdr_rule_nccl(const struct gdx_gdr_rule *r, char *buf, size_t len)
{
	int v = gdx_gdr_rule_version(r);

	if (r->version > 0)
		snprintf(buf, len, "NCCL %d.%d.%d", v / 10000, v / 100 % 100, v % 100);
	else
		snprintf(buf, len, "NCCL of unknown version (judged as %d.%d)", v / 10000,
			 v / 100 % 100);
}

void gdx_gdr_rule_level_why(const struct gdx_gdr_rule *r, char *buf, size_t len)
{
	bool ignored;
	int user = gdx_gdr_rule_user_level(r, &ignored);
	int v = gdx_gdr_rule_version(r);
	const char *level = gdx_nccl_path_name(gdx_gdr_rule_level(r));

	if (user >= 0)
		snprintf(buf, len, "NCCL_NET_GDR_LEVEL=%s (set)", level);
	else
		snprintf(buf, len, "NCCL_NET_GDR_LEVEL=%s (NCCL's default%s%s%s)", level,
			 v >= 22900 ? (gdx_gdr_rule_c2c(r) ? " with NCCL_NET_GDR_C2C=1"
							   : " with NCCL_NET_GDR_C2C=0")
				    : "",
			 ignored ? "; it ignores NCCL_NET_GDR_LEVEL=" : "",
			 ignored ? r->level_env : "");
}
