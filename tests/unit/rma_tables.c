/* SPDX-License-Identifier: MIT */
/*
 * The RMA tables of the built .so as NCCL finds them (ncclRmaPlugin_v14,
 * _v15, _v16 in the net plugin's library), on this machine with no RDMA
 * device: each is complete, and with NCCL_GDX_RMA unset its init declines,
 * touching nothing, with one INFO line saying how to turn it on and no
 * WARN (NCCL then keeps its own RMA proxy); with NCCL_GDX_RMA=1 init gets
 * as far as the devices, whose absence the net's WARN names.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "gdx_plugin_loader.h"
#include "gdx_rma_drv.h"
#include "gdx_test.h"

static void test_tables_are_complete(void)
{
	for (int v = 14; v <= 16; v++) {
		struct gdx_rdrv d;
		const ncclRma_v14_t *t;

		gdx_rdrv_open(&d, v);
		t = d.table;
		ASSERT_EQ(strcmp(t->name, "GDX"), 0);
		if (v == 16) {
			const ncclRma_v16_t *s = d.table;

			ASSERT(s->getRmaProperties && s->getProperties && s->iput && s->finalize);
			ASSERT(s->rmaProgress && s->queryLastError);
		} else {
			ASSERT(t->init && t->devices && t->getProperties && t->listen &&
			       t->connect && t->createContext && t->regMrSym && t->regMrSymDmaBuf &&
			       t->deregMrSym && t->destroyContext && t->closeColl &&
			       t->closeListen && t->iput && t->iputSignal && t->iget && t->iflush &&
			       t->test && t->rmaProgress && t->queryLastError && t->finalize);
		}
		dlclose(d.lib);
	}
}

static void test_init_declines_unless_asked(void)
{
	const char *line = "set NCCL_GDX_RMA=1 to carry it over this plugin's rails";

	struct gdx_rdrv ds[3];

	unsetenv("NCCL_GDX_RMA");
	gdx_test_log_clear();
	/* one load (each table, then init again, as NCCL inits per comm) */
	for (int i = 0; i < 6; i++) {
		struct gdx_rdrv *d = &ds[i % 3];

		if (i < 3)
			gdx_rdrv_open(d, 14 + i);
		ASSERT_NE(gdx_rdrv_init(d, 0x37), ncclSuccess);
		ASSERT(d->ctx == NULL);
	}
	for (int i = 0; i < 3; i++)
		dlclose(ds[i].lib);
	/* one line for the load, whichever table NCCL took, and nothing more:
	 * no WARN, no device opened (the net's "no RDMA device" never said) */
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, line), 1);
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, "NCCL_CROSS_NIC not 0"), 1);
	ASSERT_EQ(gdx_test_warning_count(), 0);
	setenv("NCCL_GDX_RMA", "0", 1);
	{
		struct gdx_rdrv d;

		gdx_rdrv_open(&d, 16);
		ASSERT_NE(gdx_rdrv_init(&d, 0x37), ncclSuccess);
		dlclose(d.lib);
	}
	ASSERT_EQ(gdx_test_warning_count(), 0);
	unsetenv("NCCL_GDX_RMA");
}

static void test_init_when_asked_sets_the_devices_up(void)
{
	struct gdx_rdrv d;

	setenv("NCCL_GDX_RMA", "1", 1);
	unsetenv("NCCL_NET");
	gdx_test_log_clear();
	gdx_rdrv_open(&d, 15);
	ASSERT_NE(gdx_rdrv_init(&d, 0x37), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "no RDMA device found");
	ASSERT_EQ(gdx_test_log_count(NCCL_LOG_INFO, NCCL_INIT, "NCCL_GDX_RMA is not 1"), 0);
	dlclose(d.lib);
	/* out of range: the parameter table refuses it, init fails */
	setenv("NCCL_GDX_RMA", "2", 1);
	gdx_test_log_clear();
	gdx_rdrv_open(&d, 16);
	ASSERT_NE(gdx_rdrv_init(&d, 0x37), ncclSuccess);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "NCCL_GDX_RMA");
	dlclose(d.lib);
	unsetenv("NCCL_GDX_RMA");
}

GDX_TESTS_MAIN(TEST(test_tables_are_complete, 30), TEST(test_init_declines_unless_asked, 30),
	       TEST(test_init_when_asked_sets_the_devices_up, 30))
