/* SPDX-License-Identifier: MIT */
/*
 * GPUDirect RDMA, the facts: whether each NIC can register GPU memory (peer
 * memory or DMA-BUF), and what stands between each GPU and NIC (path class,
 * ACS, IOMMU). What the facts mean for NCCL is gdx_gdr_verdict.h's.
 *
 * gdx_gdr_probe_init() gathers the facts once: sysfs under a root (fixtures
 * in tests), the topology, the CUDA driver through dlopen("libcuda.so.1")
 * (never linked), uname and getrlimit, or a facts file instead of those live
 * probes (tests only, gdx_gdr_facts.h). gdx_gdr_probe_nic() adds one NIC's
 * DMA-BUF probe on its protection domain.
 */
#ifndef GDX_GDR_H
#define GDX_GDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdr/gdx_gdr_rule.h"
#include "topo/gdx_topo.h"

struct ibv_pd;

#define GDX_GDR_MAX_GPUS 64
#define GDX_GDR_MAX_NICS 64
#define GDX_GDR_TEXT_LEN 512
#define GDX_GDR_LINE_LEN 1024

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
	GDX_GDR_CUDA_UNKNOWN, /* not probed: a saved tree, its facts silent on CUDA */
};

/* ACS Control bits that keep peer-to-peer traffic off the direct route. */
#define GDX_GDR_ACS_REQ_REDIR	 0x04
#define GDX_GDR_ACS_CMPLT_REDIR	 0x08
#define GDX_GDR_ACS_EGRESS_CTRL	 0x20
#define GDX_GDR_ACS_BAD		 (GDX_GDR_ACS_REQ_REDIR | GDX_GDR_ACS_CMPLT_REDIR | GDX_GDR_ACS_EGRESS_CTRL)
#define GDX_GDR_MEMLOCK_INFINITY UINT64_MAX
struct gdx_gdr_gpu {
	char pci[GDX_TOPO_PCI_LEN]; /* "0000:1b:00.0" */
	int cuda_index;		    /* CUDA's ordinal; -1 when CUDA does not see it */
	int gdr_attr;		    /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED; -1 unknown */
	int dmabuf_attr;	    /* CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED; -1 unknown */
	int vmm_gdr_attr; /* CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED: NCCL's
			   * RMA needs it; -1 unknown (a facts file does not say) */
	uint64_t bar1;	  /* bytes; 0 when unknown */
	int c2c;	  /* on NVLink-C2C to its CPU (NVML, the facts, NCCL's topology file):
			   * 1, 0, -1 unknown */
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
	bool from_facts;   /* CUDA, kernel, memlock, DMA-BUF came from a facts file */
	bool saved;	   /* a saved tree: nothing of this machine (opts.saved) */
	char hostname[64]; /* the facts file's "hostname", "" when it has none */
	bool nccl_here;	   /* the facts file says "nccl this-machine" (tests) */
	/* Peer memory: the first marker found, relative to the sysfs root. */
	bool peermem;
	char peermem_name[32];	 /* "nvidia_peermem", "nv_peer_mem" */
	char peermem_marker[64]; /* "module/nvidia_peermem/version" */
	char kernel[96];	 /* uname release */
	int kernel_major, kernel_minor;
	uint64_t memlock;     /* soft RLIMIT_MEMLOCK, bytes, or GDX_GDR_MEMLOCK_INFINITY */
	bool memlock_unknown; /* not probed (a saved tree whose facts do not say) */
	enum gdx_gdr_cuda cuda;
	int cuda_version; /* cuDriverGetVersion: 12040 for 12.4 */
	int cuda_err;	  /* CUresult of the failing call when cuda == ERROR */
	char cuda_why[160];
	struct gdx_gdr_rule rule; /* NCCL's GPUDirect distance rule, for the NCCL judged */
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
	const char *facts;	     /* a facts file replaces the live probes (a saved tree's) */
	bool facts_in_tree;	     /* facts is a path inside sysfs_root, resolved there */
	/* A saved tree (sysfs_root not this machine's): what neither it nor its
	 * facts say is unknown (kernel, memlock, CUDA), never this machine's. */
	bool saved;
	const char *cuda_lib; /* NULL: "libcuda.so.1" */
	const char *nvml_lib; /* NULL: "libnvidia-ml.so.1" */
	int nccl_version;     /* the NCCL judged (gdx_nccl_version()); 0 unknown */
	/* NICs placed at another PCI device (a Data Direct device at its DMA
	 * function): their paths are judged from there (gdx_topo_opts) */
	const struct gdx_topo_home *homes;
	int nhomes;
};

/* "SrcValid ReqRedir ...", lspci's names of the ACS Control bits set. */
void gdx_gdr_acs_bits(unsigned ctrl, char *buf, size_t len);

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

/* snprintf into a reason or message buffer, truncating; buf may be NULL. */
void gdx_gdr_setf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* DMA-BUF needs kernel 5.12 or later (an unknown kernel, 0.0, passes: the
 * NIC's probe decides). */
bool gdx_gdr_kernel_dmabuf(const struct gdx_gdr_probe *p);

int gdx_gdr_find_nic(const struct gdx_gdr_probe *p, const char *ibdev);
const struct gdx_gdr_path *gdx_gdr_path(const struct gdx_gdr_probe *p, int gpu, int nic);

/* For the tests only: no other file of the plugin uses what follows. */

/*
 * The DMA-BUF probe NCCL makes: ibv_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0), which
 * can only fail. Returns the errno it failed with (EBADF when the kernel and
 * provider support DMA-BUF and reached the bad fd), 0 if it succeeded.
 */
int gdx_gdr_dmabuf_probe(struct ibv_pd *pd);
/* Whether a probe errno means DMA-BUF works: all but EOPNOTSUPP/EPROTONOSUPPORT. */
bool gdx_gdr_dmabuf_errno_ok(int err);
int gdx_gdr_find_gpu(const struct gdx_gdr_probe *p, const char *pci);

#endif
