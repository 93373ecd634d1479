/* SPDX-License-Identifier: MIT */
/* GPU/NIC path classes, rails and rail groups from hwloc XML fixtures
 * (tests/lib/fixtures/topo, written by gen_fixtures.py there). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <hwloc.h>

#include "topo/gdx_topo.h"
#include "tools/common/gdx_topo_query.h"

#include "gdx_test.h"

#define FIXTURES "tests/lib/fixtures/topo/"

static struct gdx_topo *load(const char *name)
{
	char path[256], why[256];
	struct gdx_topo *t = NULL;
	int ret;

	snprintf(path, sizeof(path), FIXTURES "%s.xml", name);
	ret = gdx_topo_load(path, &t, why, sizeof(why));
	if (ret)
		gdx_test_fail(__FILE__, __LINE__, "loading %s: %d (%s)", path, ret, why);
	return t;
}

static int gpu(const struct gdx_topo *t, const char *pci)
{
	int i = gdx_topo_find_gpu(t, pci);

	if (i < 0)
		gdx_test_fail(__FILE__, __LINE__, "no GPU %s", pci);
	return i;
}

static int nic(const struct gdx_topo *t, const char *name)
{
	int i = gdx_topo_find_nic(t, name);

	if (i < 0)
		gdx_test_fail(__FILE__, __LINE__, "no NIC %s", name);
	return i;
}

static const char *path(const struct gdx_topo *t, const char *gpu_pci, const char *nic_name)
{
	return gdx_path_name(gdx_topo_path(t, gpu(t, gpu_pci), nic(t, nic_name)));
}

/* The GPU's rail as "mlx5_0,mlx5_1" ("" when empty). */
static const char *rail(const struct gdx_topo *t, const char *gpu_pci, char *buf, size_t len)
{
	int nics[64], n = gdx_topo_gpu_group(t, gpu(t, gpu_pci), nics, 64);

	ASSERT(n >= 0 && n <= 64);
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "," : "",
			 gdx_topo_nic(t, nics[i])->name);
	return buf;
}

/* Every NIC of the GPU, nearest first, as "mlx5_0,mlx5_1". */
static const char *nearest(const struct gdx_topo *t, const char *gpu_pci, char *buf, size_t len)
{
	int nics[64], n = gdx_topo_gpu_nics(t, gpu(t, gpu_pci), nics, 64);

	ASSERT(n >= 0 && n <= 64);
	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", i ? "," : "",
			 gdx_topo_nic(t, nics[i])->name);
	return buf;
}

static int same_package(const struct gdx_topo *t, const char *gpu_pci, const char *nic_name)
{
	return gdx_topo_same_package(t, gpu(t, gpu_pci), nic(t, nic_name));
}

#define ASSERT_STR_EQ(a, b)                                                                    \
	do {                                                                                   \
		const char *_x = (a), *_y = (b);                                               \
		if (strcmp(_x, _y))                                                            \
			gdx_test_fail(__FILE__, __LINE__, "%s: \"%s\" != \"%s\"", #a, _x, _y); \
	} while (0)

static void test_path_names(void)
{
	ASSERT_STR_EQ(gdx_path_name(GDX_PATH_PIX), "PIX");
	ASSERT_STR_EQ(gdx_path_name(GDX_PATH_PXB), "PXB");
	ASSERT_STR_EQ(gdx_path_name(GDX_PATH_PHB), "PHB");
	ASSERT_STR_EQ(gdx_path_name(GDX_PATH_NODE), "NODE");
	ASSERT_STR_EQ(gdx_path_name(GDX_PATH_NUMA_UNKNOWN), "NUMA-UNKNOWN");
	ASSERT_STR_EQ(gdx_path_name(GDX_PATH_SYS), "SYS");
	ASSERT_STR_EQ(gdx_path_name(GDX_PATH_UNKNOWN), "UNKNOWN");
	ASSERT_STR_EQ(gdx_path_name((enum gdx_path)0), "UNKNOWN");
	ASSERT(GDX_PATH_PIX < GDX_PATH_PXB && GDX_PATH_PXB < GDX_PATH_PHB);
	ASSERT(GDX_PATH_PHB < GDX_PATH_NODE && GDX_PATH_NODE < GDX_PATH_NUMA_UNKNOWN);
	ASSERT(GDX_PATH_NUMA_UNKNOWN < GDX_PATH_SYS && GDX_PATH_SYS < GDX_PATH_UNKNOWN);
}

/* DGX H100: each GPU has one ConnectX-7 on its own switch. */
static const char *const h100_pairs[][2] = {
	{"0000:1b:00.0", "mlx5_0"},  {"0000:43:00.0", "mlx5_3"},  {"0000:52:00.0", "mlx5_4"},
	{"0000:61:00.0", "mlx5_5"},  {"0000:9d:00.0", "mlx5_6"},  {"0000:c3:00.0", "mlx5_9"},
	{"0000:d1:00.0", "mlx5_10"}, {"0000:df:00.0", "mlx5_11"},
};

static void test_h100_one_pix_nic_per_gpu(void)
{
	struct gdx_topo *t = load("dgx-h100");
	char buf[256];

	/* The four NVSwitches are NVIDIA devices too, but not GPUs. */
	ASSERT_EQ(gdx_topo_ngpus(t), 8);
	ASSERT_EQ(gdx_topo_nnics(t), 10);
	for (int i = 0; i < 8; i++) {
		ASSERT_STR_EQ(path(t, h100_pairs[i][0], h100_pairs[i][1]), "PIX");
		ASSERT_STR_EQ(rail(t, h100_pairs[i][0], buf, sizeof(buf)), h100_pairs[i][1]);
		ASSERT_EQ(gdx_topo_nic(t, nic(t, h100_pairs[i][1]))->group_gpus, 1);
		ASSERT_EQ(gdx_topo_gpu(t, i)->numa, i < 4 ? 0 : 1);
	}
	/* Other host bridges of the same socket, then the other socket. */
	ASSERT_STR_EQ(path(t, "0000:1b:00.0", "mlx5_3"), "NODE");
	ASSERT_STR_EQ(path(t, "0000:1b:00.0", "mlx5_1"), "NODE");
	ASSERT_STR_EQ(path(t, "0000:1b:00.0", "mlx5_6"), "SYS");
	ASSERT_STR_EQ(path(t, "0000:df:00.0", "mlx5_0"), "SYS");
	ASSERT_STR_EQ(path(t, "0000:df:00.0", "mlx5_10"), "NODE");
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_6"))->numa, 1);
	ASSERT_STR_EQ(gdx_topo_nic(t, nic(t, "mlx5_0"))->pci, "0000:18:00.0");
	ASSERT_STR_EQ(gdx_topo_nic(t, nic(t, "mlx5_2"))->pci, "0000:29:00.1");
	gdx_topo_free(t);
}

static void test_h100_nic_order_and_nearest_first(void)
{
	static const char *const want[] = {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3",  "mlx5_4",
					   "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"};
	struct gdx_topo *t = load("dgx-h100");
	int order[16], g = gpu(t, "0000:52:00.0");

	/* Names sort as numbers: mlx5_9 before mlx5_10. */
	for (int i = 0; i < 10; i++)
		ASSERT_STR_EQ(gdx_topo_nic(t, i)->name, want[i]);
	ASSERT(gdx_topo_nic(t, 10) == NULL);
	ASSERT(gdx_topo_nic(t, -1) == NULL);

	/* PIX first, then NODE by name, then SYS by name. */
	ASSERT_EQ(gdx_topo_gpu_nics(t, g, order, 16), 10);
	ASSERT_STR_EQ(gdx_topo_nic(t, order[0])->name, "mlx5_4");
	ASSERT_STR_EQ(gdx_topo_nic(t, order[1])->name, "mlx5_0");
	ASSERT_STR_EQ(gdx_topo_nic(t, order[5])->name, "mlx5_5");
	ASSERT_STR_EQ(gdx_topo_nic(t, order[6])->name, "mlx5_6");
	ASSERT_STR_EQ(gdx_topo_nic(t, order[9])->name, "mlx5_11");
	/* A short array gets the head; the count is still the total. */
	order[1] = -7;
	ASSERT_EQ(gdx_topo_gpu_nics(t, g, order, 1), 10);
	ASSERT_EQ(order[1], -7);
	gdx_topo_free(t);
}

static void test_h100_groups_and_standalone_nics(void)
{
	struct gdx_topo *t = load("dgx-h100");
	const struct gdx_topo_group *grp;

	/* Eight one-NIC rails, then the storage NICs, near no GPU, alone. */
	ASSERT_EQ(gdx_topo_ngroups(t), 10);
	for (int i = 0; i < 8; i++) {
		grp = gdx_topo_group(t, i);
		ASSERT_EQ(grp->nnics, 1);
		ASSERT_EQ(grp->ngpus, 1);
		ASSERT_EQ(grp->gpus[0], i);
		ASSERT_STR_EQ(gdx_topo_nic(t, grp->nics[0])->name, h100_pairs[i][1]);
	}
	for (int i = 8; i < 10; i++) {
		grp = gdx_topo_group(t, i);
		ASSERT_EQ(grp->nnics, 1);
		ASSERT_EQ(grp->ngpus, 0);
		ASSERT_STR_EQ(gdx_topo_nic(t, grp->nics[0])->name, i == 8 ? "mlx5_1" : "mlx5_2");
		ASSERT_EQ(gdx_topo_nic(t, grp->nics[0])->group_gpus, 0);
	}
	ASSERT(gdx_topo_group(t, 10) == NULL);
	gdx_topo_free(t);
}

/* DGX A100: two switch levels between every GPU and NIC of a complex. */
static void test_a100_pxb_shared_rails(void)
{
	static const struct {
		const char *gpus[2], *rail;
		int numa;
	} cx[] = {
		{{"0000:07:00.0", "0000:0f:00.0"}, "mlx5_0,mlx5_1", 3},
		{{"0000:47:00.0", "0000:4e:00.0"}, "mlx5_2,mlx5_3", 1},
		{{"0000:87:00.0", "0000:90:00.0"}, "mlx5_6,mlx5_7", 7},
		{{"0000:b7:00.0", "0000:bd:00.0"}, "mlx5_8,mlx5_9", 5},
	};
	struct gdx_topo *t = load("dgx-a100");
	char buf[256];

	ASSERT_EQ(gdx_topo_ngpus(t), 8);
	ASSERT_EQ(gdx_topo_nnics(t), 10);
	for (int c = 0; c < 4; c++) {
		const struct gdx_topo_group *grp = gdx_topo_group(t, c);

		for (int k = 0; k < 2; k++) {
			ASSERT_STR_EQ(rail(t, cx[c].gpus[k], buf, sizeof(buf)), cx[c].rail);
			ASSERT_EQ(gdx_topo_gpu(t, gpu(t, cx[c].gpus[k]))->numa, cx[c].numa);
			ASSERT_EQ(grp->gpus[k], gpu(t, cx[c].gpus[k]));
		}
		ASSERT_EQ(grp->ngpus, 2);
		ASSERT_EQ(grp->nnics, 2);
		/* Each NIC of a complex is shared by its two GPUs. */
		ASSERT_EQ(gdx_topo_nic(t, grp->nics[0])->group_gpus, 2);
		ASSERT_EQ(gdx_topo_nic(t, grp->nics[1])->group_gpus, 2);
		ASSERT_EQ(gdx_topo_nic(t, grp->nics[0])->numa, cx[c].numa);
	}
	ASSERT_STR_EQ(path(t, "0000:07:00.0", "mlx5_0"), "PXB");
	ASSERT_STR_EQ(path(t, "0000:0f:00.0", "mlx5_1"), "PXB");
	/* NPS4: another NUMA node of the same socket is already SYS, but the
	 * NICs of the GPU's own socket rank before the other socket's. */
	ASSERT_STR_EQ(path(t, "0000:07:00.0", "mlx5_2"), "SYS");
	ASSERT_STR_EQ(path(t, "0000:07:00.0", "mlx5_8"), "SYS");
	ASSERT_EQ(same_package(t, "0000:07:00.0", "mlx5_2"), 1);
	ASSERT_EQ(same_package(t, "0000:07:00.0", "mlx5_8"), 0);
	ASSERT_EQ(same_package(t, "0000:07:00.0", "mlx5_0"), 1);
	ASSERT_STR_EQ(nearest(t, "0000:87:00.0", buf, sizeof(buf)),
		      "mlx5_6,mlx5_7,mlx5_4,mlx5_5,mlx5_8,mlx5_9,mlx5_0,mlx5_1,mlx5_2,mlx5_3");
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:87:00.0"))->package, 1);
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_5"))->package, 1);
	ASSERT_EQ(gdx_topo_ngroups(t), 6);
	ASSERT_STR_EQ(gdx_topo_nic(t, gdx_topo_group(t, 4)->nics[0])->name, "mlx5_4");
	ASSERT_STR_EQ(gdx_topo_nic(t, gdx_topo_group(t, 5)->nics[0])->name, "mlx5_5");
	ASSERT_EQ(gdx_topo_group(t, 5)->ngpus, 0);
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_5"))->numa, 6);
	gdx_topo_free(t);
}

/*
 * EPYC in NPS4 mode: every GPU-NIC pair is SYS (as NCCL and nvidia-smi say),
 * and NCCL gives every SYS path the same bandwidth; but the NIC on the GPU's
 * own socket does not cross the inter-socket link, so it alone is the rail.
 */
static void test_nps4_own_socket_first(void)
{
	static const char *const names[] = {"mlx5_0", "mlx5_1"};
	struct gdx_topo *t = load("epyc-nps4");
	int members[4][8], counts[4];
	char buf[256];

	ASSERT_EQ(gdx_topo_ngpus(t), 4);
	ASSERT_EQ(gdx_topo_nnics(t), 2);
	for (int g = 0; g < 4; g++)
		for (int n = 0; n < 2; n++) {
			ASSERT_EQ(gdx_topo_path(t, g, n), GDX_PATH_SYS);
			ASSERT_EQ(gdx_topo_same_package(t, g, n), (g < 2) == (n == 0));
		}
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:61:00.0"))->numa, 3);
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:61:00.0"))->package, 0);
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:a1:00.0"))->package, 1);
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_1"))->numa, 6);
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_1"))->package, 1);
	ASSERT_STR_EQ(rail(t, "0000:21:00.0", buf, sizeof(buf)), "mlx5_0");
	ASSERT_STR_EQ(rail(t, "0000:61:00.0", buf, sizeof(buf)), "mlx5_0");
	ASSERT_STR_EQ(rail(t, "0000:a1:00.0", buf, sizeof(buf)), "mlx5_1");
	ASSERT_STR_EQ(rail(t, "0000:e1:00.0", buf, sizeof(buf)), "mlx5_1");
	ASSERT_STR_EQ(nearest(t, "0000:e1:00.0", buf, sizeof(buf)), "mlx5_1,mlx5_0");
	ASSERT_EQ(gdx_topo_ngroups(t), 2);
	ASSERT_EQ(gdx_topo_group(t, 0)->ngpus, 2);
	ASSERT_EQ(gdx_topo_group(t, 1)->gpus[0], gpu(t, "0000:a1:00.0"));
	ASSERT_EQ(gdx_topo_nic(t, 0)->group_gpus, 2);
	/* NCCL_GDX_RAILS=gpu: no GPU has two equally near NICs, nothing fused
	 * (one device of both NICs would cross the sockets for every GPU). */
	ASSERT_EQ(gdx_topo_auto_groups(t, names, 2, members, counts, 4, 8), 0);
	/* Out of range: unknown. */
	ASSERT_EQ(gdx_topo_same_package(t, 4, 0), -1);
	ASSERT_EQ(gdx_topo_same_package(t, 0, 2), -1);
	gdx_topo_free(t);
}

/*
 * Sapphire Rapids with SNC2, the NUMA nodes as dies: GPUs 0 and 3 have a
 * NODE NIC; GPUs 1 and 2 have only SYS ones, and take their own socket's.
 */
static void test_snc_own_socket_first(void)
{
	static const char *const names[] = {"mlx5_1", "mlx5_0"};
	struct gdx_topo *t = load("spr-snc2");
	int members[4][8], counts[4];
	char buf[256];

	ASSERT_EQ(gdx_topo_ngpus(t), 4);
	ASSERT_STR_EQ(path(t, "0000:16:00.0", "mlx5_0"), "NODE");
	ASSERT_STR_EQ(path(t, "0000:39:00.0", "mlx5_0"), "SYS");
	ASSERT_STR_EQ(path(t, "0000:39:00.0", "mlx5_1"), "SYS");
	ASSERT_EQ(same_package(t, "0000:39:00.0", "mlx5_0"), 1);
	ASSERT_EQ(same_package(t, "0000:39:00.0", "mlx5_1"), 0);
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:98:00.0"))->numa, 2);
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:98:00.0"))->package, 1);
	ASSERT_STR_EQ(rail(t, "0000:39:00.0", buf, sizeof(buf)), "mlx5_0");
	ASSERT_STR_EQ(rail(t, "0000:98:00.0", buf, sizeof(buf)), "mlx5_1");
	ASSERT_STR_EQ(nearest(t, "0000:98:00.0", buf, sizeof(buf)), "mlx5_1,mlx5_0");
	ASSERT_STR_EQ(rail(t, "0000:b9:00.0", buf, sizeof(buf)), "mlx5_1");
	/* One group per NIC, each with a NODE GPU and a SYS one. */
	ASSERT_EQ(gdx_topo_ngroups(t), 2);
	ASSERT_EQ(gdx_topo_group(t, 0)->nnics, 1);
	ASSERT_EQ(gdx_topo_group(t, 0)->ngpus, 2);
	ASSERT_EQ(gdx_topo_group(t, 0)->gpus[1], gpu(t, "0000:39:00.0"));
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_1"))->group_gpus, 2);
	ASSERT_EQ(gdx_topo_auto_groups(t, names, 2, members, counts, 4, 8), 0);
	gdx_topo_free(t);
}

/*
 * An old dump with host bridges that hang off the Machine: no NUMA node, no
 * package. Between such a host bridge and another the class is unknown (it
 * was NODE when neither had locality, SYS when one had), ranked after the
 * known near ones and before a known SYS; under one host bridge it is PHB.
 */
static void test_no_locality_is_unknown(void)
{
	struct gdx_topo *t = load("no-locality");
	char buf[256];

	ASSERT_EQ(gdx_topo_ngpus(t), 3);
	ASSERT_EQ(gdx_topo_nnics(t), 3);
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:41:00.0"))->numa, -1);
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:41:00.0"))->package, -1);
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_2"))->package, -1);
	ASSERT_EQ(gdx_topo_gpu(t, gpu(t, "0000:04:00.0"))->package, 0);
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_1"))->package, 1);
	/* GPU 04 (socket 0): NODE, then the unknown mlx5_2, then SYS. */
	ASSERT_STR_EQ(path(t, "0000:04:00.0", "mlx5_0"), "NODE");
	ASSERT_STR_EQ(path(t, "0000:04:00.0", "mlx5_2"), "NUMA-UNKNOWN");
	ASSERT_STR_EQ(path(t, "0000:04:00.0", "mlx5_1"), "SYS");
	ASSERT_EQ(same_package(t, "0000:04:00.0", "mlx5_2"), -1);
	ASSERT_STR_EQ(nearest(t, "0000:04:00.0", buf, sizeof(buf)), "mlx5_0,mlx5_2,mlx5_1");
	ASSERT_STR_EQ(rail(t, "0000:04:00.0", buf, sizeof(buf)), "mlx5_0");
	/* GPU 41: PHB to the NIC on its own host bridge, the rest unknown. */
	ASSERT_STR_EQ(path(t, "0000:41:00.0", "mlx5_2"), "PHB");
	ASSERT_STR_EQ(path(t, "0000:41:00.0", "mlx5_0"), "NUMA-UNKNOWN");
	ASSERT_STR_EQ(rail(t, "0000:41:00.0", buf, sizeof(buf)), "mlx5_2");
	/* GPU c1: nothing known about any NIC, all tied. */
	for (int n = 0; n < 3; n++)
		ASSERT_EQ(gdx_topo_path(t, gpu(t, "0000:c1:00.0"), n), GDX_PATH_NUMA_UNKNOWN);
	ASSERT_STR_EQ(rail(t, "0000:c1:00.0", buf, sizeof(buf)), "mlx5_0,mlx5_1,mlx5_2");
	gdx_topo_free(t);
}

static void test_two_nics_per_gpu(void)
{
	struct gdx_topo *t = load("two-nics-per-gpu");
	char buf[256];

	ASSERT_EQ(gdx_topo_ngpus(t), 2);
	ASSERT_EQ(gdx_topo_nnics(t), 4);
	/* Both NICs of the switch, in name order although listed mlx5_1 first. */
	ASSERT_STR_EQ(rail(t, "0000:19:00.0", buf, sizeof(buf)), "mlx5_0,mlx5_1");
	ASSERT_STR_EQ(rail(t, "0000:1e:00.0", buf, sizeof(buf)), "mlx5_2,mlx5_3");
	ASSERT_STR_EQ(path(t, "0000:19:00.0", "mlx5_1"), "PIX");
	/* The other switch is on another root port of the same host bridge. */
	ASSERT_STR_EQ(path(t, "0000:19:00.0", "mlx5_2"), "PHB");
	ASSERT_STR_EQ(path(t, "0000:1e:00.0", "mlx5_0"), "PHB");
	ASSERT_EQ(gdx_topo_ngroups(t), 2);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(gdx_topo_nic(t, i)->group_gpus, 1);
	ASSERT_EQ(gdx_topo_group(t, 1)->nnics, 2);
	ASSERT_EQ(gdx_topo_group(t, 1)->gpus[0], 1);
	gdx_topo_free(t);
}

static void test_cascaded_switch_pix_and_pxb(void)
{
	struct gdx_topo *t = load("cascaded-switch");
	const struct gdx_topo_group *grp;
	char buf[256];

	ASSERT_STR_EQ(path(t, "0000:19:00.0", "mlx5_0"), "PIX");
	ASSERT_STR_EQ(path(t, "0000:1c:00.0", "mlx5_0"), "PXB");
	ASSERT_STR_EQ(path(t, "0000:1d:00.0", "mlx5_0"), "PXB");
	ASSERT_STR_EQ(path(t, "0000:1c:00.0", "mlx5_1"), "PHB");
	/* Same rail at different classes: still one group of three GPUs. */
	ASSERT_STR_EQ(rail(t, "0000:1d:00.0", buf, sizeof(buf)), "mlx5_0");
	ASSERT_EQ(gdx_topo_ngroups(t), 2);
	grp = gdx_topo_group(t, 0);
	ASSERT_EQ(grp->ngpus, 3);
	ASSERT_EQ(gdx_topo_nic(t, grp->nics[0])->group_gpus, 3);
	ASSERT_EQ(gdx_topo_group(t, 1)->ngpus, 0);
	gdx_topo_free(t);
}

static void test_remote_nic_is_sys(void)
{
	struct gdx_topo *t = load("remote-nic");
	char buf[256];

	ASSERT_EQ(gdx_topo_ngpus(t), 2);
	ASSERT_EQ(gdx_topo_nnics(t), 1);
	ASSERT_STR_EQ(path(t, "0000:17:00.0", "mlx5_0"), "SYS");
	ASSERT_STR_EQ(path(t, "0000:31:00.0", "mlx5_0"), "SYS");
	/* Far is still the best there is: both GPUs share it. */
	ASSERT_STR_EQ(rail(t, "0000:31:00.0", buf, sizeof(buf)), "mlx5_0");
	ASSERT_EQ(gdx_topo_nic(t, 0)->group_gpus, 2);
	ASSERT_EQ(gdx_topo_nic(t, 0)->numa, 1);
	ASSERT_EQ(gdx_topo_gpu(t, 0)->numa, 0);
	ASSERT_EQ(gdx_topo_gpu(t, 1)->numa, 0);
	ASSERT_EQ(gdx_topo_ngroups(t), 1);
	ASSERT_EQ(gdx_topo_group(t, 0)->ngpus, 2);
	gdx_topo_free(t);
}

static void test_cloud_vm_flat_is_phb(void)
{
	struct gdx_topo *t = load("cloud-vm");
	char buf[256];

	ASSERT_EQ(gdx_topo_ngpus(t), 2);
	ASSERT_EQ(gdx_topo_nnics(t), 2);
	for (int g = 0; g < 2; g++)
		for (int n = 0; n < 2; n++)
			ASSERT_EQ(gdx_topo_path(t, g, n), GDX_PATH_PHB);
	ASSERT_STR_EQ(rail(t, "0000:00:05.0", buf, sizeof(buf)), "mlx5_0,mlx5_1");
	ASSERT_EQ(gdx_topo_ngroups(t), 1);
	ASSERT_EQ(gdx_topo_group(t, 0)->ngpus, 2);
	ASSERT_EQ(gdx_topo_group(t, 0)->nnics, 2);
	ASSERT_EQ(gdx_topo_nic(t, 1)->group_gpus, 2);
	ASSERT_EQ(gdx_topo_nic(t, 1)->numa, 0);
	gdx_topo_free(t);
}

static void test_no_gpu(void)
{
	struct gdx_topo *t = load("no-gpu");
	int nics[4];

	ASSERT_EQ(gdx_topo_ngpus(t), 0);
	ASSERT_EQ(gdx_topo_nnics(t), 1);
	ASSERT_STR_EQ(gdx_topo_nic(t, 0)->name, "mlx5_0");
	ASSERT_STR_EQ(gdx_topo_nic(t, 0)->pci, "0000:03:00.0");
	ASSERT(gdx_topo_gpu(t, 0) == NULL);
	ASSERT_EQ(gdx_topo_gpu_group(t, 0, nics, 4), -EINVAL);
	ASSERT_EQ(gdx_topo_gpu_nics(t, -1, nics, 4), -EINVAL);
	ASSERT_EQ(gdx_topo_path(t, 0, 0), GDX_PATH_UNKNOWN);
	/* The NIC stands alone. */
	ASSERT_EQ(gdx_topo_ngroups(t), 1);
	ASSERT_EQ(gdx_topo_group(t, 0)->ngpus, 0);
	ASSERT_EQ(gdx_topo_group(t, 0)->nics[0], 0);
	gdx_topo_free(t);
}

static void test_no_nic(void)
{
	struct gdx_topo *t = load("no-nic");
	int nics[4];

	ASSERT_EQ(gdx_topo_ngpus(t), 1);
	ASSERT_EQ(gdx_topo_nnics(t), 0);
	ASSERT_EQ(gdx_topo_gpu_group(t, 0, nics, 4), 0);
	ASSERT_EQ(gdx_topo_gpu_nics(t, 0, nics, 4), 0);
	ASSERT_EQ(gdx_topo_ngroups(t), 0);
	gdx_topo_free(t);
}

static void test_nic_without_pci_parent(void)
{
	struct gdx_topo *t = load("rxe-only");
	const struct gdx_topo_nic *rxe;
	int nics[4];

	/* A 3D-class T4 and a VGA-class GeForce are both GPUs. */
	ASSERT_EQ(gdx_topo_ngpus(t), 2);
	ASSERT_EQ(gdx_topo_nnics(t), 1);
	rxe = gdx_topo_nic(t, 0);
	ASSERT_STR_EQ(rxe->name, "rxe0");
	ASSERT_STR_EQ(rxe->pci, "");
	ASSERT_EQ(rxe->numa, -1);
	for (int g = 0; g < 2; g++) {
		ASSERT_EQ(gdx_topo_path(t, g, 0), GDX_PATH_UNKNOWN);
		ASSERT_EQ(gdx_topo_gpu_group(t, g, nics, 4), 0);
		ASSERT_EQ(gdx_topo_gpu_nics(t, g, nics, 4), 1);
	}
	ASSERT_EQ(rxe->group_gpus, 0);
	ASSERT_EQ(gdx_topo_ngroups(t), 1);
	ASSERT_EQ(gdx_topo_group(t, 0)->ngpus, 0);
	gdx_topo_free(t);
}

/* The PCIe tree kept for gdx-doctor topo --dot: the bridges above each device,
 * walked as the path classes walk them, parents first. */
static void test_pcie_tree(void)
{
	static const enum gdx_topo_bridge_kind a100_chain[] = {
		GDX_BRIDGE_SWITCH, GDX_BRIDGE_SWITCH, GDX_BRIDGE_ROOT_PORT, GDX_BRIDGE_HOST};
	struct gdx_topo *t = load("dgx-h100");
	const struct gdx_topo_bridge *b;
	int k;

	for (int i = 0; i < gdx_topo_nbridges(t); i++)
		ASSERT(gdx_topo_bridge(t, i)->up < i);
	ASSERT(gdx_topo_bridge(t, gdx_topo_nbridges(t)) == NULL);
	/* Eight host bridges with a root port and a switch each, and the
	 * storage NICs' host bridge and root port. */
	ASSERT_EQ(gdx_topo_nbridges(t), 26);
	b = gdx_topo_bridge(t, gdx_topo_gpu(t, gpu(t, "0000:1b:00.0"))->bridge);
	ASSERT_EQ(b->kind, GDX_BRIDGE_SWITCH);
	ASSERT_STR_EQ(b->pci, "0000:16:00.0");
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_0"))->bridge,
		  gdx_topo_gpu(t, gpu(t, "0000:1b:00.0"))->bridge);
	b = gdx_topo_bridge(t, b->up);
	ASSERT_EQ(b->kind, GDX_BRIDGE_ROOT_PORT);
	ASSERT_STR_EQ(b->pci, "0000:15:01.0");
	b = gdx_topo_bridge(t, b->up);
	ASSERT_EQ(b->kind, GDX_BRIDGE_HOST);
	ASSERT_STR_EQ(b->pci, "0000:[15-1b]");
	ASSERT_EQ(b->up, -1);
	ASSERT_EQ(b->numa, 0);
	b = gdx_topo_bridge(t, gdx_topo_gpu(t, gpu(t, "0000:df:00.0"))->bridge);
	ASSERT_EQ(b->numa, 1);
	/* The storage NICs sit right below a root port they share. */
	b = gdx_topo_bridge(t, gdx_topo_nic(t, nic(t, "mlx5_2"))->bridge);
	ASSERT_EQ(b->kind, GDX_BRIDGE_ROOT_PORT);
	ASSERT_STR_EQ(b->pci, "0000:27:01.0");
	ASSERT_EQ(gdx_topo_nic(t, nic(t, "mlx5_1"))->bridge,
		  gdx_topo_nic(t, nic(t, "mlx5_2"))->bridge);
	gdx_topo_free(t);

	/* DGX A100: two switch levels, then the root port and host bridge. */
	t = load("dgx-a100");
	k = gdx_topo_gpu(t, gpu(t, "0000:07:00.0"))->bridge;
	for (int i = 0; i < 4; i++, k = gdx_topo_bridge(t, k)->up) {
		ASSERT(k >= 0);
		ASSERT_EQ(gdx_topo_bridge(t, k)->kind, a100_chain[i]);
	}
	ASSERT_EQ(k, -1);
	gdx_topo_free(t);

	/* A cloud VM: every device right on the host bridge. */
	t = load("cloud-vm");
	ASSERT_EQ(gdx_topo_nbridges(t), 1);
	ASSERT_EQ(gdx_topo_gpu(t, 0)->bridge, 0);
	ASSERT_EQ(gdx_topo_nic(t, 1)->bridge, 0);
	ASSERT_EQ(gdx_topo_bridge(t, 0)->kind, GDX_BRIDGE_HOST);
	ASSERT_EQ(gdx_topo_bridge(t, 0)->numa, 0);
	gdx_topo_free(t);

	/* rxe hangs off no bridge. */
	t = load("rxe-only");
	ASSERT_EQ(gdx_topo_nic(t, 0)->bridge, -1);
	gdx_topo_free(t);
}

static void test_find(void)
{
	struct gdx_topo *t = load("dgx-h100");

	ASSERT_EQ(gdx_topo_find_gpu(t, "0000:1B:00.0"), 0);
	ASSERT_EQ(gdx_topo_find_gpu(t, "0000:df:00.0"), 7);
	ASSERT_EQ(gdx_topo_find_gpu(t, "0000:18:00.0"), -1); /* a NIC */
	ASSERT_EQ(gdx_topo_find_gpu(t, NULL), -1);
	ASSERT_EQ(gdx_topo_find_nic(t, "mlx5_1"), 1);
	ASSERT_EQ(gdx_topo_find_nic(t, "mlx5_"), -1);
	ASSERT_EQ(gdx_topo_find_nic(t, "mlx5_7"), -1);
	ASSERT_EQ(gdx_topo_find_nic(t, NULL), -1);
	ASSERT_EQ(gdx_topo_path(t, 0, 10), GDX_PATH_UNKNOWN);
	ASSERT_EQ(gdx_topo_path(t, 8, 0), GDX_PATH_UNKNOWN);
	gdx_topo_free(t);
}

static void test_missing_file(void)
{
	struct gdx_topo *t = (struct gdx_topo *)&t; /* must stay untouched */
	char why[256];

	ASSERT_EQ(gdx_topo_load(FIXTURES "no-such-machine.xml", &t, why, sizeof(why)), -ENOENT);
	ASSERT_STR_CONTAINS(why, "no-such-machine.xml");
	ASSERT(t == (struct gdx_topo *)&t);
	/* why is optional. */
	ASSERT_EQ(gdx_topo_load(FIXTURES "no-such-machine.xml", &t, NULL, 0), -ENOENT);
}

/* Loads text from a file; *t_p gets the topology (NULL: expect a failure). */
static int load_text_topo(const char *text, struct gdx_topo **t_p, char *why, size_t len)
{
	char path[] = "/tmp/gdx-topo-XXXXXX";
	struct gdx_topo *t = NULL;
	int fd = mkstemp(path), ret;

	ASSERT(fd >= 0);
	ASSERT_EQ(write(fd, text, strlen(text)), (long long)strlen(text));
	close(fd);
	ret = gdx_topo_load(path, &t, why, len);
	unlink(path);
	if (t_p)
		*t_p = t;
	else
		ASSERT(t == NULL);
	return ret;
}

static int load_text(const char *text, char *why, size_t len)
{
	return load_text_topo(text, NULL, why, len);
}

/* A fixture's text, which the caller frees. */
static char *fixture_text(const char *name)
{
	char path[256];
	FILE *f;
	long n;
	char *text;

	snprintf(path, sizeof(path), FIXTURES "%s.xml", name);
	f = fopen(path, "r");
	ASSERT(f != NULL);
	ASSERT_EQ(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	ASSERT(text != NULL);
	ASSERT_EQ(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return text;
}

/* remote-nic as text edited by fn loads, and is still remote-nic. */
static void check_remote_nic_text(const char *text)
{
	struct gdx_topo *t = NULL;
	char why[256];

	if (load_text_topo(text, &t, why, sizeof(why)))
		gdx_test_fail(__FILE__, __LINE__, "not loaded: %s", why);
	ASSERT_EQ(gdx_topo_ngpus(t), 2);
	ASSERT_EQ(gdx_topo_nnics(t), 1);
	ASSERT_STR_EQ(path(t, "0000:31:00.0", "mlx5_0"), "SYS");
	ASSERT_EQ(gdx_topo_nic(t, 0)->numa, 1);
	gdx_topo_free(t);
}

/* text with every "from" replaced by "to"; the caller frees it. */
static char *replace_all(const char *text, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), n = 0;
	char *out, *o;

	for (const char *p = strstr(text, from); p; p = strstr(p + nf, from))
		n++;
	out = calloc(1, strlen(text) + n * nt + 1);
	ASSERT(out != NULL);
	o = out;
	for (const char *p = text, *q; (q = strstr(p, from)); p = q + nf) {
		memcpy(o, p, (size_t)(q - p));
		o += q - p;
		memcpy(o, to, nt);
		o += nt;
		text = q + nf;
	}
	strcpy(o, text);
	return out;
}

/*
 * Published hwloc dumps: lstopo's output with comments, saved on Windows,
 * re-indented. hwloc's parser without libxml2 (this test machine's) refuses
 * all of these; gdx_topo_load() reads them.
 */
static void test_xml_as_published(void)
{
	char *text = fixture_text("remote-nic"), *edited, *body, *with_bom;
	struct gdx_topo *t = load("published-comments");

	ASSERT_STR_EQ(path(t, "0000:17:00.0", "mlx5_0"), "SYS");
	gdx_topo_free(t);
	/* CRLF line ends. */
	edited = replace_all(text, "\n", "\r\n");
	check_remote_nic_text(edited);
	free(edited);
	/* A comment between two elements, holding markup. */
	edited = replace_all(text, "<info name=\"OSName\"",
			     "<!-- a > b <c/> --><info name=\"OSName\"");
	check_remote_nic_text(edited);
	free(edited);
	/* A byte order mark, blank lines and a stylesheet before <topology>. */
	body = replace_all(text, "<!DOCTYPE",
			   "\n<?xml-stylesheet type=\"text/xsl\" href=\"t.xsl\"?>\n\n<!DOCTYPE");
	with_bom = calloc(1, strlen(body) + 5);
	ASSERT(with_bom != NULL);
	snprintf(with_bom, strlen(body) + 5, "\xef\xbb\xbf\n%s", body);
	check_remote_nic_text(with_bom);
	free(with_bom);
	free(body);
	/* All on one line: declaration, DOCTYPE and <topology> too. */
	edited = replace_all(text, "\n", "");
	check_remote_nic_text(edited);
	free(edited);
	free(text);
}

static void test_xml_refused_with_reason(void)
{
	char *text = fixture_text("remote-nic"), *edited, why[512];
	struct gdx_topo *t = NULL;
	int ret;

	/* A comment never closed: where it starts. */
	edited = replace_all(text, "<info name=\"OSName\"", "<!-- oops\n<info name=\"OSName\"");
	ASSERT_EQ(load_text(edited, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "the XML comment that starts on line 6 is never closed");
	free(edited);
	/* Cut short. */
	text[strlen(text) / 2] = '\0';
	ASSERT_EQ(load_text(text, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "it ends before </topology>");
	free(text);
	/* hwloc 3.0's format: named, with the hwloc that reads it. */
	ret = gdx_topo_load(FIXTURES "unreadable/hwloc3-format.xml", &t, why, sizeof(why));
	if (hwloc_get_api_version() < 0x00030000) {
		ASSERT_EQ(ret, -EINVAL);
		ASSERT_STR_CONTAINS(why, "is an hwloc 3.0 XML topology, a format this hwloc (");
		ASSERT_STR_CONTAINS(why, "use hwloc 3.0 or later");
		ASSERT_STR_CONTAINS(why, "--export-xml-flags v2");
	} else {
		ASSERT_EQ(ret, 0);
		gdx_topo_free(t);
	}
	/* Single quotes, well-formed XML that only libxml2 reads. */
	text = fixture_text("remote-nic");
	edited = replace_all(text, "\"", "'");
	ret = load_text_topo(edited, &t, why, sizeof(why));
	if (ret) {
		ASSERT_EQ(ret, -EINVAL);
		ASSERT_STR_CONTAINS(why, "hwloc's built-in XML parser cannot read it");
		ASSERT_STR_CONTAINS(why, "libhwloc-plugins");
	}
	gdx_topo_free(t);
	free(edited);
	free(text);
}

static void test_xml_too_large(void)
{
	char path[] = "/tmp/gdx-topo-XXXXXX", why[256];
	struct gdx_topo *t = NULL;
	int fd = mkstemp(path);

	/* Sparse: found out by its size, not read. */
	ASSERT(fd >= 0);
	ASSERT_EQ(ftruncate(fd, (64 << 20) + 1), 0);
	close(fd);
	ASSERT_EQ(gdx_topo_load(path, &t, why, sizeof(why)), -EFBIG);
	ASSERT_STR_CONTAINS(why, "is larger than 64 MiB");
	unlink(path);
	ASSERT(t == NULL);
}

static void test_not_hwloc_xml(void)
{
	char why[256];

	ASSERT_EQ(load_text("mlx5_0 0000:18:00.0\n", why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "not an hwloc XML topology");
	ASSERT_EQ(load_text("", why, sizeof(why)), -EINVAL);
	ASSERT_EQ(load_text("<?xml version=\"1.0\"?><html><body/></html>\n", why, sizeof(why)),
		  -EINVAL);
	/* Cut in the middle of an object. */
	ASSERT_EQ(load_text("<?xml version=\"1.0\"?><topology version=\"2.0\"><object type=\"Mach",
			    why, sizeof(why)),
		  -EINVAL);
	{
		struct gdx_topo *t = NULL;

		ASSERT_EQ(gdx_topo_load(FIXTURES, &t, why, sizeof(why)), -EINVAL);
		ASSERT_STR_CONTAINS(why, "directory");
	}
}

/* A file nested 100,000 elements deep: hwloc's import recurses once per
 * level and would overflow the stack; refused before hwloc sees it, with
 * the bound. One deep as a machine is read as before. */
static char *nested(int depth)
{
	static const char head[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<topology version=\"2.0\">\n"
		"<object type=\"Machine\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
		"allowed_cpuset=\"0x1\" nodeset=\"0x1\" complete_nodeset=\"0x1\" "
		"allowed_nodeset=\"0x1\" gp_index=\"1\">\n";
	static const char open_tag[] =
		"<object type=\"Group\" cpuset=\"0x1\" complete_cpuset=\"0x1\" nodeset=\"0x1\" "
		"complete_nodeset=\"0x1\" gp_index=\"%d\">\n";
	static const char close_tag[] = "</object>\n";
	size_t len =
		sizeof(head) + (size_t)depth * (sizeof(open_tag) + 8 + sizeof(close_tag)) + 256;
	char *text = malloc(len), *p = text;

	ASSERT(text != NULL);
	p += sprintf(p, "%s", head);
	for (int i = 0; i < depth; i++)
		p += sprintf(p, open_tag, i + 2);
	p += sprintf(p,
		     "<object type=\"PU\" os_index=\"0\" cpuset=\"0x1\" complete_cpuset=\"0x1\" "
		     "nodeset=\"0x1\" complete_nodeset=\"0x1\" gp_index=\"%d\"/>\n",
		     depth + 2);
	for (int i = 0; i < depth; i++)
		p += sprintf(p, "%s", close_tag);
	sprintf(p, "</object>\n</topology>\n");
	return text;
}

static void test_xml_nested_too_deep(void)
{
	char *text = nested(100000), why[512];

	ASSERT_EQ(load_text(text, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "its elements nest deeper than 256 levels (line 258)");
	free(text);
	text = nested(200);
	ASSERT_EQ(load_text(text, why, sizeof(why)), -EINVAL); /* no NUMA node: hwloc's no */
	ASSERT(!strstr(why, "nest deeper"));
	free(text);
}

/* NCCL_GDX_TOPO_FILE, the plugin's own input, naming a FIFO: refused at
 * once by its type (its open waited for a writer, init with it). */
static void test_xml_fifo_refused(void)
{
	char path[64] = "/tmp/gdx-topo-fifo-XXXXXX", why[256];
	struct gdx_topo *t = NULL;

	ASSERT(mkdtemp(path) != NULL);
	strcat(path, "/topo.xml");
	ASSERT_EQ(mkfifo(path, 0600), 0);
	ASSERT_EQ(gdx_topo_load(path, &t, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, "topo.xml is a FIFO, not a file: not read");
	ASSERT(t == NULL);
	unlink(path);
	*strrchr(path, '/') = '\0';
	rmdir(path);
}

static void test_live_machine(void)
{
	struct gdx_topo *t = NULL;
	char why[256];

	/* Whatever this machine has; only that it loads and is consistent. */
	ASSERT_EQ(gdx_topo_load(NULL, &t, why, sizeof(why)), 0);
	for (int g = 0; g < gdx_topo_ngpus(t); g++)
		for (int n = 0; n < gdx_topo_nnics(t); n++)
			ASSERT(gdx_topo_path(t, g, n) >= GDX_PATH_PIX &&
			       gdx_topo_path(t, g, n) <= GDX_PATH_UNKNOWN);
	gdx_topo_free(t);
}

static void *read_all(void *arg)
{
	const struct gdx_topo *t = arg;
	long sum = 0;
	int nics[16];

	for (int round = 0; round < 2000; round++)
		for (int g = 0; g < gdx_topo_ngpus(t); g++) {
			int n = gdx_topo_gpu_group(t, g, nics, 16);

			for (int i = 0; i < n; i++)
				sum += nics[i] + (long)gdx_topo_path(t, g, nics[i]);
		}
	return (void *)sum;
}

static void test_concurrent_readers(void)
{
	struct gdx_topo *t = load("dgx-a100");
	pthread_t th[4];
	void *res[4];

	for (int i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, read_all, t), 0);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(pthread_join(th[i], &res[i]), 0);
	for (int i = 1; i < 4; i++)
		ASSERT(res[i] == res[0]);
	ASSERT(res[0] == read_all(t));
	gdx_topo_free(t);
}

/* A fused device's far members (NCCL issue 2310's node): the GPU nearest the
 * first member is the one it serves; a member that GPU reaches through the
 * host bridge stands by where another shares its switch; none does where
 * every member is as near (vm-rails, two NICs per GPU), where none is near,
 * or where the topology cannot place a member. */
static void test_far_members(void)
{
	struct gdx_topo *t = load("vm-far-rail");
	const char *fused[] = {"rxe1", "rxe3"}, *rev[] = {"rxe3", "rxe1"},
		   *recv[] = {"rxe0", "rxe2"}, *unknown[] = {"rxe0", "mlx5_9"};
	enum gdx_path cls[2];
	int gpu = -1;

	ASSERT_EQ(gdx_topo_far_members(t, fused, 2, &gpu, cls), 1u << 1);
	ASSERT_EQ(strcmp(gdx_topo_gpu(t, gpu)->pci, "0000:1e:00.0"), 0);
	ASSERT_EQ(cls[0], GDX_PATH_PIX);
	ASSERT_EQ(cls[1], GDX_PATH_PHB);
	ASSERT_EQ(gdx_topo_far_members(t, recv, 2, &gpu, NULL), 1u << 1);
	ASSERT_EQ(strcmp(gdx_topo_gpu(t, gpu)->pci, "0000:19:00.0"), 0);
	/* led by the far NIC: no GPU has it near, so no member is near */
	ASSERT_EQ(gdx_topo_far_members(t, rev, 2, NULL, NULL), 0);
	ASSERT_EQ(gdx_topo_far_members(t, unknown, 2, NULL, NULL), 0);
	gdx_topo_free(t);
	t = load("vm-rails");
	ASSERT_EQ(gdx_topo_far_members(t, recv, 2, NULL, NULL), 0);
	gdx_topo_free(t);
	t = load("rxe-only");
	ASSERT_EQ(gdx_topo_far_members(t, recv, 2, NULL, NULL), 0);
	gdx_topo_free(t);
}

GDX_TESTS_MAIN(TEST(test_path_names, 5), TEST(test_h100_one_pix_nic_per_gpu, 10),
	       TEST(test_h100_nic_order_and_nearest_first, 10),
	       TEST(test_h100_groups_and_standalone_nics, 10), TEST(test_a100_pxb_shared_rails, 10),
	       TEST(test_nps4_own_socket_first, 10), TEST(test_snc_own_socket_first, 10),
	       TEST(test_no_locality_is_unknown, 10), TEST(test_two_nics_per_gpu, 10),
	       TEST(test_cascaded_switch_pix_and_pxb, 10), TEST(test_remote_nic_is_sys, 10),
	       TEST(test_cloud_vm_flat_is_phb, 10), TEST(test_no_gpu, 10), TEST(test_no_nic, 10),
	       TEST(test_nic_without_pci_parent, 10), TEST(test_pcie_tree, 10), TEST(test_find, 10),
	       TEST(test_missing_file, 10), TEST(test_not_hwloc_xml, 10),
	       TEST(test_xml_as_published, 10), TEST(test_xml_refused_with_reason, 10),
	       TEST(test_xml_too_large, 10), TEST(test_xml_nested_too_deep, 30),
	       TEST(test_xml_fifo_refused, 10), TEST(test_live_machine, 30),
	       TEST(test_concurrent_readers, 30), TEST(test_far_members, 10))
