/* SPDX-License-Identifier: MIT */
/* A GPU-NIC pair's GPUDirect RDMA verdict and a GPU's BAR1 (gdx_gdr_pair.h),
 * made of dev/gdx_gdr_verdict.h's pieces. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <nccl/net_common.h>

#include "tools/common/gdx_gdr_names.h"
#include "tools/common/gdx_gdr_pair.h"

int gdx_gdr_pair_verdict(const struct gdx_gdr_probe *p, int g, int n, enum gdx_gdr_policy policy,
			 struct gdx_gdr_verdict *v)
{
	const struct gdx_gdr_gpu *gpu;
	const char *name;

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
	if (v->path != GDX_PATH_UNKNOWN && v->path > p->gdr_level) {
		char fix[GDX_GDR_TEXT_LEN];

		/* The NIC advertises GPU memory, but NCCL will not use it here. */
		v->mode = GDX_GDR_STAGED;
		gdx_gdr_setf(v->reason, sizeof(v->reason),
			     "the path is %s, beyond NCCL_NET_GDR_LEVEL=%s: NCCL stages this pair "
			     "through host memory",
			     gdx_path_name(v->path), gdx_gdr_level_name(p->gdr_level));
		gdx_gdr_setf(fix, sizeof(fix), "%s", v->fix);
		if (!(v->degraded & GDX_GDR_DEG_SYS)) {
			v->fix[0] = '\0';
			gdx_gdr_cat(v->fix, sizeof(v->fix),
				    "use a NIC behind the GPU's PCIe switch, or raise "
				    "NCCL_NET_GDR_LEVEL knowingly");
			if (fix[0])
				gdx_gdr_cat(v->fix, sizeof(v->fix), fix);
		}
	} else {
		v->mode = GDX_GDR_DIRECT;
		gdx_gdr_setf(v->reason, sizeof(v->reason), "GPUDirect RDMA via %s%s", v->via,
			     v->path == GDX_PATH_UNKNOWN ? " (path class unknown)" : "");
	}
	gdx_gdr_setf(v->line, sizeof(v->line), "%s: GPU %s, %s: %s%s%s%s%s", name, gpu->pci,
		     gdx_path_name(v->path), gdx_gdr_mode_name(v->mode),
		     v->degraded ? ", degraded: " : "", v->degraded_why, v->fix[0] ? "; fix: " : "",
		     v->fix);
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
