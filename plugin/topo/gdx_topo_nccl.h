/* SPDX-License-Identifier: MIT */
/*
 * NCCL's own topology file (NCCL_TOPO_FILE, or what NCCL_TOPO_DUMP_FILE
 * wrote): `<system version="1">` holding `<cpu>` elements, each holding a
 * tree of `<pci busid= class=>` elements, a bridge (class 0x0604..) holding
 * more. A GPU is a `<pci>` of display class (0x03..), maybe with `<gpu>` and,
 * under it, `<c2c>` (NVLink-C2C to its CPU); a NIC a `<pci>` of network
 * class (0x02..) or one holding `<nic>`, whose `<net name=>` children are its
 * ports; a `<nic>` right under a `<cpu>` is a NIC without PCI. NCCL takes
 * its topology from the file when NCCL_TOPO_FILE names one (a cloud VM's
 * image writes one that pairs each GPU with one NIC under a bridge of its
 * own: PIX, whatever the hypervisor's PCIe looks like), and the plugin
 * follows it (gdx_topo_opts.nccl_file).
 *
 * The file is hostile input: read through gdx_file_open(), at most
 * GDX_TOPO_NCCL_MAX bytes, nested at most GDX_TOPO_NCCL_DEPTH deep. What
 * NCCL's parser refuses (src/graph/xml.cc: an XML declaration, a tab
 * between elements, a line break in a tag, blanks around '=', a wrong
 * version, a value over 255 bytes, more than 256 elements NCCL keeps, or
 * 128 under one) is refused here too, with NCCL's reason.
 */
#ifndef GDX_TOPO_NCCL_H
#define GDX_TOPO_NCCL_H

#include <stddef.h>

#define GDX_TOPO_NCCL_MAX   ((size_t)1 << 20)
#define GDX_TOPO_NCCL_DEPTH 32
#define GDX_NCCL_PCI_LEN    16 /* "0000:17:00.0" and its NUL */
#define GDX_NCCL_NAME_LEN   64

/* NCCL's path classes, with gdx_path's values (gdx_topo.h), which the
 * topology takes them as; NCCL has no NODE: between host bridges of one CPU
 * is PHB to it. */
enum gdx_tnc_class {
	GDX_TNC_PIX = 1,     /* under the same bridge */
	GDX_TNC_PXB = 2,     /* bridges that meet further up */
	GDX_TNC_PHB = 3,     /* through their <cpu> */
	GDX_TNC_SYS = 6,     /* across <cpu>s */
	GDX_TNC_UNKNOWN = 7, /* an index out of range */
};

struct gdx_topo_nccl_gpu {
	char pci[GDX_NCCL_PCI_LEN]; /* "0001:00:00.0", lower case */
	int c2c;		    /* 1: a <c2c> under its <gpu>; 0 none */
};

/* One per port (<net>), or one for a NIC without any. */
struct gdx_topo_nccl_nic {
	char pci[GDX_NCCL_PCI_LEN];   /* "" for a <nic> without a <pci> */
	char name[GDX_NCCL_NAME_LEN]; /* <net name=>, "" when not given */
};

struct gdx_topo_nccl {
	int ngpus, nnics;
	struct gdx_topo_nccl_gpu *gpus; /* in file order */
	struct gdx_topo_nccl_nic *nics;
	enum gdx_tnc_class *paths; /* ngpus x nnics: PIX, PXB, PHB or SYS, as NCCL counts */
};

/*
 * Reads path (fd -1), or fd, the file path names opened by the caller.
 * NCCL's path classes come from the tree: PIX when a GPU and a NIC hang off
 * the same bridge, PXB when the bridges above them meet further up, PHB
 * when they meet only at their <cpu>, SYS across <cpu>s. Returns 0 and *t_p,
 * or -ENOENT, -EINVAL (not NCCL's format, or what NCCL refuses), -EFBIG,
 * -ENOMEM, another -errno; why says which in one line.
 */
int gdx_topo_nccl_read(int fd, const char *path, struct gdx_topo_nccl **t_p, char *why,
		       size_t why_len);
void gdx_topo_nccl_free(struct gdx_topo_nccl *t);

/* The NCCL topology file the plugin follows: NCCL_TOPO_FILE, unless the
 * plugin is given an hwloc file of its own (gdx_file, NCCL_GDX_TOPO_FILE's,
 * not NULL), which is then the whole story; NULL when none. */
const char *gdx_topo_nccl_file(const char *gdx_file);

/* The file's NIC that is the NIC of that verbs name and bus id: by net
 * name when the file gives one, else by bus id; and its GPU of that bus id
 * (any case). -1 when none. */
int gdx_topo_nccl_find_nic(const struct gdx_topo_nccl *n, const char *name, const char *pci);
int gdx_topo_nccl_find_gpu(const struct gdx_topo_nccl *n, const char *pci);

enum gdx_tnc_class gdx_topo_nccl_path(const struct gdx_topo_nccl *t, int gpu, int nic);

/* For the tests only: no other file of the plugin uses what follows. */

/* gdx_topo_nccl_read() from a buffer of len bytes (the unit tests', and a
 * fuzz target's). */
int gdx_topo_nccl_parse(const char *buf, size_t len, struct gdx_topo_nccl **t_p, char *why,
			size_t why_len);

#endif
