/* SPDX-License-Identifier: MIT */
/*
 * GPU and RDMA NIC placement from hwloc: the PCIe path class between every
 * GPU and every NIC (the codes of `nvidia-smi topo -m`), the NICs each GPU
 * would use, and the rail groups these form (a GPU's nearest NICs, which
 * NCCL_GDX_RAILS=gpu fuses into one device). The topology comes
 * from the live machine or from an hwloc XML file (`lstopo --of xml`), so
 * tests feed fixtures. Everything is computed in gdx_topo_load(); the object
 * is read-only afterwards, so any number of threads may read it at once.
 */
#ifndef GDX_TOPO_H
#define GDX_TOPO_H

#include <stddef.h>
#include <stdint.h>

/*
 * Ordered nearest first, so classes compare with < and >. Within SYS (and
 * NUMA_UNKNOWN) a NIC on the GPU's own CPU package ranks before the others:
 * gdx_topo_same_package() tells them apart, and gdx_topo_gpu_nics() and the
 * rail groups order by both.
 */
enum gdx_path {
	GDX_PATH_PIX = 1,      /* same PCIe switch: at most one switch between them */
	GDX_PATH_PXB,	       /* several PCIe switches, no host bridge */
	GDX_PATH_PHB,	       /* through one PCIe host bridge (root complex) */
	GDX_PATH_NODE,	       /* between host bridges of one NUMA node */
	GDX_PATH_NUMA_UNKNOWN, /* between host bridges, one without a recorded NUMA node:
				* NODE or SYS, hwloc does not say which */
	GDX_PATH_SYS,	       /* between NUMA nodes: another package (socket), or
				* another NUMA node of the same one (NPS2/NPS4, SNC) */
	GDX_PATH_UNKNOWN,      /* the NIC has no PCI device (rxe, some VFs) */
};

#define GDX_TOPO_PCI_LEN  16 /* "0000:17:00.0" and its NUL */
#define GDX_TOPO_NAME_LEN 64

struct gdx_topo_gpu {
	char pci[GDX_TOPO_PCI_LEN]; /* bus id, "0000:17:00.0" */
	int c2c;     /* attached to its CPU over NVLink-C2C: 1, 0, or -1 when the source
		      * cannot say (hwloc never can; NCCL's topology file can) */
	int numa;    /* NUMA node, -1 when unknown */
	int package; /* CPU package (socket), hwloc's logical index; -1 unknown */
	int bridge;  /* the gdx_topo_bridge it hangs off, -1 when none */
};

struct gdx_topo_nic {
	char name[GDX_TOPO_NAME_LEN]; /* verbs name, "mlx5_0" */
	char pci[GDX_TOPO_PCI_LEN];   /* bus id; "" when it has no PCI device */
	int numa;		      /* NUMA node of its PCI device, -1 when unknown */
	int package;		      /* CPU package of its PCI device, -1 when unknown */
	int group_gpus;		      /* GPUs whose rail group holds it: 0 alone, 2+ shared */
	int bridge;		      /* the gdx_topo_bridge it hangs off, -1 when none (rxe) */
};

/*
 * The PCIe tree above the GPUs and NICs, as the path classes count it: each
 * root complex (host bridge), its root ports, and the switches, a switch
 * standing for its upstream port and all its downstream ports (as NCCL counts
 * a switch). Only bridges above some GPU or NIC are kept.
 */
enum gdx_topo_bridge_kind {
	GDX_BRIDGE_HOST,      /* a root complex, hanging off a CPU object */
	GDX_BRIDGE_ROOT_PORT, /* a root port of a host bridge */
	GDX_BRIDGE_SWITCH,    /* a PCIe switch, by its upstream port */
};

struct gdx_topo_bridge {
	enum gdx_topo_bridge_kind kind;
	/* The upstream port's bus id; for a host bridge, the buses below it
	 * as lstopo writes them, "0000:[15-1b]". */
	char pci[GDX_TOPO_PCI_LEN];
	int up;	  /* the bridge above; -1 for a host bridge */
	int numa; /* the NUMA node of the CPU object its host bridge hangs off, -1 unknown */
};

/*
 * A set of NICs used together: the rail group of the GPUs listed (GPUs with
 * the same nearest NICs share one), or a single NIC in no GPU's group (ngpus 0).
 */
struct gdx_topo_group {
	const int *nics; /* NIC indices, in name order */
	int nnics;
	const int *gpus; /* GPU indices, ascending */
	int ngpus;
};

/*
 * What gdx_topo_load() keeps, read-only once loaded. In the header for the
 * tools' queries (tools/common/gdx_topo_query.h), which the plugin never
 * asks; everything else reads it through the functions below.
 */
struct gdx_topo {
	int ngpus, nnics, ngroups;
	struct gdx_topo_gpu *gpus;
	struct gdx_topo_nic *nics;
	enum gdx_path *paths;  /* ngpus x nnics */
	signed char *same_pkg; /* ngpus x nnics: gdx_topo_same_package() */
	int *order;	       /* ngpus x nnics: per GPU, NIC indices nearest first */
	int *group_len;	       /* per GPU: how many leading entries of order[] are its rail group */
	struct gdx_topo_group *groups;
	int *group_idx; /* backing store of the groups' nics[] and gpus[] */
	struct gdx_topo_bridge *bridges;
	int nbridges;
	char hostname[256]; /* hwloc's HostName of the machine it was taken on */
	int nccl_pairs;	    /* GPU-NIC pairs whose class NCCL's topology file set */
	int nccl_err;	    /* that file named and not read: -errno; else 0 */
};

/* "PIX", "PXB", "PHB", "NODE", "NUMA-UNKNOWN", "SYS", or "UNKNOWN" for
 * anything else: NCCL's names, and nvidia-smi's, where they have one. */
const char *gdx_path_name(enum gdx_path p);

/* A NIC that does its DMA through another PCI device than the one hwloc
 * hangs it off: a Data Direct device, at its DMA function. */
struct gdx_topo_home {
	const char *nic; /* hwloc's name, "mlx5_0" */
	const char *pci; /* the bus id it is placed at, "0000:17:00.1" */
};

/* What a load reads besides hwloc's tree. */
struct gdx_topo_opts {
	const char *xml; /* hwloc XML; NULL: this machine */
	int fd;		 /* the file xml names, opened and checked by the caller (a saved
			  * tree's topo.xml, resolved inside the tree; it stays the
			  * caller's); -1: open xml here */
	/* NICs placed at these PCI devices instead of hwloc's, where hwloc
	 * has the device (else kept where they are, said at INFO) */
	const struct gdx_topo_home *homes;
	int nhomes;
	/* NCCL's topology file (NCCL_TOPO_FILE; gdx_topo_nccl.h), NULL none: after
	 * hwloc's classes, the file's replace them for every GPU-NIC pair both
	 * name (GPUs by bus id, NICs by net name or else bus id), and a GPU's
	 * <c2c> sets its c2c; then the order and groups follow them, as NCCL's
	 * do. One that cannot be read leaves hwloc's: the load succeeds, with
	 * t->nccl_err and why saying so. */
	const char *nccl_file;
};

/*
 * Loads the topology of this machine (xml NULL) or of an hwloc XML file, with
 * I/O objects; o NULL is none of the options. The file is read here and
 * handed to hwloc as a buffer, without what hwloc's built-in XML parser
 * (hwloc without libxml2) refuses in files lstopo wrote and people then
 * published or edited: comments, CRs, a byte order mark, blank space and
 * other declarations before <topology>. Returns 0 and *topo_p, -ENOENT when
 * xml does not exist, -EINVAL when it is not an hwloc XML topology this hwloc
 * reads (or hwloc cannot read this machine), -EFBIG past 64 MiB, -ENOMEM, or
 * another -errno when the file cannot be read; on failure why (when not
 * NULL) says what went wrong in one line: for a newer hwloc's format, which
 * one and the hwloc that reads it; for XML only libxml2 reads, that and where
 * to get it.
 */
int gdx_topo_load_opts(const struct gdx_topo_opts *o, struct gdx_topo **topo_p, char *why,
		       size_t why_len);
void gdx_topo_free(struct gdx_topo *t);

/* GPUs (NVIDIA PCI devices of class 3D or VGA) in bus id order, and RDMA
 * NICs (hwloc OpenFabrics devices) in name order, mlx5_9 before mlx5_10
 * (how many: tools/common/gdx_topo_query.h). The getters return NULL for an
 * index out of range. */
int gdx_topo_ngpus(const struct gdx_topo *t);
const struct gdx_topo_gpu *gdx_topo_gpu(const struct gdx_topo *t, int i);
const struct gdx_topo_nic *gdx_topo_nic(const struct gdx_topo *t, int i);

/* Index of the GPU with that bus id ("0000:17:00.0", any case) or of the
 * NIC with that name; -1 when there is none. */
int gdx_topo_find_gpu(const struct gdx_topo *t, const char *pci);
int gdx_topo_find_nic(const struct gdx_topo *t, const char *name);

/* Path class between a GPU and a NIC; UNKNOWN for an index out of range. */
enum gdx_path gdx_topo_path(const struct gdx_topo *t, int gpu, int nic);

/* Whether the GPU's and the NIC's PCI devices hang off the same CPU package
 * (socket): 1 yes, 0 no, -1 unknown (either package not recorded, no PCI
 * device, an index out of range). */
int gdx_topo_same_package(const struct gdx_topo *t, int gpu, int nic);

/*
 * Rail groups: one per distinct GPU rail, in order of the first GPU using it,
 * then one per NIC in no GPU's group (near no GPU, or without a PCI device), in NIC
 * order.
 */
int gdx_topo_ngroups(const struct gdx_topo *t);
const struct gdx_topo_group *gdx_topo_group(const struct gdx_topo *t, int i);

/*
 * What NCCL_GDX_RAILS=auto fuses: every group that some GPU uses and that
 * holds two or more of the given device names (at most max_members). Fills
 * members[g][k] with indices into names; returns the number of groups.
 */
int gdx_topo_auto_groups(const struct gdx_topo *t, const char *const *names, int n,
			 int members[][8], int *counts, int max_groups, int max_members);

/*
 * The far members of a fused device of NICs names[0..n) (2..32): a bit per
 * member that the GPU the device serves (the GPU nearest its first member,
 * where NCCL places it) reaches through a host bridge or beyond (PHB, NODE,
 * SYS) while another member shares a PCIe switch with it (PIX, PXB). 0 when
 * no member is near, none is far, or the topology cannot place every member
 * or has no GPU. *gpu_p gets that GPU's index and classes[k] each member's
 * path class from it, when they are not NULL and there is one.
 */
uint32_t gdx_topo_far_members(const struct gdx_topo *t, const char *const *names, int n, int *gpu_p,
			      enum gdx_path *classes);

/* For the tests only: no other file of the plugin uses what follows. */

/* gdx_topo_load_opts() of xml alone. */
int gdx_topo_load(const char *xml, struct gdx_topo **topo_p, char *why, size_t why_len);

#endif
