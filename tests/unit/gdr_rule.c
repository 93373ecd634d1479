/* SPDX-License-Identifier: MIT */
/*
 * NCCL's GPUDirect distance rule by version (plugin/gdr/gdx_gdr_rule.h),
 * against what each NCCL's ncclTopoCheckGdr does (src/graph/paths.cc of
 * the tags named): one row per version, setting and pair, and the names
 * NCCL_NET_GDR_LEVEL takes in each.
 */
#include <stdlib.h>

#include "gdr/gdx_gdr_rule.h"

#include "gdx_test.h"

struct rule_row {
	int version;	   /* NCCL's code; 0 unknown */
	const char *c2c;   /* NCCL_NET_GDR_C2C, NULL unset */
	const char *level; /* NCCL_NET_GDR_LEVEL, NULL unset */
	enum gdx_path cls; /* this plugin's class of the pair */
	int gpu_c2c;	   /* 1, 0, -1 unknown */
	bool nearest;	   /* the NIC is among the GPU's nearest */
	enum gdx_nccl_path type;
	int within;
};

static const struct rule_row rows[] = {
	/* before 2.26: no C2C; a GPU's own CPU's NIC is PHB, beyond PXB */
	{22503, NULL, NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_PHB, 0},
	{22503, NULL, NULL, GDX_PATH_PIX, -1, true, GDX_NCCL_PIX, 1},
	{22503, "1", NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_PHB, 0},
	/* 2.26: NCCL_NET_GDR_C2C is 0 by default; set, PHB over C2C counts as C2C */
	{22602, NULL, NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_PHB, 0},
	{22602, "1", NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_PHB, 1},
	{22602, "1", NULL, GDX_PATH_NODE, 0, true, GDX_NCCL_PHB, 0},
	{22602, "1", NULL, GDX_PATH_NODE, -1, true, GDX_NCCL_PHB, -1},
	/* 2.27 and 2.28: typed P2C, the setting on by default */
	{22703, NULL, NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 1},
	{22703, NULL, NULL, GDX_PATH_NODE, 1, false, GDX_NCCL_P2C, 1},
	{22703, "0", NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 0},
	{22809, NULL, NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 1},
	{22809, NULL, NULL, GDX_PATH_NODE, 0, true, GDX_NCCL_PHB, 0},
	{22809, NULL, NULL, GDX_PATH_NODE, -1, true, GDX_NCCL_PHB, -1},
	{22809, NULL, NULL, GDX_PATH_SYS, 1, true, GDX_NCCL_SYS, 0},
	/* 2.28 counts P2C as C2C even against a level the user set to PXB ... */
	{22809, NULL, "PXB", GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 1},
	/* ... 2.29 compares P2C itself: beyond PXB */
	{22902, NULL, "PXB", GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 0},
	{22902, NULL, NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 1},
	{22902, "0", NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 0},
	/* 2.29 types only the GPU's nearest NICs P2C */
	{22902, NULL, NULL, GDX_PATH_NODE, 1, false, GDX_NCCL_PHB, 0},
	{22809, NULL, NULL, GDX_PATH_NODE, 1, false, GDX_NCCL_P2C, 1},
	/* the order of PXN and P2C changed in 2.27.5 */
	{22703, "0", "PXN", GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 0},
	{22707, "0", "PXN", GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 1},
	/* names: exact, the version's own, and the old numerals */
	{22809, NULL, "P2C", GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 1},
	{22503, NULL, "P2C", GDX_PATH_PXB, 0, true, GDX_NCCL_PXB, 1},
	{22809, NULL, "PIX", GDX_PATH_PXB, 0, true, GDX_NCCL_PXB, 0},
	{22809, NULL, "pix", GDX_PATH_PXB, 0, true, GDX_NCCL_PXB, 1},
	{22809, NULL, "3", GDX_PATH_NODE, 0, true, GDX_NCCL_PHB, 1},
	{22809, NULL, "9", GDX_PATH_SYS, 0, true, GDX_NCCL_SYS, 1},
	{22809, NULL, "1", GDX_PATH_PXB, 0, true, GDX_NCCL_PXB, 0},
	{22809, NULL, "PHB", GDX_PATH_NUMA_UNKNOWN, 0, true, GDX_NCCL_SYS, 0},
	/* NCCL_NET_GDR_C2C as ncclLoadParam reads it: "yes" is 0 */
	{22809, "yes", NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 0},
	{22809, "0x1", NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 1},
	/* unknown version: the newest rule */
	{0, NULL, NULL, GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 1},
	{0, NULL, "PXB", GDX_PATH_NODE, 1, true, GDX_NCCL_P2C, 0},
	/* no PCI device: no class, no verdict */
	{22809, NULL, NULL, GDX_PATH_UNKNOWN, 0, true, GDX_NCCL_UNKNOWN, -1},
};

static void set(const char *name, const char *value)
{
	if (value)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static void test_every_row(void)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct rule_row *r = &rows[i];
		struct gdx_gdr_rule rule;
		enum gdx_nccl_path type;
		int within;

		set("NCCL_NET_GDR_C2C", r->c2c);
		set("NCCL_NET_GDR_LEVEL", r->level);
		gdx_gdr_rule_init(&rule, r->version);
		within = gdx_gdr_rule_within(&rule, r->cls, r->gpu_c2c, r->nearest, &type);
		if (within != r->within || type != r->type)
			gdx_test_fail(__FILE__, __LINE__,
				      "row %zu (NCCL %d, C2C=%s, LEVEL=%s): %s within %d, want %s "
				      "within %d",
				      i, r->version, r->c2c ? r->c2c : "unset",
				      r->level ? r->level : "unset", gdx_nccl_path_name(type),
				      within, gdx_nccl_path_name(r->type), r->within);
	}
}

static void test_levels_in_words(void)
{
	struct gdx_gdr_rule rule;
	char buf[256];
	bool ignored;

	unsetenv("NCCL_NET_GDR_C2C");
	set("NCCL_NET_GDR_LEVEL", "C2C");
	gdx_gdr_rule_init(&rule, 22503); /* 2.25 has no C2C: ignored */
	ASSERT_EQ(gdx_gdr_rule_user_level(&rule, &ignored), -1);
	ASSERT(ignored);
	gdx_gdr_rule_level_why(&rule, buf, sizeof(buf));
	ASSERT_STR_CONTAINS(buf, "NCCL_NET_GDR_LEVEL=PXB (NCCL's default; it ignores "
				 "NCCL_NET_GDR_LEVEL=C2C)");
	gdx_gdr_rule_init(&rule, 22602);
	ASSERT_EQ(gdx_gdr_rule_user_level(&rule, &ignored), GDX_NCCL_C2C);
	gdx_gdr_rule_level_why(&rule, buf, sizeof(buf));
	ASSERT_STR_CONTAINS(buf, "NCCL_NET_GDR_LEVEL=C2C (set)");
	unsetenv("NCCL_NET_GDR_LEVEL");
	gdx_gdr_rule_init(&rule, 22902);
	gdx_gdr_rule_level_why(&rule, buf, sizeof(buf));
	ASSERT_STR_CONTAINS(buf, "NCCL_NET_GDR_LEVEL=P2C (NCCL's default with NCCL_NET_GDR_C2C=1)");
	gdx_gdr_rule_nccl(&rule, buf, sizeof(buf));
	ASSERT_STR_CONTAINS(buf, "NCCL 2.29.2");
	gdx_gdr_rule_init(&rule, 0);
	gdx_gdr_rule_nccl(&rule, buf, sizeof(buf));
	ASSERT_STR_CONTAINS(buf, "NCCL of unknown version (judged as 2.30)");
	ASSERT(gdx_gdr_rule_c2c(&rule));
	gdx_gdr_rule_init(&rule, 22503);
	ASSERT(!gdx_gdr_rule_c2c(&rule)); /* no such setting before 2.26 */
}

GDX_TESTS_MAIN(TEST(test_every_row, 10), TEST(test_levels_in_words, 10))
