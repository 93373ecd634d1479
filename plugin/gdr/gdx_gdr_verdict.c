/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA verdicts (gdx_gdr_verdict.h): what the probe's facts mean
 * for each NIC and each GPU-NIC pair, what to advertise to NCCL, and the one
 * line that says so with its cause and fix. Pure functions of the probe.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "gdr/gdx_gdr.h"
#include "gdr/gdx_gdr_verdict.h"
#include <nccl/net_common.h>

/* ---- the policy ---- */

int gdx_gdr_policy_parse(const char *s, enum gdx_gdr_policy *p)
{
	if (!s || !*s || !strcasecmp(s, "auto"))
		*p = GDX_GDR_POLICY_AUTO;
	else if (!strcasecmp(s, "on"))
		*p = GDX_GDR_POLICY_ON;
	else if (!strcasecmp(s, "off"))
		*p = GDX_GDR_POLICY_OFF;
	else
		return -EINVAL;
	return 0;
}

/* ---- verdicts ---- */

static int gdx_gdr_cuda_gpus(const struct gdx_gdr_probe *p)
{
	int n = 0;

	for (int g = 0; g < p->ngpus; g++)
		n += p->gpus[g].cuda_index >= 0;
	return n;
}

/* Whether any GPU CUDA sees (any GPU, when CUDA is unknown) has an
 * attribute not known to be 0. */
static bool gdx_gdr_any_gpu(const struct gdx_gdr_probe *p, bool dmabuf)
{
	for (int g = 0; g < p->ngpus; g++) {
		const struct gdx_gdr_gpu *gpu = &p->gpus[g];

		if ((gpu->cuda_index >= 0 || p->cuda == GDX_GDR_CUDA_UNKNOWN) &&
		    (dmabuf ? gpu->dmabuf_attr : gpu->gdr_attr) != 0)
			return true;
	}
	return false;
}

/* Why the NIC cannot use DMA-BUF; "" when it can. */
static void gdx_gdr_dmabuf_why(const struct gdx_gdr_probe *p, const struct gdx_gdr_nic *nic,
			       char *buf, size_t len)
{
	buf[0] = '\0';
	if (!gdx_gdr_kernel_dmabuf(p))
		gdx_gdr_setf(buf, len, "dma-buf unsupported (kernel %d.%d)", p->kernel_major,
			     p->kernel_minor);
	else if (nic->dmabuf < 0)
		gdx_gdr_setf(buf, len, "dma-buf not probed");
	else if (!nic->dmabuf)
		gdx_gdr_setf(buf, len, "dma-buf unsupported (%s refuses it: %s)", nic->name,
			     strerror(nic->dmabuf_errno));
	else if (p->cuda_version && p->cuda_version < GDX_GDR_CUDA_DMABUF_MIN)
		gdx_gdr_setf(buf, len, "dma-buf unsupported (CUDA driver %d.%d; needs 11.7)",
			     p->cuda_version / 1000, p->cuda_version % 1000 / 10);
	else if (!gdx_gdr_any_gpu(p, true))
		gdx_gdr_setf(buf, len, "dma-buf unsupported (no GPU exports dma-buf)");
}

void gdx_gdr_via(const struct gdx_gdr_probe *p, struct gdx_gdr_verdict *v)
{
	bool cuda = v->ptr_support & NCCL_PTR_CUDA, dmabuf = v->ptr_support & NCCL_PTR_DMABUF;

	gdx_gdr_setf(v->via, sizeof(v->via), "%s%s%s", dmabuf ? "dma-buf" : "",
		     cuda && dmabuf ? " and " : "", cuda ? p->peermem_name : "");
}

/*
 * Whether the NIC can register GPU memory at all: the part of the verdict
 * that does not depend on which GPU. Sets ptr_support and via when it can,
 * reason and fix when it cannot.
 */
bool gdx_gdr_nic_capable(const struct gdx_gdr_probe *p, const struct gdx_gdr_nic *nic,
			 struct gdx_gdr_verdict *v)
{
	char dmabuf_why[GDX_GDR_TEXT_LEN];

	if (p->cuda == GDX_GDR_CUDA_NONE && !p->ngpus) {
		gdx_gdr_setf(v->reason, sizeof(v->reason), "no NVIDIA GPU (no CUDA driver)");
		return false;
	}
	if (p->cuda == GDX_GDR_CUDA_UNKNOWN && !p->ngpus) {
		gdx_gdr_setf(v->reason, sizeof(v->reason), "no NVIDIA GPU");
		return false;
	}
	if (p->cuda == GDX_GDR_CUDA_NONE) {
		gdx_gdr_setf(v->reason, sizeof(v->reason),
			     "the NVIDIA GPUs have no CUDA driver (%s)", p->cuda_why);
		gdx_gdr_setf(v->fix, sizeof(v->fix),
			     "install the NVIDIA driver, which provides libcuda.so.1");
		return false;
	}
	if (p->cuda == GDX_GDR_CUDA_ERROR) {
		gdx_gdr_setf(v->reason, sizeof(v->reason), "the CUDA driver does not work (%s)",
			     p->cuda_why);
		gdx_gdr_setf(v->fix, sizeof(v->fix),
			     "check the driver with nvidia-smi; the kernel module and "
			     "libcuda.so.1 must match");
		return false;
	}
	if (p->cuda != GDX_GDR_CUDA_UNKNOWN && !gdx_gdr_cuda_gpus(p)) {
		gdx_gdr_setf(v->reason, sizeof(v->reason),
			     "no NVIDIA GPU (CUDA driver %d.%d sees none)", p->cuda_version / 1000,
			     p->cuda_version % 1000 / 10);
		if (p->ngpus)
			gdx_gdr_setf(v->fix, sizeof(v->fix),
				     "make the GPUs visible to this process (CUDA_VISIBLE_DEVICES, "
				     "the container's --gpus)");
		return false;
	}
	if (!nic->pci[0]) {
		gdx_gdr_setf(v->reason, sizeof(v->reason),
			     "%s has no PCI device (software RDMA), so it cannot reach GPU memory",
			     nic->name);
		gdx_gdr_setf(v->fix, sizeof(v->fix),
			     "use a hardware RDMA NIC (ConnectX-5 or later) for GPU traffic");
		return false;
	}
	if (!gdx_gdr_any_gpu(p, false)) {
		gdx_gdr_setf(
			v->reason, sizeof(v->reason),
			"no GPU supports GPUDirect RDMA (CUDA's GPU_DIRECT_RDMA_SUPPORTED is 0)");
		gdx_gdr_setf(v->fix, sizeof(v->fix),
			     "use a data-center GPU; this one cannot expose its memory to a NIC");
		return false;
	}
	gdx_gdr_dmabuf_why(p, nic, dmabuf_why, sizeof(dmabuf_why));
	v->ptr_support |= (p->peermem ? NCCL_PTR_CUDA : 0) | (!dmabuf_why[0] ? NCCL_PTR_DMABUF : 0);
	if (v->ptr_support == NCCL_PTR_HOST) {
		gdx_gdr_setf(v->reason, sizeof(v->reason), "%s not loaded and %s", p->peermem_name,
			     dmabuf_why);
		gdx_gdr_setf(v->fix, sizeof(v->fix), "modprobe %s", p->peermem_name);
		return false;
	}
	gdx_gdr_via(p, v);
	return true;
}

void gdx_gdr_cat(char *buf, size_t len, const char *s)
{
	size_t used = strlen(buf);

	if (used < len)
		gdx_gdr_setf(buf + used, len - used, "%s%s", used ? "; " : "", s);
}

/* What degrades a working path, with why and how to fix it. */
void gdx_gdr_degrade(const struct gdx_gdr_probe *p, int g, int n, struct gdx_gdr_verdict *v)
{
	const struct gdx_gdr_gpu *gpu = &p->gpus[g];
	const struct gdx_gdr_nic *nic = &p->nics[n];
	const struct gdx_gdr_path *path = gdx_gdr_path(p, g, n);
	char s[GDX_GDR_TEXT_LEN], bits[96];
	bool gi = gpu->iommu == GDX_GDR_IOMMU_TRANSLATING;
	bool ni = nic->iommu == GDX_GDR_IOMMU_TRANSLATING;

	if (path->acs == GDX_GDR_ACS_ON) {
		v->degraded |= GDX_GDR_DEG_ACS;
		gdx_gdr_acs_bits(path->acs_ctrl & GDX_GDR_ACS_BAD, bits, sizeof(bits));
		gdx_gdr_setf(s, sizeof(s),
			     "ACS on bridge %s (%s) sends peer-to-peer traffic up to the root "
			     "complex",
			     path->acs_bridge, bits);
		gdx_gdr_cat(v->degraded_why, sizeof(v->degraded_why), s);
		gdx_gdr_setf(s, sizeof(s),
			     "disable it (setpci -s %s ECAP_ACS+6.w=0, or in the BIOS)",
			     path->acs_bridge);
		gdx_gdr_cat(v->fix, sizeof(v->fix), s);
	}
	if (gi || ni) {
		v->degraded |= GDX_GDR_DEG_IOMMU;
		gdx_gdr_setf(s, sizeof(s), "the IOMMU translates DMA addresses of %s%s%s (%s)",
			     gi ? gpu->pci : "", gi && ni ? " and " : "", ni ? nic->pci : "",
			     gi ? gpu->iommu_type : nic->iommu_type);
		gdx_gdr_cat(v->degraded_why, sizeof(v->degraded_why), s);
		gdx_gdr_cat(v->fix, sizeof(v->fix),
			    "boot with iommu=pt (pass-through), or turn the IOMMU off");
	}
	if (path->cls == GDX_PATH_SYS) {
		v->degraded |= GDX_GDR_DEG_SYS;
		gdx_gdr_cat(v->degraded_why, sizeof(v->degraded_why),
			    "GPU and NIC are on different sockets (SYS): traffic crosses the CPU "
			    "interconnect");
		gdx_gdr_cat(v->fix, sizeof(v->fix), "use a NIC on the GPU's socket");
	}
}

/* Whether NIC n is among GPU g's nearest (NCCL 2.29 types only those P2C;
 * it also weighs bandwidth, which the probe does not know). */
static bool gdx_gdr_nearest_nic(const struct gdx_gdr_probe *p, int g, int n)
{
	enum gdx_path best = GDX_PATH_UNKNOWN;

	for (int i = 0; i < p->nnics; i++)
		if (gdx_gdr_path(p, g, i)->cls < best)
			best = gdx_gdr_path(p, g, i)->cls;
	return gdx_gdr_path(p, g, n)->cls == best;
}

int gdx_gdr_distance(const struct gdx_gdr_probe *p, int g, int n, struct gdx_gdr_verdict *v,
		     char *text, size_t len)
{
	enum gdx_path cls = gdx_gdr_path(p, g, n)->cls;
	bool nearest = gdx_gdr_nearest_nic(p, g, n);
	enum gdx_nccl_path with, level = gdx_gdr_rule_level(&p->rule);
	char nccl[64], why[160];

	v->nccl_within = gdx_gdr_rule_within(&p->rule, cls, p->gpus[g].c2c, nearest, &v->nccl_path);
	gdx_gdr_rule_nccl(&p->rule, nccl, sizeof(nccl));
	gdx_gdr_rule_level_why(&p->rule, why, sizeof(why));
	if (v->nccl_within < 0) {
		gdx_gdr_rule_within(&p->rule, cls, 1, nearest, &with);
		gdx_gdr_setf(text, len,
			     "%s: direct if this GPU is C2C-attached, as on Grace (%s, within %s); "
			     "staged otherwise (%s); C2C is unknown here",
			     nccl, gdx_nccl_path_name(with), why, gdx_nccl_path_name(v->nccl_path));
	} else if (v->nccl_within) {
		gdx_gdr_setf(text, len, "%s uses it at %s, within %s", nccl,
			     gdx_nccl_path_name(v->nccl_path), why);
	} else {
		gdx_gdr_setf(text, len, "%s stages it through host memory: %s is beyond %s%s", nccl,
			     gdx_nccl_path_name(v->nccl_path), why,
			     v->nccl_path == GDX_NCCL_P2C && level == GDX_NCCL_PXB
				     ? " (NCCL_NET_GDR_C2C=1 lets it use this C2C path)"
				     : "");
	}
	return v->nccl_within;
}

void gdx_gdr_verdict_init(struct gdx_gdr_verdict *v)
{
	memset(v, 0, sizeof(*v));
	v->mode = GDX_GDR_STAGED;
	v->ptr_support = NCCL_PTR_HOST;
	v->gpu = -1;
	v->path = GDX_PATH_UNKNOWN;
	v->nccl_path = GDX_NCCL_UNKNOWN;
	v->nccl_within = -1;
}

/* The verdict of a NIC that cannot (or may not) use GPU memory. */
void gdx_gdr_not_direct(const char *nic, enum gdx_gdr_policy policy, struct gdx_gdr_verdict *v)
{
	const char *fix = v->fix[0] ? "; fix: " : "";

	v->ptr_support = NCCL_PTR_HOST;
	v->via[0] = '\0';
	if (policy == GDX_GDR_POLICY_ON) {
		v->mode = GDX_GDR_BROKEN;
		v->warn = true;
		gdx_gdr_setf(v->line, sizeof(v->line),
			     "%s: NCCL_GDX_GDR=on, but GPU memory cannot be registered: %s%s%s",
			     nic, v->reason, fix, v->fix);
		return;
	}
	v->mode = GDX_GDR_STAGED;
	gdx_gdr_setf(v->line, sizeof(v->line), "%s: staged through host memory: %s%s%s", nic,
		     v->reason, fix, v->fix);
}

/* The GPU nearest to a NIC (by path class, then index): -1 when none. */
static int gdx_gdr_nearest_gpu(const struct gdx_gdr_probe *p, int n)
{
	int best = -1;

	for (int g = 0; g < p->ngpus; g++) {
		if (p->gpus[g].cuda_index < 0 && gdx_gdr_cuda_gpus(p))
			continue; /* not this process's GPU */
		if (best < 0 || gdx_gdr_path(p, g, n)->cls < gdx_gdr_path(p, best, n)->cls)
			best = g;
	}
	return best;
}

int gdx_gdr_nic_verdict(const struct gdx_gdr_probe *p, const char *ibdev,
			enum gdx_gdr_policy policy, struct gdx_gdr_verdict *v)
{
	int n = gdx_gdr_find_nic(p, ibdev), g;
	char where[GDX_GDR_TEXT_LEN], distance[GDX_GDR_TEXT_LEN];

	gdx_gdr_verdict_init(v);
	if (n < 0)
		return -ENOENT;
	if (policy == GDX_GDR_POLICY_OFF) {
		gdx_gdr_setf(v->reason, sizeof(v->reason), "NCCL_GDX_GDR=off");
		gdx_gdr_not_direct(ibdev, policy, v);
		return 0;
	}
	if (!gdx_gdr_nic_capable(p, &p->nics[n], v)) {
		gdx_gdr_not_direct(ibdev, policy, v);
		return 0;
	}
	v->mode = GDX_GDR_DIRECT;
	gdx_gdr_setf(v->reason, sizeof(v->reason), "GPUDirect RDMA via %s", v->via);
	g = gdx_gdr_nearest_gpu(p, n);
	v->gpu = g;
	if (g < 0 || gdx_gdr_path(p, g, n)->cls == GDX_PATH_UNKNOWN) {
		gdx_gdr_setf(where, sizeof(where), "GPU path unknown: %s",
			     p->have_topo ? "not in the topology" : "no topology");
		gdx_gdr_setf(v->line, sizeof(v->line), "%s: %s (%s)", ibdev, v->reason, where);
		return 0;
	}
	v->path = gdx_gdr_path(p, g, n)->cls;
	gdx_gdr_degrade(p, g, n, v);
	gdx_gdr_setf(where, sizeof(where), "GPU %s, %s", p->gpus[g].pci, gdx_path_name(v->path));
	/* Said when it is news: NCCL stages it, it may, or C2C lets it in. */
	if (gdx_gdr_distance(p, g, n, v, distance, sizeof(distance)) != 1 ||
	    v->nccl_path == GDX_NCCL_P2C)
		gdx_gdr_setf(where + strlen(where), sizeof(where) - strlen(where), "; %s",
			     distance);
	if (v->degraded) {
		v->warn = true;
		gdx_gdr_setf(v->line, sizeof(v->line), "%s: %s (%s), degraded: %s; fix: %s", ibdev,
			     v->reason, where, v->degraded_why, v->fix);
	} else {
		gdx_gdr_setf(v->line, sizeof(v->line), "%s: %s (%s)", ibdev, v->reason, where);
	}
	return 0;
}

/* ---- host-wide checks ---- */

void gdx_gdr_bytes(uint64_t b, char *buf, size_t len)
{
	if (b == GDX_GDR_MEMLOCK_INFINITY)
		gdx_gdr_setf(buf, len, "unlimited");
	else if (b >= (1ULL << 30) && !(b % (1ULL << 30)))
		gdx_gdr_setf(buf, len, "%llu GiB", (unsigned long long)(b >> 30));
	else if (b >= (1ULL << 20))
		gdx_gdr_setf(buf, len, "%llu MiB", (unsigned long long)(b >> 20));
	else
		gdx_gdr_setf(buf, len, "%llu KiB", (unsigned long long)(b >> 10));
}

enum gdx_gdr_level gdx_gdr_memlock_check(const struct gdx_gdr_probe *p, char *text, size_t len)
{
	char have[32];

	if (p->memlock_unknown) {
		gdx_gdr_setf(text, len, "memlock limit unknown");
		return GDX_GDR_LEVEL_OK;
	}
	gdx_gdr_bytes(p->memlock, have, sizeof(have));
	if (p->memlock >= GDX_GDR_MEMLOCK_MIN) {
		gdx_gdr_setf(text, len, "memlock limit %s", have);
		return GDX_GDR_LEVEL_OK;
	}
	gdx_gdr_setf(text, len,
		     "memlock limit %s is below %llu MiB: registering NCCL's buffers will fail; "
		     "fix: ulimit -l unlimited (systemd LimitMEMLOCK=infinity, docker --ulimit "
		     "memlock=-1)",
		     have, GDX_GDR_MEMLOCK_MIN >> 20);
	return GDX_GDR_LEVEL_BROKEN;
}
