/* SPDX-License-Identifier: MIT */
/*
 * Fused devices over two real rxe rails: NCCL_GDX_RAILS=rxe0+rxe2,rxe1+rxe3
 * (rail 0 over the veth0/veth1 pair, rail 1 over veth2/veth3), through the
 * v7 table, where the plugin fuses at init and the members are no devices
 * of their own. Every byte verified; each veth's counters show that a
 * striped message really went over both wires. Runs inside the VM with
 * --pairs 2.
 */
#include <stdlib.h>

#include "gdx_pair.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

/* Each group where its first member was: rxe0+rxe2, then rxe1+rxe3. */
#define FUSED_LISTEN  0
#define FUSED_CONNECT 1

static const ncclNet_v7_t *net_up(const char *rails)
{
	static struct gdx_plugin plugin;
	int ndev = 0;

	setenv("NCCL_GDX_RAILS", rails, 1);
	gdx_plugin_load(&plugin);
	ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
	ASSERT_EQ(plugin.v7->devices(&ndev), ncclSuccess);
	ASSERT_EQ(ndev, 2);
	return plugin.v7;
}

static void test_fused_properties(void)
{
	const ncclNet_v7_t *n = net_up("rxe0+rxe2,rxe1+rxe3");
	ncclNetProperties_v7_t f, g;

	ASSERT_EQ(n->getProperties(FUSED_LISTEN, &f), ncclSuccess);
	ASSERT_EQ(n->getProperties(FUSED_CONNECT, &g), ncclSuccess);
	ASSERT_EQ(strcmp(f.name, "rxe0+rxe2"), 0);
	ASSERT_EQ(strcmp(g.name, "rxe1+rxe3"), 0);
	/* the sum of its members' speeds (rxe: 10 Gb/s each), the lead's guid,
	 * and two devices are two NICs to NCCL */
	ASSERT_EQ(f.speed, 20000);
	ASSERT(f.guid != g.guid || f.port != g.port);
	ASSERT(f.pciPath == NULL);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "device 0: rxe0+rxe2, 2 rails, 20000 Mbps");
	ASSERT_STR_CONTAINS(gdx_test_infos(), "device 1: rxe1+rxe3, 2 rails");
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static const size_t sizes[] = {0,     1,      127,     128,	129,	 4097,	   65535,   65536,
			       65537, 131072, 1000001, 1048576, 4194305, 16777216, 67108863};

static void test_striped_all_sizes(void)
{
	const ncclNet_v7_t *n = net_up("rxe0+rxe2,rxe1+rxe3");
	struct gdx_pair p;

	gdx_pair_connect(n, FUSED_LISTEN, FUSED_CONNECT, &p);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		gdx_transfer(&p, sizes[i], sizes[i], i % 4, (uint32_t)i + 1000);
	/* a receive larger than the send, striped by the receive's size */
	gdx_transfer(&p, 70001, 1 << 20, 0, 77);
	gdx_pair_close(&p);
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_stripe_crosses_both_wires(void)
{
	const ncclNet_v7_t *n = net_up("rxe0+rxe2,rxe1+rxe3");
	unsigned long long r0, r1;
	struct gdx_pair p;

	gdx_pair_connect(n, FUSED_LISTEN, FUSED_CONNECT, &p);
	/* The sender is rxe1+rxe3: its bytes leave through veth1 and veth3. */
	r0 = gdx_tx_bytes("veth1");
	r1 = gdx_tx_bytes("veth3");
	gdx_transfer(&p, 32 << 20, 32 << 20, 0, 5);
	r0 = gdx_tx_bytes("veth1") - r0;
	r1 = gdx_tx_bytes("veth3") - r1;
	printf("  32 MiB striped: %llu bytes out of veth1, %llu out of veth3\n", r0, r1);
	ASSERT(r0 > (15ull << 20) && r1 > (15ull << 20));
	gdx_pair_close(&p);
}

static void test_small_messages_take_turns(void)
{
	const ncclNet_v7_t *n;
	struct gdx_pair p;

	setenv("NCCL_GDX_STRIPE_MIN", "1000000", 1);
	n = net_up("rxe0+rxe2,rxe1+rxe3");
	gdx_pair_connect(n, FUSED_LISTEN, FUSED_CONNECT, &p);
	/* Below the threshold each message goes whole over one rail, in turn
	 * while the rails look equal: the first two, before either has been
	 * measured (a rail measured slower than its port's speed gives the next
	 * turn to the other). After that the faster takes more, as a host
	 * busy with something else makes one of the emulated rails. */
	for (int i = 0; i < 4; i++) {
		unsigned long long r0 = gdx_tx_bytes("veth1"), r1 = gdx_tx_bytes("veth3");

		gdx_transfer(&p, 200000, 200000, 0, (uint32_t)i);
		r0 = gdx_tx_bytes("veth1") - r0;
		r1 = gdx_tx_bytes("veth3") - r1;
		printf("  message %d, 200 kB: %llu bytes out of veth1, %llu out of veth3\n", i, r0,
		       r1);
		if (i < 2)
			ASSERT(i == 0 ? (r0 > 200000 && r1 < 20000) : (r1 > 200000 && r0 < 20000));
		else
			ASSERT((r0 > 200000 && r1 < 20000) || (r1 > 200000 && r0 < 20000));
	}
	gdx_pair_close(&p);
}

/* One group: it takes its first member's place; the other NICs keep theirs. */
static void test_one_group_numbering(void)
{
	static struct gdx_plugin plugin;
	ncclNetProperties_v7_t p;
	int ndev = 0;
	static const char *const names[] = {"rxe0+rxe2", "rxe1", "rxe3"};

	setenv("NCCL_GDX_RAILS", "rxe0+rxe2", 1);
	gdx_plugin_load(&plugin);
	ASSERT_EQ(plugin.v7->init(gdx_test_logger), ncclSuccess);
	ASSERT_EQ(plugin.v7->devices(&ndev), ncclSuccess);
	ASSERT_EQ(ndev, 3);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(plugin.v7->getProperties(i, &p), ncclSuccess);
		ASSERT_EQ(strcmp(p.name, names[i]), 0);
	}
	ASSERT_EQ(gdx_test_warning_count(), 0);
}

static void test_bad_rails_spec_fails_init(void)
{
	static const char *const bad[][2] = {
		{"rxe0+nosuch", "no active device \"nosuch\""},
		{"rxe0+rxe0", "listed twice"},
		{"rxe0", "at least 2 members"},
		{"rxe0+rxe1,,rxe2+rxe3", "empty group"},
		{"rxe0+rxe1,rxe1+rxe2", "in two groups"},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct gdx_plugin plugin;

		gdx_test_log_clear();
		setenv("NCCL_GDX_RAILS", bad[i][0], 1);
		gdx_plugin_load(&plugin);
		ASSERT_NE(plugin.v7->init(gdx_test_logger), ncclSuccess);
		ASSERT_STR_CONTAINS(gdx_test_warnings(), bad[i][1]);
		gdx_plugin_unload(&plugin);
	}
}

GDX_TESTS_MAIN(TEST(test_fused_properties, 30), TEST(test_striped_all_sizes, 600),
	       TEST(test_stripe_crosses_both_wires, 300), TEST(test_small_messages_take_turns, 300),
	       TEST(test_one_group_numbering, 60), TEST(test_bad_rails_spec_fails_init, 60))
