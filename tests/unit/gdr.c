/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA verdicts on the fixtures of tests/lib/fixtures/sysfs-gdr (each a
 * sysfs root with its hwloc XML and a facts file, written by gen_fixtures.py
 * there): what each NIC advertises under every NCCL_GDX_GDR policy, the
 * reason and fix sentences, the lines the plugin logs, and the facts behind
 * them (ACS, IOMMU, BAR1, memlock, peer memory, DMA-BUF, CUDA).
 */
#include <errno.h>
#include <unistd.h>

#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_facts.h"
#include "gdr/gdx_gdr_verdict.h"
#include "tools/common/gdx_gdr_names.h"
#include "tools/common/gdx_gdr_pair.h"
#include <nccl/net_common.h>

#include "gdx_test.h"

#define FIXTURES "tests/lib/fixtures/sysfs-gdr/"

#define ASSERT_STR_EQ(a, b)                                                                    \
	do {                                                                                   \
		const char *_x = (a), *_y = (b);                                               \
		if (strcmp(_x, _y))                                                            \
			gdx_test_fail(__FILE__, __LINE__, "%s: \"%s\" != \"%s\"", #a, _x, _y); \
	} while (0)

static struct gdx_gdr_probe *load(const char *name)
{
	char root[256], xml[256], facts[256], why[256];
	struct gdx_gdr_opts o = {.sysfs_root = root, .xml = xml, .facts = facts};
	struct gdx_gdr_probe *p = NULL;
	int ret;

	snprintf(root, sizeof(root), FIXTURES "%s", name);
	snprintf(xml, sizeof(xml), FIXTURES "%s/topo.xml", name);
	snprintf(facts, sizeof(facts), FIXTURES "%s/facts", name);
	ret = gdx_gdr_probe_init(&o, &p, why, sizeof(why));
	if (ret)
		gdx_test_fail(__FILE__, __LINE__, "probing %s: %d (%s)", name, ret, why);
	return p;
}

static struct gdx_gdr_verdict nic(const struct gdx_gdr_probe *p, const char *name,
				  enum gdx_gdr_policy pol)
{
	struct gdx_gdr_verdict v;

	ASSERT_EQ(gdx_gdr_nic_verdict(p, name, pol, &v), 0);
	return v;
}

static struct gdx_gdr_verdict pair(const struct gdx_gdr_probe *p, const char *gpu, const char *name,
				   enum gdx_gdr_policy pol)
{
	struct gdx_gdr_verdict v;
	int g = gdx_gdr_find_gpu(p, gpu), n = gdx_gdr_find_nic(p, name);

	ASSERT(g >= 0 && n >= 0);
	ASSERT_EQ(gdx_gdr_pair_verdict(p, g, n, pol, &v), 0);
	return v;
}

/* Every policy: off is host only; on is auto, or broken where auto stages. */
static void assert_policies(const struct gdx_gdr_probe *p, const char *name)
{
	struct gdx_gdr_verdict a = nic(p, name, GDX_GDR_POLICY_AUTO);
	struct gdx_gdr_verdict on = nic(p, name, GDX_GDR_POLICY_ON);
	struct gdx_gdr_verdict off = nic(p, name, GDX_GDR_POLICY_OFF);
	char line[GDX_GDR_LINE_LEN];

	ASSERT_EQ(off.mode, GDX_GDR_STAGED);
	ASSERT_EQ(off.ptr_support, NCCL_PTR_HOST);
	snprintf(line, sizeof(line), "%s: staged through host memory: NCCL_GDX_GDR=off", name);
	ASSERT_STR_EQ(off.line, line);
	ASSERT(!off.warn);
	if (a.mode == GDX_GDR_DIRECT) {
		ASSERT_EQ(on.mode, GDX_GDR_DIRECT);
		ASSERT_EQ(on.ptr_support, a.ptr_support);
		ASSERT_STR_EQ(on.line, a.line);
		ASSERT(a.ptr_support & (NCCL_PTR_CUDA | NCCL_PTR_DMABUF));
	} else {
		ASSERT_EQ(a.mode, GDX_GDR_STAGED);
		ASSERT_EQ(a.ptr_support, NCCL_PTR_HOST);
		ASSERT_EQ(on.mode, GDX_GDR_BROKEN);
		ASSERT_EQ(on.ptr_support, NCCL_PTR_HOST);
		ASSERT(on.warn);
		snprintf(line, sizeof(line),
			 "%s: NCCL_GDX_GDR=on, but GPU memory cannot be registered: %s", name,
			 a.reason);
		ASSERT_STR_CONTAINS(on.line, line);
	}
	ASSERT(a.ptr_support & NCCL_PTR_HOST);
}

static void test_names(void)
{
	enum gdx_gdr_policy pol;
	char bits[128];

	ASSERT_EQ(gdx_gdr_policy_parse("", &pol), 0);
	ASSERT_EQ(pol, GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(gdx_gdr_policy_parse("auto", &pol), 0);
	ASSERT_EQ(pol, GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(gdx_gdr_policy_parse("on", &pol), 0);
	ASSERT_EQ(pol, GDX_GDR_POLICY_ON);
	ASSERT_EQ(gdx_gdr_policy_parse("OFF", &pol), 0);
	ASSERT_EQ(pol, GDX_GDR_POLICY_OFF);
	ASSERT_EQ(gdx_gdr_policy_parse("1", &pol), -EINVAL);
	ASSERT_STR_EQ(gdx_gdr_policy_name(GDX_GDR_POLICY_ON), "on");
	ASSERT_STR_EQ(gdx_gdr_mode_name(GDX_GDR_DIRECT), "direct");
	ASSERT_STR_EQ(gdx_gdr_mode_name(GDX_GDR_STAGED), "staged");
	ASSERT_STR_EQ(gdx_gdr_mode_name(GDX_GDR_BROKEN), "broken");
	ASSERT_STR_EQ(gdx_gdr_acs_name(GDX_GDR_ACS_UNKNOWN), "unknown");
	ASSERT_STR_EQ(gdx_gdr_iommu_name(GDX_GDR_IOMMU_TRANSLATING), "translating");
	gdx_gdr_acs_bits(0x2d, bits, sizeof(bits));
	ASSERT_STR_EQ(bits, "SrcValid ReqRedir CmpltRedir EgressCtrl");
	ASSERT(gdx_gdr_dmabuf_errno_ok(EBADF));
	ASSERT(!gdx_gdr_dmabuf_errno_ok(EOPNOTSUPP));
	ASSERT(!gdx_gdr_dmabuf_errno_ok(EPROTONOSUPPORT));
}

static void test_healthy(void)
{
	struct gdx_gdr_probe *p = load("healthy");
	struct gdx_gdr_verdict v;
	const struct gdx_gdr_path *path;
	char text[512];

	ASSERT_EQ(p->ngpus, 2);
	ASSERT_EQ(p->nnics, 2);
	ASSERT(p->peermem);
	ASSERT_STR_EQ(p->peermem_marker, "module/nvidia_peermem/version");
	ASSERT_EQ(p->kernel_major, 6);
	ASSERT_EQ(p->cuda, GDX_GDR_CUDA_OK);
	ASSERT_EQ(p->cuda_version, 12040);
	ASSERT_EQ(p->gpus[0].bar1, 128ULL << 30);
	ASSERT_EQ(p->gpus[0].iommu, GDX_GDR_IOMMU_IDENTITY);
	ASSERT_EQ(p->nics[0].iommu, GDX_GDR_IOMMU_IDENTITY);
	ASSERT_STR_EQ(p->nics[0].pci, "0000:18:00.0");
	ASSERT_EQ(p->nics[0].dmabuf, 1);
	ASSERT_EQ(gdx_gdr_memlock_check(p, text, sizeof(text)), GDX_GDR_LEVEL_OK);
	ASSERT_STR_EQ(text, "memlock limit unlimited");
	ASSERT_EQ(gdx_gdr_bar1_check(p, 0, text, sizeof(text)), GDX_GDR_LEVEL_OK);

	/* GPU 0 and mlx5_0 share a switch: its two downstream ports and the
	 * upstream port between them, ACS capability present, SrcValid only. */
	path = gdx_gdr_path(p, 0, 0);
	ASSERT_EQ(path->cls, GDX_PATH_PIX);
	ASSERT_EQ(path->acs, GDX_GDR_ACS_OFF);
	ASSERT_EQ(path->nbridges, 3);
	/* Across host bridges: both root ports, switches and their ports. */
	path = gdx_gdr_path(p, 0, 1);
	ASSERT_EQ(path->cls, GDX_PATH_NODE);
	ASSERT_EQ(path->nbridges, 6);

	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
	ASSERT_STR_EQ(v.via, "dma-buf and nvidia_peermem");
	ASSERT_STR_EQ(
		v.line,
		"mlx5_0: GPUDirect RDMA via dma-buf and nvidia_peermem (GPU 0000:1b:00.0, PIX)");
	ASSERT(!v.warn);
	ASSERT_EQ(v.degraded, 0);
	v = nic(p, "mlx5_1", GDX_GDR_POLICY_AUTO);
	ASSERT_STR_EQ(
		v.line,
		"mlx5_1: GPUDirect RDMA via dma-buf and nvidia_peermem (GPU 0000:43:00.0, PIX)");
	assert_policies(p, "mlx5_0");
	assert_policies(p, "mlx5_1");

	v = pair(p, "0000:1b:00.0", "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_STR_EQ(v.reason, "GPUDirect RDMA via dma-buf and nvidia_peermem");
	ASSERT_STR_EQ(v.fix, "");
	/* NODE is beyond NCCL's default level: staged by NCCL, not degraded. */
	v = pair(p, "0000:1b:00.0", "mlx5_1", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_STAGED);
	ASSERT_EQ(v.degraded, 0);
	ASSERT_STR_EQ(v.reason, "NCCL of unknown version (judged as 2.30) stages it through host "
				"memory: PHB is beyond NCCL_NET_GDR_LEVEL=P2C (NCCL's default with "
				"NCCL_NET_GDR_C2C=1)");
	ASSERT_STR_CONTAINS(v.fix, "use a NIC behind the GPU's PCIe switch");
	ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
	gdx_gdr_probe_free(p);
}

static void test_gdr_level_env(void)
{
	struct gdx_gdr_probe *p;
	struct gdx_gdr_verdict v;

	setenv("NCCL_NET_GDR_LEVEL", "PHB", 1);
	p = load("healthy");
	v = pair(p, "0000:1b:00.0", "mlx5_1", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	gdx_gdr_probe_free(p);
	setenv("NCCL_NET_GDR_LEVEL", "PIX", 1);
	p = load("healthy");
	ASSERT_EQ(gdx_gdr_rule_level(&p->rule), GDX_NCCL_PIX);
	ASSERT_EQ(pair(p, "0000:1b:00.0", "mlx5_0", GDX_GDR_POLICY_AUTO).mode, GDX_GDR_DIRECT);
	ASSERT_EQ(pair(p, "0000:1b:00.0", "mlx5_1", GDX_GDR_POLICY_AUTO).mode, GDX_GDR_STAGED);
	gdx_gdr_probe_free(p);
	/* NCCL compares the names exactly: "phb" is no level, the default holds */
	setenv("NCCL_NET_GDR_LEVEL", "phb", 1);
	p = load("healthy");
	v = pair(p, "0000:1b:00.0", "mlx5_1", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_STAGED);
	ASSERT_STR_CONTAINS(v.reason, "NCCL's default with NCCL_NET_GDR_C2C=1; it ignores "
				      "NCCL_NET_GDR_LEVEL=phb");
	gdx_gdr_probe_free(p);
	unsetenv("NCCL_NET_GDR_LEVEL");
}

/* The plugin's line on a GH200 (the GPU on NVLink-C2C to its Grace, the NIC
 * on another root port) names what the NCCL that loaded it does there. */
static void test_grace_line_by_nccl(void)
{
	struct gdx_gdr_probe *p = load("gh200");
	struct gdx_gdr_verdict v;

	ASSERT_EQ(p->rule.version, 22809); /* the fixture's facts: nccl 2.28.9 */
	ASSERT_EQ(p->gpus[0].c2c, 1);
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.nccl_path, GDX_NCCL_P2C);
	ASSERT_EQ(v.nccl_within, 1);
	ASSERT(!v.warn);
	ASSERT_STR_CONTAINS(v.line,
			    "NODE; NCCL 2.28.9 uses it at P2C, within NCCL_NET_GDR_LEVEL=PXB");
	p->rule.version = 22503;
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.nccl_path, GDX_NCCL_PHB);
	ASSERT_EQ(v.nccl_within, 0);
	ASSERT_STR_CONTAINS(v.line, "NCCL 2.25.3 stages it through host memory: PHB is beyond");
	/* C2C unknown (a driver without the fields): either way, said so */
	p->rule.version = 22809;
	p->gpus[0].c2c = -1;
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.nccl_within, -1);
	ASSERT_STR_CONTAINS(v.line, "direct if this GPU is C2C-attached, as on Grace (P2C");
	gdx_gdr_probe_free(p);
}

static void test_no_peermem(void)
{
	struct gdx_gdr_probe *p = load("no-peermem");
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT(!p->peermem);
	ASSERT_EQ(p->kernel_major, 5);
	ASSERT_EQ(p->kernel_minor, 4);
	ASSERT_EQ(v.mode, GDX_GDR_STAGED);
	ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST);
	ASSERT_STR_EQ(v.reason, "nvidia_peermem not loaded and dma-buf unsupported (kernel 5.4)");
	ASSERT_STR_EQ(v.fix, "modprobe nvidia_peermem");
	ASSERT_STR_EQ(v.line, "mlx5_0: staged through host memory: nvidia_peermem not loaded and "
			      "dma-buf unsupported (kernel 5.4); fix: modprobe nvidia_peermem");
	ASSERT(!v.warn);
	assert_policies(p, "mlx5_0");
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_ON);
	ASSERT_STR_EQ(v.line,
		      "mlx5_0: NCCL_GDX_GDR=on, but GPU memory cannot be registered: "
		      "nvidia_peermem not loaded and dma-buf unsupported (kernel 5.4); fix: "
		      "modprobe nvidia_peermem");
	v = pair(p, "0000:1b:00.0", "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_STAGED);
	ASSERT_STR_EQ(v.fix, "modprobe nvidia_peermem");
	gdx_gdr_probe_free(p);
}

static void test_dmabuf_unsupported(void)
{
	struct gdx_gdr_probe *p = load("dmabuf-unsupported");
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT_EQ(p->nics[0].dmabuf, 0);
	ASSERT_EQ(p->nics[0].dmabuf_errno, EOPNOTSUPP);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA);
	ASSERT_STR_EQ(v.line, "mlx5_0: GPUDirect RDMA via nvidia_peermem (GPU 0000:1b:00.0, PIX)");
	assert_policies(p, "mlx5_0");
	gdx_gdr_probe_free(p);
}

static void test_dmabuf_only(void)
{
	struct gdx_gdr_probe *p = load("dmabuf-only");
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT(!p->peermem);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST | NCCL_PTR_DMABUF);
	ASSERT_STR_EQ(v.line, "mlx5_0: GPUDirect RDMA via dma-buf (GPU 0000:1b:00.0, PIX)");
	assert_policies(p, "mlx5_0");

	/* The same machine, facts changed one at a time: verdicts are pure. */
	p->cuda_version = 11040;
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_STR_EQ(v.reason, "nvidia_peermem not loaded and dma-buf unsupported (CUDA driver "
				"11.4; needs 11.7)");
	p->cuda_version = 12040;
	p->gpus[0].dmabuf_attr = 0;
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_STR_EQ(v.reason,
		      "nvidia_peermem not loaded and dma-buf unsupported (no GPU exports dma-buf)");
	p->gpus[0].dmabuf_attr = 1;
	p->nics[0].dmabuf = -1;
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_STR_EQ(v.reason, "nvidia_peermem not loaded and dma-buf not probed");
	p->nics[0].dmabuf = 1;
	p->gpus[0].gdr_attr = 0;
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_STAGED);
	ASSERT_STR_CONTAINS(v.reason, "no GPU supports GPUDirect RDMA");
	p->gpus[0].gdr_attr = 1;
	p->cuda = GDX_GDR_CUDA_ERROR;
	snprintf(p->cuda_why, sizeof(p->cuda_why), "cuInit failed with CUDA error 999");
	v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_STR_EQ(v.reason,
		      "the CUDA driver does not work (cuInit failed with CUDA error 999)");
	gdx_gdr_probe_free(p);
}

static void test_legacy_peermem(void)
{
	struct gdx_gdr_probe *p = load("legacy-peermem");
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT(p->peermem);
	ASSERT_STR_EQ(p->peermem_name, "nv_peer_mem");
	ASSERT_STR_EQ(p->peermem_marker, "kernel/mm/memory_peers/nv_mem/version");
	ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA);
	ASSERT_STR_EQ(v.line, "mlx5_0: GPUDirect RDMA via nv_peer_mem (GPU 0000:1b:00.0, PIX)");
	gdx_gdr_probe_free(p);
}

static void test_acs(void)
{
	struct gdx_gdr_probe *p = load("acs");
	const struct gdx_gdr_path *path = gdx_gdr_path(p, 0, 0);
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT_EQ(path->acs, GDX_GDR_ACS_ON);
	ASSERT_STR_EQ(path->acs_bridge, "0000:17:01.0");
	ASSERT_EQ(path->acs_ctrl, 0x0d);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.degraded, GDX_GDR_DEG_ACS);
	ASSERT(v.warn);
	ASSERT_STR_EQ(v.degraded_why, "ACS on bridge 0000:17:01.0 (ReqRedir CmpltRedir) sends "
				      "peer-to-peer traffic up to the root complex");
	ASSERT_STR_EQ(v.fix, "disable it (setpci -s 0000:17:01.0 ECAP_ACS+6.w=0, or in the BIOS)");
	ASSERT_STR_EQ(v.line, "mlx5_0: GPUDirect RDMA via dma-buf and nvidia_peermem (GPU "
			      "0000:1b:00.0, PIX), degraded: ACS on bridge 0000:17:01.0 (ReqRedir "
			      "CmpltRedir) sends peer-to-peer traffic up to the root complex; fix: "
			      "disable it (setpci -s 0000:17:01.0 ECAP_ACS+6.w=0, or in the BIOS)");
	/* Still advertised: registration works, the traffic is slower. */
	ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST | NCCL_PTR_CUDA | NCCL_PTR_DMABUF);
	v = pair(p, "0000:1b:00.0", "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.degraded, GDX_GDR_DEG_ACS);
	assert_policies(p, "mlx5_0");
	gdx_gdr_probe_free(p);
}

static void test_acs_unreadable(void)
{
	struct gdx_gdr_probe *p = load("acs-unreadable");
	const struct gdx_gdr_path *path = gdx_gdr_path(p, 0, 0);
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT_EQ(path->acs, GDX_GDR_ACS_UNKNOWN);
	ASSERT_STR_EQ(path->acs_bridge, "0000:16:00.0");
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.degraded, 0);
	ASSERT(!v.warn);
	gdx_gdr_probe_free(p);
}

static void test_iommu_translating(void)
{
	struct gdx_gdr_probe *p = load("iommu-translating");
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT_EQ(p->gpus[0].iommu, GDX_GDR_IOMMU_TRANSLATING);
	ASSERT_STR_EQ(p->gpus[0].iommu_type, "DMA-FQ");
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.degraded, GDX_GDR_DEG_IOMMU);
	ASSERT(v.warn);
	ASSERT_STR_EQ(
		v.degraded_why,
		"the IOMMU translates DMA addresses of 0000:1b:00.0 and 0000:18:00.0 (DMA-FQ)");
	ASSERT_STR_EQ(v.fix, "boot with iommu=pt (pass-through), or turn the IOMMU off");
	assert_policies(p, "mlx5_0");
	gdx_gdr_probe_free(p);
}

static void test_remote_nic(void)
{
	struct gdx_gdr_probe *p = load("remote-nic");
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT_EQ(gdx_gdr_path(p, 0, 0)->cls, GDX_PATH_SYS);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.degraded, GDX_GDR_DEG_SYS);
	ASSERT(v.warn);
	ASSERT_STR_EQ(v.line, "mlx5_0: GPUDirect RDMA via dma-buf and nvidia_peermem (GPU "
			      "0000:17:00.0, SYS; NCCL of unknown version (judged as 2.30) stages "
			      "it through host memory: SYS is beyond NCCL_NET_GDR_LEVEL=P2C "
			      "(NCCL's default with NCCL_NET_GDR_C2C=1)), degraded: GPU and NIC "
			      "are on different "
			      "sockets (SYS): traffic crosses the CPU interconnect; fix: use a NIC "
			      "on the GPU's socket");
	v = pair(p, "0000:17:00.0", "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_STAGED);
	ASSERT_EQ(v.degraded, GDX_GDR_DEG_SYS);
	ASSERT_STR_CONTAINS(v.reason, "through host memory: SYS is beyond NCCL_NET_GDR_LEVEL=P2C");
	ASSERT_STR_EQ(v.fix, "use a NIC on the GPU's socket");
	gdx_gdr_probe_free(p);

	setenv("NCCL_NET_GDR_LEVEL", "SYS", 1);
	p = load("remote-nic");
	v = pair(p, "0000:17:00.0", "mlx5_0", GDX_GDR_POLICY_AUTO);
	ASSERT_EQ(v.mode, GDX_GDR_DIRECT);
	ASSERT_EQ(v.degraded, GDX_GDR_DEG_SYS);
	gdx_gdr_probe_free(p);
}

static void test_bar1_tiny(void)
{
	struct gdx_gdr_probe *p = load("bar1-tiny");
	char text[512];

	ASSERT_EQ(p->gpus[0].bar1, 128ULL << 20);
	ASSERT_EQ(gdx_gdr_bar1_check(p, 0, text, sizeof(text)), GDX_GDR_LEVEL_DEGRADED);
	ASSERT_STR_CONTAINS(text, "GPU 0000:1b:00.0 has a tiny BAR1 (128 MiB, under 256 MiB)");
	ASSERT_STR_CONTAINS(text, "fix: enable large BAR");
	/* BAR1 limits CPU mappings, not the NIC: the verdict stands. */
	ASSERT_EQ(nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO).mode, GDX_GDR_DIRECT);
	ASSERT_EQ(nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO).degraded, 0);
	gdx_gdr_probe_free(p);
}

static void test_memlock_low(void)
{
	struct gdx_gdr_probe *p = load("memlock-low");
	char text[512];

	ASSERT_EQ(p->memlock, 8ULL << 20);
	ASSERT_EQ(gdx_gdr_memlock_check(p, text, sizeof(text)), GDX_GDR_LEVEL_BROKEN);
	ASSERT_STR_CONTAINS(text, "memlock limit 8 MiB is below 64 MiB");
	ASSERT_STR_CONTAINS(text, "fix: ulimit -l unlimited");
	gdx_gdr_probe_free(p);
}

/* The port problems are gdx-doctor's (tests/check/doctor_gdr.sh); GPU memory
 * registration does not depend on them. */
static void test_port_cases(void)
{
	static const char *const cases[] = {"roce-no-v2", "port-down"};

	for (int i = 0; i < 2; i++) {
		struct gdx_gdr_probe *p = load(cases[i]);

		ASSERT_EQ(nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO).mode, GDX_GDR_DIRECT);
		gdx_gdr_probe_free(p);
	}
}

static void test_no_cuda(void)
{
	struct gdx_gdr_probe *p = load("no-cuda");
	struct gdx_gdr_verdict v = nic(p, "mlx5_0", GDX_GDR_POLICY_AUTO);

	ASSERT_EQ(p->cuda, GDX_GDR_CUDA_NONE);
	ASSERT_EQ(p->ngpus, 1); /* from the topology */
	ASSERT_EQ(p->gpus[0].cuda_index, -1);
	ASSERT_EQ(v.mode, GDX_GDR_STAGED);
	ASSERT_STR_EQ(v.line, "mlx5_0: staged through host memory: the NVIDIA GPUs have no CUDA "
			      "driver (libcuda.so.1 cannot be loaded); fix: install the NVIDIA "
			      "driver, which provides libcuda.so.1");
	assert_policies(p, "mlx5_0");
	gdx_gdr_probe_free(p);
}

static void test_rxe_vm(void)
{
	struct gdx_gdr_probe *p = load("rxe-vm");
	struct gdx_gdr_verdict v = nic(p, "rxe0", GDX_GDR_POLICY_AUTO);

	ASSERT_EQ(p->ngpus, 0);
	ASSERT_STR_EQ(p->nics[0].pci, "");
	ASSERT_EQ(p->nics[0].iommu, GDX_GDR_IOMMU_OFF);
	ASSERT_EQ(v.mode, GDX_GDR_STAGED);
	ASSERT_EQ(v.ptr_support, NCCL_PTR_HOST);
	ASSERT_STR_EQ(v.line, "rxe0: staged through host memory: no NVIDIA GPU (no CUDA driver)");
	ASSERT_STR_EQ(v.fix, "");
	assert_policies(p, "rxe0");

	/* A GPU appears: rxe still cannot reach its memory. */
	p->cuda = GDX_GDR_CUDA_OK;
	p->cuda_version = 12040;
	p->ngpus = 1;
	snprintf(p->gpus[0].pci, sizeof(p->gpus[0].pci), "0000:01:00.0");
	p->gpus[0].cuda_index = 0;
	p->gpus[0].gdr_attr = 1;
	p->gpus[0].dmabuf_attr = 1;
	v = nic(p, "rxe0", GDX_GDR_POLICY_AUTO);
	ASSERT_STR_EQ(v.line, "rxe0: staged through host memory: rxe0 has no PCI device (software "
			      "RDMA), so it cannot reach GPU memory; fix: use a hardware RDMA NIC "
			      "(ConnectX-5 or later) for GPU traffic");
	gdx_gdr_probe_free(p);
}

/* Without a facts file the CUDA driver is dlopen'ed; a missing one is a fact. */
static void test_live_without_cuda(void)
{
	struct gdx_gdr_opts o = {.sysfs_root = FIXTURES "rxe-vm",
				 .xml = FIXTURES "rxe-vm/topo.xml",
				 .cuda_lib = "libcuda-gdx-test-missing.so.1"};
	struct gdx_gdr_probe *p;
	struct gdx_gdr_verdict v;
	char why[256];

	ASSERT_EQ(gdx_gdr_probe_init(&o, &p, why, sizeof(why)), 0);
	ASSERT(!p->from_facts);
	ASSERT_EQ(p->cuda, GDX_GDR_CUDA_NONE);
	ASSERT_STR_EQ(p->cuda_why, "libcuda-gdx-test-missing.so.1 cannot be loaded");
	ASSERT(p->kernel_major > 0);
	v = nic(p, "rxe0", GDX_GDR_POLICY_AUTO);
	ASSERT_STR_EQ(v.line, "rxe0: staged through host memory: no NVIDIA GPU (no CUDA driver)");
	/* A NIC sysfs does not list is added when the plugin probes it. */
	ASSERT_EQ(gdx_gdr_probe_nic(p, "mlx5_7", NULL), 1);
	ASSERT_EQ(gdx_gdr_find_nic(p, "mlx5_7"), 1);
	ASSERT_EQ(p->nics[1].dmabuf, -1);
	ASSERT_EQ(gdx_gdr_nic_verdict(p, "mlx5_8", GDX_GDR_POLICY_AUTO, &v), -ENOENT);
	gdx_gdr_probe_free(p);
}

static void test_facts_errors(void)
{
	char file[] = "/tmp/gdx-facts-XXXXXX", why[256];
	struct gdx_gdr_opts o = {
		.sysfs_root = FIXTURES "rxe-vm", .xml = FIXTURES "rxe-vm/topo.xml", .facts = file};
	struct gdx_gdr_probe *p = NULL;
	int fd = mkstemp(file);

	ASSERT(fd >= 0);
	ASSERT(write(fd, "kernel 6.1.0\n# comment\nmemlock lots\n", 36) == 36);
	close(fd);
	ASSERT_EQ(gdx_gdr_probe_init(&o, &p, why, sizeof(why)), -EINVAL);
	ASSERT_STR_CONTAINS(why, ":3: not a fact");
	unlink(file);
	ASSERT_EQ(gdx_gdr_probe_init(&o, &p, why, sizeof(why)), -ENOENT);
	ASSERT_STR_CONTAINS(why, "No such file");
}

GDX_TESTS_MAIN(TEST(test_names, 10), TEST(test_healthy, 10), TEST(test_gdr_level_env, 10),
	       TEST(test_grace_line_by_nccl, 10), TEST(test_no_peermem, 10),
	       TEST(test_dmabuf_unsupported, 10), TEST(test_dmabuf_only, 10),
	       TEST(test_legacy_peermem, 10), TEST(test_acs, 10), TEST(test_acs_unreadable, 10),
	       TEST(test_iommu_translating, 10), TEST(test_remote_nic, 10),
	       TEST(test_bar1_tiny, 10), TEST(test_memlock_low, 10), TEST(test_port_cases, 10),
	       TEST(test_no_cuda, 10), TEST(test_rxe_vm, 10), TEST(test_live_without_cuda, 10),
	       TEST(test_facts_errors, 10))
