/* SPDX-License-Identifier: MIT */
/* A GPU-NIC pair's GPUDirect RDMA verdict and a GPU's BAR1 (gdx_gdr_pair.h),
 * made of gdr/gdx_gdr_verdict.h's pieces. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nccl/net_common.h>

#include "tools/common/gdx_gdr_names.h"
#include "tools/common/gdx_gdr_pair.h"

/* How to get the direct path back on a pair NCCL stages by distance. */
static const char *gdx_gdr_pair_fix(const struct gdx_gdr_probe *p, int g,
				    const struct gdx_gdr_verdict *v)
{
	if (v->nccl_path == GDX_NCCL_P2C)
		return "unset NCCL_NET_GDR_C2C (NCCL 2.27 and later use this C2C path), or set "
		       "NCCL_NET_GDR_LEVEL=P2C";
	if (v->nccl_path == GDX_NCCL_PHB && p->gpus[g].c2c == 1 &&
	    (p->rule.version ? p->rule.version : GDX_GDR_RULE_NEWEST) < 22700)
		return "NCCL 2.27 and later use GPUDirect RDMA over NVLink-C2C here (P2C); with "
		       "2.26, set NCCL_NET_GDR_C2C=1";
	return "use a NIC behind the GPU's PCIe switch, or raise NCCL_NET_GDR_LEVEL knowingly";
}

int gdx_gdr_pair_verdict(const struct gdx_gdr_probe *p, int g, int n, enum gdx_gdr_policy policy,
			 struct gdx_gdr_verdict *v)
{
	char distance[GDX_GDR_TEXT_LEN];
	const struct gdx_gdr_gpu *gpu;
	const char *name;
	int within;

	gdx_gdr_verdict_init(v);
	if (g < 0 || g >= p->ngpus || n < 0 || n >= p->nnics)
		return -EINVAL;
	gpu = &p->gpus[g];
	name = p->nics[n].name;
	v->gpu = g;
	v->path = gdx_gdr_path(p, g, n)->cls;
	if (policy == GDX_GDR_POLICY_OFF) {
		gdx_gdr_setf(v->reason, sizeof(v->reason), "NCCL_GDX_GDR=off");
		gdx_gdr_not_direct(name, policy, v);
		return 0;
	}
	if (!gdx_gdr_nic_capable(p, &p->nics[n], v)) {
		gdx_gdr_not_direct(name, policy, v);
		return 0;
	}
	/* The NIC can; can it with this GPU? */
	if (gpu->cuda_index >= 0 && gpu->dmabuf_attr == 0)
		v->ptr_support &= ~NCCL_PTR_DMABUF;
	if (gpu->cuda_index >= 0 && gpu->gdr_attr == 0) {
		gdx_gdr_setf(v->reason, sizeof(v->reason),
			     "GPU %s does not support GPUDirect RDMA (CUDA's "
			     "GPU_DIRECT_RDMA_SUPPORTED is 0)",
			     gpu->pci);
		gdx_gdr_setf(v->fix, sizeof(v->fix), "use a data-center GPU for GPUDirect RDMA");
		gdx_gdr_not_direct(name, GDX_GDR_POLICY_AUTO, v);
		return 0;
	}
	if (v->ptr_support == NCCL_PTR_HOST) {
		gdx_gdr_setf(v->reason, sizeof(v->reason),
			     "GPU %s cannot export dma-buf, and %s is not loaded", gpu->pci,
			     p->peermem_name);
		gdx_gdr_setf(v->fix, sizeof(v->fix), "modprobe %s", p->peermem_name);
		gdx_gdr_not_direct(name, GDX_GDR_POLICY_AUTO, v);
		return 0;
	}
	gdx_gdr_via(p, v);
	gdx_gdr_degrade(p, g, n, v);
	v->warn = v->degraded != 0;
	within = v->path == GDX_PATH_UNKNOWN
			 ? 1
			 : gdx_gdr_distance(p, g, n, v, distance, sizeof(distance));
	if (!within) {
		char fix[GDX_GDR_TEXT_LEN];

		/* The NIC advertises GPU memory, but NCCL will not use it here. */
		v->mode = GDX_GDR_STAGED;
		gdx_gdr_setf(v->reason, sizeof(v->reason), "%s", distance);
		gdx_gdr_setf(fix, sizeof(fix), "%s", v->fix);
		if (!(v->degraded & GDX_GDR_DEG_SYS)) {
			v->fix[0] = '\0';
			gdx_gdr_cat(v->fix, sizeof(v->fix), gdx_gdr_pair_fix(p, g, v));
			if (fix[0])
				gdx_gdr_cat(v->fix, sizeof(v->fix), fix);
		}
	} else {
		/* Direct, or direct where the GPU is C2C-attached, which a saved
		 * file cannot say: not counted as degraded. */
		v->mode = GDX_GDR_DIRECT;
		bool news = within < 0 || v->nccl_path == GDX_NCCL_P2C;

		gdx_gdr_setf(v->reason, sizeof(v->reason), "GPUDirect RDMA via %s%s%s", v->via,
			     v->path == GDX_PATH_UNKNOWN ? " (path class unknown)"
			     : news			 ? "; "
							 : "",
			     v->path != GDX_PATH_UNKNOWN && news ? distance : "");
	}
	gdx_gdr_setf(v->line, sizeof(v->line), "%s: GPU %s, %s: %s%s%s%s%s%s%s", name, gpu->pci,
		     gdx_path_name(v->path), gdx_gdr_mode_name(v->mode),
		     within < 0 ? " if C2C-attached" : "", v->degraded ? ", degraded: " : "",
		     v->degraded_why, v->fix[0] ? "; fix: " : "", v->fix,
		     within < 0 ? "; staged otherwise" : "");
	return 0;
}

enum gdx_gdr_level gdx_gdr_bar1_check(const struct gdx_gdr_probe *p, int gpu, char *text,
				      size_t len)
{
	char have[32];

	if (gpu < 0 || gpu >= p->ngpus || !p->gpus[gpu].bar1) {
		gdx_gdr_setf(text, len, "BAR1 unknown");
		return GDX_GDR_LEVEL_OK;
	}
	gdx_gdr_bytes(p->gpus[gpu].bar1, have, sizeof(have));
	if (p->gpus[gpu].bar1 >= GDX_GDR_BAR1_TINY) {
		gdx_gdr_setf(text, len, "BAR1 %s", have);
		return GDX_GDR_LEVEL_OK;
	}
	gdx_gdr_setf(text, len,
		     "GPU %s has a tiny BAR1 (%s, under 256 MiB): CPU mappings of GPU memory "
		     "(GDRCopy) run out, the NIC's access does not; fix: enable large BAR "
		     "(Resizable BAR) in the firmware",
		     p->gpus[gpu].pci, have);
	return GDX_GDR_LEVEL_DEGRADED;
}
