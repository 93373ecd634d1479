/* SPDX-License-Identifier: MIT */
/* ECE negotiation (gdx_ece.c): what the acceptor sets from its own options
 * and the connector's, as net_ib negotiates them. */
#include "rail/gdx_ece.h"

#include "gdx_test.h"

static const struct gdx_wire_ece mlx = {
	.vendor_id = 0x2c9, .options = 0x30000000, .comp_mask = 0x3, .supported = 1};

static void test_common_subset(void)
{
	struct gdx_wire_ece peer = {.vendor_id = 0x2c9,
				    .options = 0x10000001,
				    .comp_mask = 0x1,
				    .supported = 1},
			    out;
	char buf[64];

	gdx_ece_common(&mlx, &peer, &out);
	ASSERT_EQ(out.supported, 1);
	ASSERT_EQ(out.vendor_id, 0x2c9);
	ASSERT_EQ(out.options, 0x10000000);
	ASSERT_EQ(out.comp_mask, 0x1);
	ASSERT_STR_CONTAINS(gdx_ece_str(&out, buf, sizeof(buf)), "options 0x10000000");
	/* in place, as gdx_setup.c calls it */
	out = mlx;
	gdx_ece_common(&out, &mlx, &out);
	ASSERT_EQ(out.options, mlx.options);
}

static void test_none_when_either_lacks_it(void)
{
	struct gdx_wire_ece off = {0}, other_vendor = mlx, out;
	char buf[64];

	gdx_ece_common(&mlx, &off, &out); /* rxe: the peer has none */
	ASSERT_EQ(out.supported, 0);
	ASSERT_EQ(out.options, 0);
	gdx_ece_common(&off, &mlx, &out);
	ASSERT_EQ(out.supported, 0);
	other_vendor.vendor_id = 0x1077;
	gdx_ece_common(&mlx, &other_vendor, &out);
	ASSERT_EQ(out.supported, 0);
	ASSERT_EQ(strcmp(gdx_ece_str(&out, buf, sizeof(buf)), "off"), 0);
}

GDX_TESTS_MAIN(TEST(test_common_subset, 5), TEST(test_none_when_either_lacks_it, 5))
