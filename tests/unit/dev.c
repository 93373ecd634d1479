/* SPDX-License-Identifier: MIT */
/* Port speeds as NCCL's topology takes them (Mbps): the active_speed x
 * width table, and sysfs's rate where the 8-bit active_speed cannot say it
 * (XDR is only in active_speed_ex). */
#include "dev/gdx_dev.h"
#include "dev/gdx_dev_speed.h"

#include "gdx_test.h"

static void test_speed_table(void)
{
	ASSERT_EQ(gdx_dev_speed_mbps(1, 1), 2500);	/* SDR 1x */
	ASSERT_EQ(gdx_dev_speed_mbps(32, 2), 100000);	/* EDR 4x */
	ASSERT_EQ(gdx_dev_speed_mbps(64, 2), 200000);	/* HDR 4x */
	ASSERT_EQ(gdx_dev_speed_mbps(128, 2), 400000);	/* NDR 4x */
	ASSERT_EQ(gdx_dev_speed_mbps(128, 16), 200000); /* NDR 2x */
	ASSERT_EQ(gdx_dev_speed_mbps(256, 2), 800000);	/* XDR 4x, from active_speed_ex */
	ASSERT_EQ(gdx_dev_speed_mbps(8, 1), 10000);	/* FDR10, as rxe reports */
	ASSERT_EQ(gdx_dev_speed_mbps(0, 2), 0);		/* XDR through the 8-bit field */
	ASSERT_EQ(gdx_dev_speed_mbps(3, 2), 0);
}

static void test_sysfs_rate(void)
{
	ASSERT_EQ(gdx_dev_rate_mbps("800 Gb/sec (4X XDR)"), 800000);
	ASSERT_EQ(gdx_dev_rate_mbps("400 Gb/sec (4X NDR)"), 400000);
	ASSERT_EQ(gdx_dev_rate_mbps("2.5 Gb/sec (1X SDR)"), 2500);
	ASSERT_EQ(gdx_dev_rate_mbps("10 Gb/sec (1X FDR10)"), 10000);
	ASSERT_EQ(gdx_dev_rate_mbps("0 Gb/sec"), 0);
	ASSERT_EQ(gdx_dev_rate_mbps("fast"), 0);
	ASSERT_EQ(gdx_dev_rate_mbps("100 Mb/sec"), 0);
	ASSERT_EQ(gdx_dev_rate_mbps(""), 0);
	ASSERT_EQ(gdx_dev_rate_mbps(NULL), 0);
}

GDX_TESTS_MAIN(TEST(test_speed_table, 5), TEST(test_sysfs_rate, 5))
