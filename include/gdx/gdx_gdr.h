/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA: whether each NIC can register GPU memory (peer memory or
 * DMA-BUF), what stands between each GPU and NIC (path class, ACS, IOMMU),
 * and what the plugin should advertise to NCCL (ptrSupport) and log.
 *
 * Probing and deciding are apart. gdx_gdr_probe_init() gathers the facts
 * once: sysfs under a root (fixtures in tests), the topology, the CUDA driver
 * through dlopen("libcuda.so.1") (never linked), uname and getrlimit, or a
 * facts file instead of those live probes (tests only, see below).
 * gdx_gdr_probe_nic() adds one NIC's DMA-BUF probe on its protection domain.
 * The verdicts are pure functions of the probe, so fixtures drive them.
 *
 * Facts file (tests only; gdx-doctor reads its path from GDX_GDR_FACTS): one
 * fact per line, '#' starts a comment:
 *   kernel 6.8.0-45-generic       uname's release
 *   memlock unlimited | 8M | 65536 RLIMIT_MEMLOCK (bytes, K/M/G suffixes)
 *   cuda none | 12040 | error 100 no libcuda.so.1 / driver version / cuInit error
 *   gpu 0000:1b:00.0 gdr=1 dmabuf=1   one CUDA device, in CUDA's order
 *   dmabuf mlx5_0 EBADF           errno of the NIC's DMA-BUF probe (name or number)
 * Facts the file leaves out are unknown: no CUDA driver, kernel 0.0,
 * memlock unlimited, DMA-BUF not probed.
 */
#ifndef GDX_GDR_H
#define GDX_GDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <gdx/gdx_topo.h>

struct ibv_pd;

#define GDX_GDR_MAX_GPUS 64
#define GDX_GDR_MAX_NICS 64
#define GDX_GDR_TEXT_LEN 512
#define GDX_GDR_LINE_LEN 1024

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

enum gdx_gdr_acs {
	GDX_GDR_ACS_NA,	     /* no PCI path known (virtual NIC, no sysfs entry) */
	GDX_GDR_ACS_OFF,     /* every bridge read: none redirects */
	GDX_GDR_ACS_ON,	     /* a bridge redirects or blocks peer-to-peer */
	GDX_GDR_ACS_UNKNOWN, /* a bridge's extended config space unreadable (not root) */
};

enum gdx_gdr_iommu {
	GDX_GDR_IOMMU_OFF,	   /* no iommu_group: no IOMMU for the device */
	GDX_GDR_IOMMU_IDENTITY,	   /* pass-through: bus address = physical address */
	GDX_GDR_IOMMU_TRANSLATING, /* "DMA", "DMA-FQ": addresses are remapped */
	GDX_GDR_IOMMU_UNKNOWN,	   /* a group without a readable type */
};

enum gdx_gdr_cuda {
	GDX_GDR_CUDA_NONE,  /* libcuda.so.1 cannot be loaded */
	GDX_GDR_CUDA_ERROR, /* loaded, but a symbol is missing or cuInit failed */
	GDX_GDR_CUDA_OK,
};

/* ACS Control bits that keep peer-to-peer traffic off the direct route. */
#define GDX_GDR_ACS_REQ_REDIR	 0x04
#define GDX_GDR_ACS_CMPLT_REDIR	 0x08
#define GDX_GDR_ACS_EGRESS_CTRL	 0x20
#define GDX_GDR_ACS_BAD		 (GDX_GDR_ACS_REQ_REDIR | GDX_GDR_ACS_CMPLT_REDIR | GDX_GDR_ACS_EGRESS_CTRL)
#define GDX_GDR_MEMLOCK_INFINITY UINT64_MAX
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

struct gdx_gdr_gpu {
	char pci[GDX_TOPO_PCI_LEN]; /* "0000:1b:00.0" */
	int cuda_index;		    /* CUDA's ordinal; -1 when CUDA does not see it */
	int gdr_attr;		    /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED; -1 unknown */
	int dmabuf_attr;	    /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED; -1 unknown */
	uint64_t bar1;		    /* bytes; 0 when unknown */
	enum gdx_gdr_iommu iommu;
	char iommu_type[24]; /* iommu_group/type as read, "" when none */
	int topo;	     /* index in the topology, -1 when it is not there */
};

struct gdx_gdr_nic {
	char name[GDX_TOPO_NAME_LEN];
	char pci[GDX_TOPO_PCI_LEN]; /* "" for a device without PCI function (rxe) */
	int dmabuf;		    /* DMA-BUF probe: 1 accepted, 0 refused, -1 not probed */
	int dmabuf_errno;	    /* what the probe saw (EBADF means supported) */
	enum gdx_gdr_iommu iommu;
	char iommu_type[24];
	int topo;
};

struct gdx_gdr_path {
	enum gdx_path cls;
	enum gdx_gdr_acs acs;
	char acs_bridge[GDX_TOPO_PCI_LEN]; /* first bridge with ACS on, or unreadable */
	unsigned acs_ctrl;		   /* its ACS Control register when on */
	int nbridges;			   /* bridges between GPU and NIC */
};

struct gdx_gdr_probe {
	char sysfs_root[256];
	bool from_facts; /* CUDA, kernel, memlock, DMA-BUF came from a facts file */
	/* Peer memory: the first marker found, relative to the sysfs root. */
	bool peermem;
	char peermem_name[32];	 /* "nvidia_peermem", "nv_peer_mem" */
	char peermem_marker[64]; /* "module/nvidia_peermem/version" */
	char kernel[96];	 /* uname release */
	int kernel_major, kernel_minor;
	uint64_t memlock; /* soft RLIMIT_MEMLOCK, bytes, or GDX_GDR_MEMLOCK_INFINITY */
	enum gdx_gdr_cuda cuda;
	int cuda_version; /* cuDriverGetVersion: 12040 for 12.4 */
	int cuda_err;	  /* CUresult of the failing call when cuda == ERROR */
	char cuda_why[160];
	enum gdx_path gdr_level; /* NCCL_NET_GDR_LEVEL as NCCL applies it (PXB by default) */
	bool have_topo;
	char topo_why[256]; /* why there is no topology */
	int ngpus, nnics;
	struct gdx_gdr_gpu gpus[GDX_GDR_MAX_GPUS];
	struct gdx_gdr_nic nics[GDX_GDR_MAX_NICS];
	struct gdx_gdr_path *paths; /* [gpu * GDX_GDR_MAX_NICS + nic] */
};

struct gdx_gdr_opts {
	const char *sysfs_root;	     /* NULL: gdx_sysfs_root() */
	const struct gdx_topo *topo; /* borrowed; NULL: loaded from xml */
	const char *xml;	     /* hwloc XML when topo is NULL; NULL: this machine */
	const char *facts;	     /* tests only: a facts file replaces the live probes */
	const char *cuda_lib;	     /* NULL: "libcuda.so.1" */
};

struct gdx_gdr_verdict {
	enum gdx_gdr_mode mode;
	int ptr_support;    /* NCCL_PTR_HOST, plus NCCL_PTR_CUDA and/or NCCL_PTR_DMABUF */
	char via[48];	    /* "dma-buf", "nvidia_peermem", "dma-buf and nvidia_peermem", "" */
	int gpu;	    /* the GPU the verdict is about (nearest for a NIC); -1 none */
	enum gdx_path path; /* its path class */
	unsigned degraded;  /* GDX_GDR_DEG_* of that path */
	bool warn;	    /* log at WARN: broken, or degraded */
	char reason[GDX_GDR_TEXT_LEN];	     /* one sentence */
	char fix[GDX_GDR_TEXT_LEN];	     /* one sentence; "" when nothing to fix */
	char degraded_why[GDX_GDR_TEXT_LEN]; /* "" when not degraded */
	char line[GDX_GDR_LINE_LEN];	     /* what the plugin logs after "NET/GDX : " */
};

/* "auto" (or empty), "on", "off"; -EINVAL for anything else. */
int gdx_gdr_policy_parse(const char *s, enum gdx_gdr_policy *p);
const char *gdx_gdr_policy_name(enum gdx_gdr_policy p);
/* "direct", "staged", "broken". */
const char *gdx_gdr_mode_name(enum gdx_gdr_mode m);
/* "n/a", "off", "on", "unknown". */
const char *gdx_gdr_acs_name(enum gdx_gdr_acs a);
/* "off", "identity", "translating", "unknown". */
const char *gdx_gdr_iommu_name(enum gdx_gdr_iommu i);
/* "SrcValid ReqRedir ...", lspci's names of the ACS Control bits set. */
void gdx_gdr_acs_bits(unsigned ctrl, char *buf, size_t len);

/*
 * The DMA-BUF probe NCCL makes: ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0), which
 * can only fail. Returns the errno it failed with (EBADF when the kernel and
 * provider support DMA-BUF and reached the bad fd), 0 if it succeeded.
 */
int gdx_gdr_dmabuf_probe(struct ibv_pd *pd);
/* Whether a probe errno means DMA-BUF works: all but EOPNOTSUPP/EPROTONOSUPPORT. */
bool gdx_gdr_dmabuf_errno_ok(int err);
/* "EBADF", "EOPNOTSUPP", ... for the errnos a probe or registration sees; NULL otherwise. */
const char *gdx_gdr_errno_name(int err);

/*
 * Gathers every fact once (see the top of this file). Fails only for a
 * malformed facts file (-EINVAL), an unreadable one (-errno) or -ENOMEM,
 * with why saying what; a missing topology, driver or sysfs entry is a fact.
 * Not thread-safe; the probe is read-only afterwards except through
 * gdx_gdr_probe_nic().
 */
int gdx_gdr_probe_init(const struct gdx_gdr_opts *o, struct gdx_gdr_probe **p_out, char *why,
		       size_t why_len);
void gdx_gdr_probe_free(struct gdx_gdr_probe *p);

/*
 * Records the DMA-BUF probe of a NIC on its protection domain (pd NULL keeps
 * the facts file's result), adding the NIC when sysfs did not list it.
 * Returns its index, or -ENOSPC.
 */
int gdx_gdr_probe_nic(struct gdx_gdr_probe *p, const char *ibdev, struct ibv_pd *pd);

int gdx_gdr_find_nic(const struct gdx_gdr_probe *p, const char *ibdev);
int gdx_gdr_find_gpu(const struct gdx_gdr_probe *p, const char *pci);
const struct gdx_gdr_path *gdx_gdr_path(const struct gdx_gdr_probe *p, int gpu, int nic);

/*
 * What to advertise for one NIC and the line to log: the NIC's capability
 * (peer memory, DMA-BUF, CUDA), judged on the path to its nearest GPU.
 * Returns 0, or -ENOENT for an unknown NIC.
 */
int gdx_gdr_nic_verdict(const struct gdx_gdr_probe *p, const char *ibdev,
			enum gdx_gdr_policy policy, struct gdx_gdr_verdict *v);
/* The same for one GPU-NIC pair (indices into p->gpus and p->nics): direct
 * only when NCCL would use the direct path for it too (path class within
 * NCCL_NET_GDR_LEVEL). Returns 0 or -EINVAL. */
int gdx_gdr_pair_verdict(const struct gdx_gdr_probe *p, int gpu, int nic,
			 enum gdx_gdr_policy policy, struct gdx_gdr_verdict *v);

/* Levels of the host-wide checks, for gdx-doctor's exit status. */
enum gdx_gdr_level { GDX_GDR_LEVEL_OK, GDX_GDR_LEVEL_DEGRADED, GDX_GDR_LEVEL_BROKEN };

/* RLIMIT_MEMLOCK: BROKEN below GDX_GDR_MEMLOCK_MIN; text says so and how to fix. */
enum gdx_gdr_level gdx_gdr_memlock_check(const struct gdx_gdr_probe *p, char *text, size_t len);
/* A BAR1 under GDX_GDR_BAR1_TINY: DEGRADED, with text; OK when fine or unknown. */
enum gdx_gdr_level gdx_gdr_bar1_check(const struct gdx_gdr_probe *p, int gpu, char *text,
				      size_t len);

#endif
