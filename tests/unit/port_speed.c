/* SPDX-License-Identifier: MIT */
/*
 * A port's speed, queried and followed (gdx_dev.c, gdx_event.c), on scripted
 * verbs: ibv_query_port_speed where the library has it, the active_speed
 * table where it has not; and IBV_EVENT_DEVICE_SPEED_CHANGE (rdma-core 57,
 * a LAG member lost without a link flap), after which the port's device
 * says its new speed, one line says so, and a comm's rail on it carries a
 * share scaled as the speed was.
 */
#include "dev/gdx_dev.h"
#include "dev/gdx_dev_speed.h"
#include "rail/gdx_event.h"
#include "rail/gdx_stripe.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

/* rdma-core 57's event number, which older headers lack */
#define SPEED_CHANGE ((enum ibv_event_type)(IBV_EVENT_WQ_FATAL + 1))

static void test_query_then_table(void)
{
	struct ibv_port_attr pa = {.active_speed = 64 /* HDR */, .active_width = 2 /* 4x */};
	struct ibv_context ctx;

	fake_init();
	fake_port_speed(4000); /* 400 Gb/s, whatever the attributes say */
	ASSERT_EQ(gdx_dev_port_speed(&ctx, "fake0", 1, &pa), 400000);
	fake_port_speed(0); /* an older libibverbs: NCCL's table */
	ASSERT_EQ(gdx_dev_port_speed(&ctx, "fake0", 1, &pa), 200000);
}

static void test_speed_change_event(void)
{
	struct fake_pair p;
	struct gdx_comm *c;
	double rate0, rate1;

	setenv("NCCL_GDX_STRIPE_WEIGHTED", "1", 1);
	fake_init();
	fake_port_speed(0);
	fake_pair_make(&p, &(struct fake_opts){.nrails = 2, .nqps = 1});
	c = p.s.c;
	rate0 = c->ch.run[0].rate;
	rate1 = c->ch.run[1].rate;
	ASSERT_EQ(c->ch.rails[0].dev->speed_mbps, 100000);
	gdx_test_log_clear();

	/* an event for another port changes nothing */
	fake_port_speed(500);
	fake_async_event(SPEED_CHANGE, 2);
	gdx_event_poll(&c->ch, true);
	ASSERT_EQ(c->ch.rails[0].dev->speed_mbps, 100000);
	ASSERT(c->ch.run[0].rate == rate0);

	/* rail 0's port drops to 50 Gb/s: one WARN, its share halves */
	fake_async_event(SPEED_CHANGE, 1);
	gdx_event_poll(&c->ch, true);
	ASSERT_EQ(c->ch.rails[0].dev->speed_mbps, 50000);
	ASSERT_STR_CONTAINS(gdx_test_warnings(),
			    "fake0 port 1: speed changed from 100000 to 50000");
	ASSERT(c->ch.run[0].rate > rate0 * 0.499 && c->ch.run[0].rate < rate0 * 0.501);
	ASSERT(c->ch.run[1].rate == rate1);
	/* the receive comm's rail on the same device follows at its poll */
	gdx_event_poll(&p.r.c->ch, true);
	ASSERT_EQ(p.r.c->ch.run[0].speed_mbps, 50000);

	/* back to 100 Gb/s: an INFO line, no WARN, the share back */
	gdx_test_log_clear();
	fake_port_speed(1000);
	fake_async_event(SPEED_CHANGE, 1);
	gdx_event_poll(&c->ch, true);
	ASSERT_EQ(c->ch.rails[0].dev->speed_mbps, 100000);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "speed changed from 50000 to 100000");
	ASSERT_EQ(gdx_test_warning_count(), 0);
	ASSERT(c->ch.run[0].rate > rate0 * 0.999 && c->ch.run[0].rate < rate0 * 1.001);
	fake_pair_free(&p);
}

GDX_TESTS_MAIN(TEST(test_query_then_table, 10), TEST(test_speed_change_event, 10))
