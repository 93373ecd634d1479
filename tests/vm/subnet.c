/* SPDX-License-Identifier: MIT */
/*
 * Subnet-aware device choice (NCCL_IB_SUBNET_AWARE_ROUTING, NCCL 2.30.7)
 * over rxe, --pairs 2: rxe0 (198.18.0.1) and rxe1 (198.18.0.2) are on
 * 198.18.0.0/24, rxe2 and rxe3 on 198.18.1.0/24, as two point-to-point
 * links without a switch. A listener on rxe0 and a connect NCCL gives rxe3:
 * with the setting, rxe1 connects instead and the bytes arrive; without it,
 * or with a prefix that makes both links one subnet, rxe3 stays.
 */
#include <stdlib.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define LISTEN_DEV  0 /* rxe0 */
#define CONNECT_DEV 3 /* rxe3: the other link's */

static const ncclNet_v7_t *net_up(void)
{
	static struct gdx_plugin plugin;

	gdx_plugin_load(&plugin);
	ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
	return plugin.v7;
}

static void test_connect_moves_to_the_listeners_subnet(void)
{
	const ncclNet_v7_t *n;
	struct gdx_pair p;

	/* NCCL's own names: the twins read them */
	setenv("NCCL_IB_SUBNET_AWARE_ROUTING", "1", 1);
	setenv("NCCL_IB_SUBNET_PREFIX_LEN", "24", 1);
	n = net_up();
	gdx_pair_connect(n, LISTEN_DEV, CONNECT_DEV, &p);
	ASSERT_STR_CONTAINS(
		gdx_test_infos(),
		"device 3 (rxe3) is not on the listener's subnets (::ffff:198.18.0.1/24");
	ASSERT_STR_CONTAINS(gdx_test_infos(), "device 1 (rxe1) is, and connects instead");
	ASSERT_STR_CONTAINS(gdx_test_infos(), "connected rxe1 to ");
	gdx_transfer(&p, 1 << 20, 1 << 20, 0, 7);
	gdx_transfer(&p, 4097, 8192, 3, 8);
	printf("  NCCL gave rxe3 (198.18.1.2) for a listener on rxe0 (198.18.0.1): rxe1 "
	       "(198.18.0.2) connected instead, 1 MiB and 4097 bytes arrived right\n");
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_off_by_default(void)
{
	const ncclNet_v7_t *n = net_up();
	struct gdx_pair p;

	gdx_pair_connect(n, LISTEN_DEV, CONNECT_DEV, &p);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "connected rxe3 to ");
	ASSERT(!strstr(gdx_test_infos(), "SUBNET_AWARE_ROUTING"));
	gdx_pair_close(&p);
}

static void test_one_subnet_keeps_the_device(void)
{
	const ncclNet_v7_t *n;
	struct gdx_pair p;

	setenv("NCCL_GDX_SUBNET_AWARE_ROUTING", "1", 1);
	setenv("NCCL_GDX_SUBNET_PREFIX_LEN", "16", 1); /* 198.18.0.0/16: both links */
	n = net_up();
	gdx_pair_connect(n, LISTEN_DEV, CONNECT_DEV, &p);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "connected rxe3 to ");
	ASSERT(!strstr(gdx_test_infos(), "connects instead"));
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

GDX_TESTS_MAIN(TEST(test_connect_moves_to_the_listeners_subnet, 120), TEST(test_off_by_default, 60),
	       TEST(test_one_subnet_keeps_the_device, 60))
