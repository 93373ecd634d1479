/* SPDX-License-Identifier: MIT */
/*
 * The conformance cases that need a fabric where every NIC reaches every
 * other (scripts/vm-run.sh --switch, rxe0-rxe3 and more on one bridge):
 * ends whose devices have different rail counts connect with
 * max(local, remote) QPs, as net_ib connects, and move verified bytes over
 * every NIC of the larger end. NCCL's view of it is in conformance.c.
 */
#include <stdio.h>
#include <stdlib.h>

#include "gdx_drv.h"
#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

static const size_t sizes[] = {0, 1, 4096, 65536, 1048577, 8388608};

static unsigned long long tx_bytes(int veth)
{
	char ifname[16];

	snprintf(ifname, sizeof(ifname), "veth%d", veth);
	return gdx_tx_bytes(ifname);
}

/* Transfers of every size through p; a striped one leaves by every veth of
 * the sending device's NICs (vethK carries rxeK). */
static void transfers(struct gdx_drv *d, struct gdx_dpair *p, const int *sending, int n)
{
	unsigned long long before[4];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		gdx_drv_transfer(d, p, sizes[i], (uint32_t)i, 0);
	for (int k = 0; k < n; k++)
		before[k] = tx_bytes(sending[k]);
	gdx_drv_transfer(d, p, 4 << 20, 99, 0);
	for (int k = 0; k < n; k++) {
		unsigned long long moved = tx_bytes(sending[k]) - before[k];

		printf("  a 4 MiB message: veth%d sent %llu bytes\n", sending[k], moved);
		ASSERT(moved > (1 << 20));
	}
}

/* v12: NCCL fuses one end (makeVDevice), the other is one NIC. Split
 * evenly, as net_ib splits, so that each NIC's quarter shows on its veth
 * (weighted striping is tests/vm/fabric.c's). */
static void test_rail_count_mismatch_connects(void)
{
	const int fused[] = {0, 2}, three[] = {0, 1, 2}, via02[] = {0, 2}, via012[] = {0, 1, 2};
	struct gdx_drv d;
	struct gdx_dpair p;
	int v = -1, w = -1;

	setenv("NCCL_GDX_STRIPE_WEIGHTED", "0", 1);
	gdx_drv_load(&d, 12);
	ASSERT_EQ(gdx_drv_make_vdevice(&d, &v, 2, fused), ncclSuccess);
	/* the fused end sends: two NICs to one */
	gdx_drv_pair(&d, 1, v, &p);
	transfers(&d, &p, via02, 2);
	gdx_drv_unpair(&d, &p);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "(2 NIC(s) here, 1 there: one rail per NIC of the "
					      "larger end)");
	ASSERT_STR_CONTAINS(gdx_test_infos(), "(1 NIC(s) here, 2 there");
	/* the fused end receives */
	gdx_drv_pair(&d, v, 3, &p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		gdx_drv_transfer(&d, &p, sizes[i], (uint32_t)i + 10, 0);
	gdx_drv_unpair(&d, &p);
	/* three to one */
	ASSERT_EQ(gdx_drv_make_vdevice(&d, &w, 3, three), ncclSuccess);
	gdx_drv_pair(&d, 3, w, &p);
	transfers(&d, &p, via012, 3);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	unsetenv("NCCL_GDX_STRIPE_WEIGHTED");
}

/* v7: fused at init on one end only (a node configured otherwise). */
static void test_rail_count_mismatch_fused_at_init_v7(void)
{
	const int via02[] = {0, 2};
	struct gdx_drv d;
	struct gdx_drv_props pr;
	struct gdx_dpair p;

	setenv("NCCL_GDX_RAILS", "rxe0+rxe2", 1);
	setenv("NCCL_GDX_STRIPE_WEIGHTED", "0", 1); /* as above */
	gdx_drv_load(&d, 7);
	/* rxe0+rxe2, then rxe1, rxe3, rxe4, ... */
	ASSERT_EQ(gdx_drv_devices(&d), 2 * atoi(getenv("GDX_VM_PAIRS") ?: "2") - 1);
	ASSERT_EQ(gdx_drv_props(&d, 0, &pr), ncclSuccess);
	ASSERT_EQ(strcmp(pr.name, "rxe0+rxe2"), 0);
	gdx_drv_pair(&d, 1, 0, &p);
	transfers(&d, &p, via02, 2);
	gdx_drv_unpair(&d, &p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	unsetenv("NCCL_GDX_RAILS");
	unsetenv("NCCL_GDX_STRIPE_WEIGHTED");
}

GDX_TESTS_MAIN(TEST(test_rail_count_mismatch_connects, 180),
	       TEST(test_rail_count_mismatch_fused_at_init_v7, 120))
