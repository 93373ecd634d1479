/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA, the verdicts: from the probe's facts (gdx_gdr.h), what the
 * plugin advertises to NCCL for each NIC (ptrSupport), whether each GPU-NIC
 * pair takes the direct path, and the one line that says which and why, with
 * the fix. Pure functions of the probe, so fixtures drive them.
 */
#ifndef GDX_GDR_VERDICT_H
#define GDX_GDR_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdr/gdx_gdr.h"

/* NCCL_GDX_GDR. */
enum gdx_gdr_policy {
	GDX_GDR_POLICY_AUTO, /* GPU memory on the NICs that can register it */
	GDX_GDR_POLICY_ON,   /* as auto, but a NIC that cannot is an error */
	GDX_GDR_POLICY_OFF,  /* host memory only */
};

enum gdx_gdr_mode {
	GDX_GDR_DIRECT, /* the NIC reads and writes GPU memory */
	GDX_GDR_STAGED, /* NCCL copies through host memory */
	GDX_GDR_BROKEN, /* NCCL_GDX_GDR=on cannot be honoured: init must fail */
};

/* What is wrong with a path that works (bits of gdx_gdr_verdict.degraded). */
#define GDX_GDR_DEG_ACS	  0x1 /* ACS redirect or egress control on a bridge of the path */
#define GDX_GDR_DEG_IOMMU 0x2 /* the IOMMU translates DMA of the GPU or the NIC */
#define GDX_GDR_DEG_SYS	  0x4 /* GPU and NIC on different sockets */

/*
 * Below this RLIMIT_MEMLOCK, registering NCCL's host buffers fails: one
 * channel's SIMPLE, LL and LL128 buffers are about 9 MiB per peer, and the
 * kernel's default limit is 8 MiB. Unlimited is what NVIDIA recommends.
 */
#define GDX_GDR_MEMLOCK_MIN (64ULL << 20)
/*
 * BAR1 is the GPU's CPU-visible aperture: 256 MiB on many data-center GPUs,
 * 16 GiB and more with a large BAR. It limits CPU mappings of GPU memory
 * (GDRCopy), not the NIC's access; below 256 MiB it is "tiny".
 */
#define GDX_GDR_BAR1_TINY (256ULL << 20)
/* CUDA driver that can export dma-buf (NCCL's own threshold). */
#define GDX_GDR_CUDA_DMABUF_MIN 11070

struct gdx_gdr_verdict {
	enum gdx_gdr_mode mode;
	int ptr_support;    /* NCCL_PTR_HOST, plus NCCL_PTR_CUDA and/or NCCL_PTR_DMABUF */
	char via[48];	    /* "dma-buf", "nvidia_peermem", "dma-buf and nvidia_peermem", "" */
	int gpu;	    /* the GPU the verdict is about (nearest for a NIC); -1 none */
	enum gdx_path path; /* its path class */
	unsigned degraded;  /* GDX_GDR_DEG_* of that path */
	enum gdx_nccl_path nccl_path; /* the path type NCCL computes for it */
	int nccl_within;	      /* NCCL uses GPUDirect RDMA at that distance: 1, 0, -1 when it
				       * depends on a C2C attachment not known (a saved file) */
	bool warn;		      /* log at WARN: broken, or degraded */
	char reason[GDX_GDR_TEXT_LEN];	     /* one sentence */
	char fix[GDX_GDR_TEXT_LEN];	     /* one sentence; "" when nothing to fix */
	char degraded_why[GDX_GDR_TEXT_LEN]; /* "" when not degraded */
	char line[GDX_GDR_LINE_LEN];	     /* what the plugin logs after "NET/GDX : " */
};

/* "auto" (or empty), "on", "off"; -EINVAL for anything else. */
int gdx_gdr_policy_parse(const char *s, enum gdx_gdr_policy *p);

/*
 * What to advertise for one NIC and the line to log: the NIC's capability
 * (peer memory, DMA-BUF, CUDA), judged on the path to its nearest GPU.
 * Returns 0, or -ENOENT for an unknown NIC.
 */
int gdx_gdr_nic_verdict(const struct gdx_gdr_probe *p, const char *ibdev,
			enum gdx_gdr_policy policy, struct gdx_gdr_verdict *v);

/* Levels of the host-wide checks, for gdx-doctor's exit status. */
enum gdx_gdr_level { GDX_GDR_LEVEL_OK, GDX_GDR_LEVEL_DEGRADED, GDX_GDR_LEVEL_BROKEN };

/* RLIMIT_MEMLOCK: BROKEN below GDX_GDR_MEMLOCK_MIN; text says so and how to fix. */
enum gdx_gdr_level gdx_gdr_memlock_check(const struct gdx_gdr_probe *p, char *text, size_t len);

/*
 * The pieces a verdict is made of, which gdx_gdr_nic_verdict() uses, and
 * gdx-doctor's pair verdict too (tools/common/gdx_gdr_pair.h).
 */
/* A verdict before any fact: staged, host memory only, no GPU, path unknown. */
void gdx_gdr_verdict_init(struct gdx_gdr_verdict *v);
/* Whether the NIC can register GPU memory at all, whichever the GPU: sets
 * ptr_support and via when it can, reason and fix when it cannot. */
bool gdx_gdr_nic_capable(const struct gdx_gdr_probe *p, const struct gdx_gdr_nic *nic,
			 struct gdx_gdr_verdict *v);
/* v->via and v->ptr_support from what the probe found. */
void gdx_gdr_via(const struct gdx_gdr_probe *p, struct gdx_gdr_verdict *v);
/* What degrades a working path (ACS, a translating IOMMU, SYS), with why and how to fix it. */
void gdx_gdr_degrade(const struct gdx_gdr_probe *p, int g, int n, struct gdx_gdr_verdict *v);
/* The verdict of a NIC that cannot (or may not) use GPU memory. */
void gdx_gdr_not_direct(const char *nic, enum gdx_gdr_policy policy, struct gdx_gdr_verdict *v);
/* Appends s to buf, "; " between. */
void gdx_gdr_cat(char *buf, size_t len, const char *s);
/*
 * NCCL's judgement of the distance of pair (gpu, nic) (gdx_gdr_rule.h): sets
 * v->nccl_path and v->nccl_within, and text to one clause that says it in
 * NCCL's words ("NCCL 2.28.9 uses it at P2C, within NCCL_NET_GDR_LEVEL=PXB, ...").
 * Returns v->nccl_within.
 */
int gdx_gdr_distance(const struct gdx_gdr_probe *p, int gpu, int nic, struct gdx_gdr_verdict *v,
		     char *text, size_t len);
/* A byte count in words: "unlimited", "N GiB", "N MiB", "N KiB". */
void gdx_gdr_bytes(uint64_t b, char *buf, size_t len);

#endif
