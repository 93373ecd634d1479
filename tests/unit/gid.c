/* SPDX-License-Identifier: MIT */
/* RoCE GID choice from fixture sysfs trees. */
#include <errno.h>

#include "dev/gdx_gid.h"

#include "gdx_test.h"

#define ROOT "tests/lib/fixtures/sysfs-roce"

static int choose(const char *dev, int family, int version)
{
	struct gdx_gid_entry t[GDX_GID_TABLE_MAX];
	int n = gdx_gid_read_table(ROOT, dev, 1, t, GDX_GID_TABLE_MAX);
	int best;

	ASSERT(n > 0);
	best = gdx_gid_choose(t, n, family, version, NULL);
	return best < 0 ? -1 : t[best].index;
}

static void test_read_table_skips_unpopulated(void)
{
	struct gdx_gid_entry t[GDX_GID_TABLE_MAX];
	int n = gdx_gid_read_table(ROOT, "rxe0", 1, t, GDX_GID_TABLE_MAX);

	ASSERT_EQ(n, 4);
	ASSERT_EQ(t[3].index, 3);
	ASSERT_EQ(t[3].roce_version, 2);
	ASSERT_EQ(t[0].roce_version, 1);
	ASSERT(gdx_gid_is_ipv4(t[3].raw));
	ASSERT_EQ(t[3].raw[12], 198);
	ASSERT_EQ(t[3].raw[13], 18);
	ASSERT(gdx_gid_is_link_local(t[0].raw));
}

static void test_rxe_prefers_v2_ipv4(void)
{
	ASSERT_EQ(choose("rxe0", 4, 2), 3);
	ASSERT_EQ(choose("rxe0", 4, 1), 2);
	/* A routable GID wins over a link-local one of the preferred family. */
	ASSERT_EQ(choose("rxe0", 6, 2), 3);
}

static void test_ipv6_only_v2(void)
{
	ASSERT_EQ(choose("roce6", 4, 2), 1);
	ASSERT_EQ(choose("roce6", 6, 2), 1);
	ASSERT_EQ(choose("roce6", 4, 1), 2);
}

static void test_link_local_is_last_resort(void)
{
	ASSERT_EQ(choose("ll", 4, 2), 0);
}

static void test_missing_device(void)
{
	struct gdx_gid_entry t[4];

	ASSERT_EQ(gdx_gid_read_table(ROOT, "nosuchdev", 1, t, 4), -ENOENT);
	ASSERT_EQ(gdx_gid_choose(t, 0, 4, 2, NULL), -1);
}

static void test_all_zero_table(void)
{
	struct gdx_gid_entry t[2];

	memset(t, 0, sizeof(t));
	t[1].index = 1;
	ASSERT_EQ(gdx_gid_choose(t, 2, 4, 2, NULL), -1);
}

static void test_parse(void)
{
	uint8_t raw[16];
	char s[64];

	ASSERT_EQ(gdx_gid_parse("0000:0000:0000:0000:0000:ffff:c612:0001", raw), 0);
	gdx_gid_str(raw, s, sizeof(s));
	ASSERT_STR_CONTAINS(s, "198.18.0.1");
	ASSERT_NE(gdx_gid_parse("fe80::1", raw), 0);
	ASSERT_NE(gdx_gid_parse("", raw), 0);
}

GDX_TESTS_MAIN(TEST(test_read_table_skips_unpopulated, 5), TEST(test_rxe_prefers_v2_ipv4, 5),
	       TEST(test_ipv6_only_v2, 5), TEST(test_link_local_is_last_resort, 5),
	       TEST(test_missing_device, 5), TEST(test_all_zero_table, 5), TEST(test_parse, 5))
