/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-8 Data Direct as net_ib does it (NCCL_GDX_DATA_DIRECT, twin of
 * NCCL_IB_DATA_DIRECT), on the scripted NIC playing an mlx5 device: by
 * default the device is advertised as "<dev>_dma" at its DMA function and
 * its DMA-BUF memory is registered through mlx5dv_reg_dmabuf_mr with the
 * Data Direct flag; 2 advertises both; 0, a device without Data Direct, a
 * device that is not mlx5, no DMA-BUF, or no libmlx5 leave everything as it
 * was. The topology places a NIC at the PCI device it is told.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data/gdx_reg.h"
#include "dev/gdx_dev.h"
#include "topo/gdx_topo.h"
#include "net/gdx_net.h"
#include "net/gdx_start.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"

#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

#define OWN_FN "/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
#define DMA_FN "/devices/pci0000:00/0000:00:02.0/0000:02:00.1"

static char root[64];

static void mkdirs(const char *rel)
{
	char path[PATH_MAX];

	for (const char *s = rel; (s = strchr(s + 1, '/')) || (s = rel + strlen(rel));) {
		snprintf(path, sizeof(path), "%s%.*s", root, (int)(s - rel), rel);
		ASSERT(mkdir(path, 0755) == 0 || errno == EEXIST);
		if (!*s)
			break;
	}
}

static void link_at(const char *target, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", root, rel);
	ASSERT_EQ(symlink(target, path), 0);
}

/* A sysfs tree with mlx5_0 at its own PCI function (and the DMA function's
 * directory beside it), the machine mlx5_0's discovery reads. */
static void sysfs_tree(void)
{
	snprintf(root, sizeof(root), "/tmp/gdx-dd-XXXXXX");
	ASSERT(mkdtemp(root) != NULL);
	mkdirs("/bus/pci");
	mkdirs(OWN_FN);
	mkdirs(DMA_FN);
	mkdirs("/class/infiniband/mlx5_0");
	link_at("../../../../bus/pci", OWN_FN "/subsystem");
	link_at("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0",
		"/class/infiniband/mlx5_0/device");
	setenv("GDX_SYSFS_ROOT", root, 1);
	setenv("NCCL_GDX_PCI_RELAXED_ORDERING", "0", 1); /* no probe registration */
}

static void sysfs_tree_free(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	ASSERT_EQ(system(cmd), 0);
}

/* Discovery on the machine m, with NCCL_IB_DATA_DIRECT=ib (NULL: unset). */
static int discover(const struct fake_mlx5 *m, const char *ib)
{
	sysfs_tree();
	if (ib)
		setenv("NCCL_IB_DATA_DIRECT", ib, 1);
	fake_init();
	fake_mlx5_devices(m);
	memset(&fake_dmabuf_seen, 0, sizeof(fake_dmabuf_seen));
	return gdx_devs_init();
}

static const char *tail(const char *path, const char *suffix)
{
	size_t n = path ? strlen(path) : 0, k = strlen(suffix);

	return n >= k && !strcmp(path + n - k, suffix) ? path + n - k : NULL;
}

/* A DMA-BUF registration on physical device i through a send comm (the
 * two-sided path) and through RMA's symmetric windows (the one-sided). */
static void reg_dmabuf(int i)
{
	static char buf[8192];
	struct gdx_comm c = {.kind = GDX_KIND_SEND, .nmembers = 1};
	struct gdx_mr *mr, *sym;

	c.ch.rails[0].dev = gdx_dev_get(i);
	snprintf(c.dev_name, sizeof(c.dev_name), "%s", c.ch.rails[0].dev->name);
	c.ch.rails[0].dev->ptr_support |=
		NCCL_PTR_CUDA | NCCL_PTR_DMABUF; /* the verdict's, faked */
	ASSERT_EQ(gdx_reg_mr_dmabuf(&c, buf, 4096, NCCL_PTR_CUDA, 0, 7, &mr), 0);
	ASSERT_EQ(gdx_reg_sym(gdx_vdev_get(i), buf + 4096, 4096, NCCL_PTR_CUDA, false, true, 0, 7,
			      &sym),
		  0);
	ASSERT_EQ(gdx_dereg_mr(mr), 0);
	ASSERT_EQ(gdx_dereg_mr(sym), 0);
}

/* What every case without Data Direct must give: the table as before. */
static void expect_as_today(void)
{
	struct gdx_net_props p;

	ASSERT_EQ(gdx_devs_count(), 1);
	ASSERT_EQ(strcmp(gdx_dev_get(0)->name, "mlx5_0"), 0);
	ASSERT(!gdx_dev_get(0)->data_direct);
	ASSERT(tail(gdx_dev_get(0)->pci_path, OWN_FN));
	ASSERT_EQ(gdx_net_props(0, &p), ncclSuccess);
	ASSERT_EQ(strcmp(p.name, "mlx5_0"), 0);
	ASSERT_EQ(p.force_flush, 0);
	reg_dmabuf(0);
	ASSERT_EQ(fake_dmabuf_seen.ibv_calls, 2);
	ASSERT_EQ(fake_dmabuf_seen.mlx5dv_calls, 0);
	gdx_devs_fini();
	sysfs_tree_free();
}

static const struct fake_mlx5 cx8 = {.ndevs = 1, .dd_path = DMA_FN};

static void test_default_dma_only(void)
{
	struct gdx_net_props p;

	ASSERT_EQ(discover(&cx8, NULL), 1);
	ASSERT_EQ(strcmp(gdx_dev_get(0)->name, "mlx5_0_dma"), 0);
	ASSERT(gdx_dev_get(0)->data_direct);
	/* at the DMA function, the sysfs root in front as NCCL puts /sys */
	ASSERT(!strncmp(gdx_dev_get(0)->pci_path, root, strlen(root)));
	ASSERT_EQ(strcmp(gdx_dev_get(0)->pci_path + strlen(root), DMA_FN), 0);
	ASSERT_EQ(gdx_net_props(0, &p), ncclSuccess);
	ASSERT_EQ(strcmp(p.name, "mlx5_0_dma"), 0);
	ASSERT_EQ(strcmp(p.pci_path, gdx_dev_get(0)->pci_path), 0);
	ASSERT_EQ(p.guid, 0x1000);
	ASSERT_EQ(p.force_flush, 1); /* as net_ib's getProperties */
	ASSERT_STR_CONTAINS(gdx_test_infos(), "mlx5_0: Data Direct DMA function at");
	/* the DMA-BUF probe, then registrations through mlx5 with the flag */
	ASSERT_EQ(fake_dmabuf_seen.probes, 2);
	reg_dmabuf(0);
	ASSERT_EQ(fake_dmabuf_seen.mlx5dv_calls, 2);
	ASSERT_EQ(fake_dmabuf_seen.mlx5_access, 1 /* MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT */);
	ASSERT_EQ(fake_dmabuf_seen.ibv_calls, 0);
	gdx_devs_fini();
	sysfs_tree_free();
}

static void test_off_as_today(void)
{
	ASSERT_EQ(discover(&cx8, "0"), 1);
	ASSERT_EQ(fake_dmabuf_seen.probes, 0); /* not even asked */
	expect_as_today();
}

static void test_both(void)
{
	struct gdx_net_props own, dma;

	ASSERT_EQ(discover(&cx8, "2"), 2);
	ASSERT_EQ(strcmp(gdx_dev_get(0)->name, "mlx5_0"), 0);
	ASSERT(tail(gdx_dev_get(0)->pci_path, OWN_FN));
	ASSERT_EQ(strcmp(gdx_dev_get(1)->name, "mlx5_0_dma"), 0);
	ASSERT(tail(gdx_dev_get(1)->pci_path, DMA_FN));
	ASSERT_EQ(gdx_net_props(0, &own), ncclSuccess);
	ASSERT_EQ(gdx_net_props(1, &dma), ncclSuccess);
	/* one physical port: NCCL's search counts its bandwidth once */
	ASSERT_EQ(own.guid, dma.guid);
	ASSERT_EQ(own.port, dma.port);
	ASSERT_EQ(own.force_flush, 0);
	ASSERT_EQ(dma.force_flush, 1);
	/* each its own context: their DMA-BUF registrations differ */
	ASSERT(gdx_dev_get(0)->ib != gdx_dev_get(1)->ib);
	reg_dmabuf(0);
	ASSERT_EQ(fake_dmabuf_seen.ibv_calls, 2);
	ASSERT_EQ(fake_dmabuf_seen.mlx5dv_calls, 0);
	reg_dmabuf(1);
	ASSERT_EQ(fake_dmabuf_seen.ibv_calls, 2);
	ASSERT_EQ(fake_dmabuf_seen.mlx5dv_calls, 2);
	ASSERT_EQ(fake_dmabuf_seen.mlx5_access, 1);
	gdx_devs_fini();
	sysfs_tree_free();
}

static void test_no_data_direct_as_today(void)
{
	ASSERT_EQ(discover(&(struct fake_mlx5){.ndevs = 1}, NULL), 1);
	expect_as_today();
}

static void test_not_mlx5_as_today(void)
{
	ASSERT_EQ(discover(&(struct fake_mlx5){.ndevs = 1, .not_mlx5 = true, .dd_path = DMA_FN},
			   NULL),
		  1);
	expect_as_today();
}

static void test_no_dmabuf_as_today(void)
{
	ASSERT_EQ(discover(&(struct fake_mlx5){.ndevs = 1, .no_dmabuf = true, .dd_path = DMA_FN},
			   NULL),
		  1);
	ASSERT_EQ(gdx_devs_count(), 1);
	ASSERT_EQ(strcmp(gdx_dev_get(0)->name, "mlx5_0"), 0);
	ASSERT(!gdx_dev_get(0)->data_direct);
	gdx_devs_fini();
	sysfs_tree_free();
}

static void test_no_libmlx5_as_today(void)
{
	ASSERT_EQ(
		discover(&(struct fake_mlx5){.ndevs = 1, .no_lib = true, .dd_path = DMA_FN}, NULL),
		1);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "libmlx5.so.1 is not there: no Data Direct DMA");
	expect_as_today();
}

/* The start-up's report, which gdx-doctor check prints: which device of
 * the port does its DMA through the Data Direct function, and its bus id. */
static void test_start_report_names_the_function(void)
{
	static struct gdx_start_report r;

	sysfs_tree();
	setenv("NCCL_IB_DATA_DIRECT", "2", 1);
	setenv("NCCL_GDX_SOCKET_IFNAME", "lo", 1);
	setenv("NCCL_GDX_GDR", "off", 1);
	fake_init();
	fake_mlx5_devices(&cx8);
	ASSERT_EQ(gdx_start(GDX_VIEW_PHYSICAL, &r), 0);
	ASSERT_EQ(r.nports, 1);
	ASSERT_EQ(r.ports[0].seen.dev, 0);
	ASSERT_EQ(r.ports[0].dd_dev, 1);
	ASSERT_EQ(strcmp(r.ports[0].dd_fn, "0000:02:00.1"), 0);
	gdx_devs_fini();
	setenv("NCCL_IB_DATA_DIRECT", "0", 1);
	ASSERT_EQ(gdx_start(GDX_VIEW_PHYSICAL, &r), 0);
	ASSERT_EQ(r.ports[0].dd_dev, -1);
	gdx_devs_fini();
	sysfs_tree_free();
}

/* Ours malformed or out of range fails init, as every NCCL_GDX_*; NCCL's
 * out of range is NCCL's to judge: a WARN, and the default. */
static void test_bogus_values(void)
{
	gdx_log_set(gdx_test_logger);
	setenv("NCCL_GDX_DATA_DIRECT", "3", 1);
	ASSERT_EQ(gdx_params_load(), -EINVAL);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "NCCL_GDX_DATA_DIRECT=3 is out of range 0-2");
	setenv("NCCL_GDX_DATA_DIRECT", "dma", 1);
	ASSERT_EQ(gdx_params_load(), -EINVAL);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "NCCL_GDX_DATA_DIRECT=\"dma\" is not an integer");
	unsetenv("NCCL_GDX_DATA_DIRECT");
	setenv("NCCL_IB_DATA_DIRECT", "7", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.data_direct, 1);
	ASSERT_STR_CONTAINS(gdx_test_warnings(), "NCCL_IB_DATA_DIRECT=7 is outside 0-2");
	setenv("NCCL_IB_DATA_DIRECT", "2", 1);
	ASSERT_EQ(gdx_params_load(), 0);
	ASSERT_EQ(gdx_params.data_direct, 2);
	ASSERT_EQ(gdx_param_src("DATA_DIRECT"), GDX_PARAM_TWIN);
	/* applied now: no "not applied" line */
	ASSERT(!strstr(gdx_test_infos(), "NCCL_IB_DATA_DIRECT=2 is NCCL's IB transport's"));
}

/* A NIC placed at the PCI device it is told (a Data Direct device's DMA
 * function): mlx5_3 (beside GPU 1) moved beside GPU 0; a bus id the file
 * does not have leaves it where it was, said. */
static void test_topo_home(void)
{
	const char *xml = "tests/lib/fixtures/topo/two-nics-per-gpu.xml";
	struct gdx_topo_home home = {.nic = "mlx5_3", .pci = "0000:1a:00.0"};
	struct gdx_topo_opts o = {.xml = xml, .fd = -1, .homes = &home, .nhomes = 1};
	struct gdx_topo *before, *after;
	int g0, n3;

	gdx_log_set(gdx_test_logger);
	ASSERT_EQ(gdx_topo_load(xml, &before, NULL, 0), 0);
	ASSERT_EQ(gdx_topo_load_opts(&o, &after, NULL, 0), 0);
	g0 = gdx_topo_find_gpu(before, "0000:19:00.0");
	n3 = gdx_topo_find_nic(before, "mlx5_3");
	ASSERT(g0 >= 0 && n3 >= 0);
	ASSERT_EQ(strcmp(gdx_topo_nic(before, n3)->pci, "0000:1f:00.0"), 0);
	ASSERT(gdx_topo_path(before, g0, n3) > GDX_PATH_PXB);
	ASSERT_EQ(strcmp(gdx_topo_nic(after, n3)->pci, "0000:1a:00.0"), 0);
	ASSERT_EQ(gdx_topo_path(after, g0, n3), GDX_PATH_PIX);
	gdx_topo_free(after);
	home.pci = "0000:99:00.1";
	ASSERT_EQ(gdx_topo_load_opts(&o, &after, NULL, 0), 0);
	ASSERT_EQ(strcmp(gdx_topo_nic(after, n3)->pci, "0000:1f:00.0"), 0);
	ASSERT_STR_CONTAINS(gdx_test_infos(), "mlx5_3: no PCI device 0000:99:00.1 in the topology");
	gdx_topo_free(after);
	gdx_topo_free(before);
}

GDX_TESTS_MAIN(TEST(test_default_dma_only, 20), TEST(test_off_as_today, 20), TEST(test_both, 20),
	       TEST(test_no_data_direct_as_today, 20), TEST(test_not_mlx5_as_today, 20),
	       TEST(test_no_dmabuf_as_today, 20), TEST(test_no_libmlx5_as_today, 20),
	       TEST(test_bogus_values, 20), TEST(test_topo_home, 20),
	       TEST(test_start_report_names_the_function, 20))
