/* SPDX-License-Identifier: MIT */
/*
 * GPU/NIC placement from hwloc. gdx_topo_load() reads the tree once
 * (gdx_topo_read.c), copies out what the plugin and gdx-doctor need (bus
 * ids, NUMA nodes, the path class of every GPU-NIC pair, rail groups) and
 * drops the hwloc topology, so the result is plain memory that never changes
 * and needs no lock.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <hwloc.h>

#include "topo/gdx_topo.h"
#include "topo/gdx_topo_nccl.h"
#include "topo/gdx_topo_read.h"
#include "sys/gdx_log.h"

#define GDX_PCI_VENDOR_NVIDIA 0x10de
#define GDX_PCI_CLASS_VGA     0x0300
#define GDX_PCI_CLASS_3D      0x0302

/* What load keeps of hwloc until the copy is done. */
struct gdx_topo_scan {
	hwloc_topology_t h;
	hwloc_obj_t *gpu_objs;	  /* PCI devices */
	hwloc_obj_t *nic_objs;	  /* PCI devices; NULL for a NIC without one */
	hwloc_obj_t *bridge_objs; /* the hwloc object of each of t->bridges */
	int max_bridges;
};

const char *gdx_path_name(enum gdx_path p)
{
	switch (p) {
	case GDX_PATH_PIX: return "PIX";
	case GDX_PATH_PXB: return "PXB";
	case GDX_PATH_PHB: return "PHB";
	case GDX_PATH_NODE: return "NODE";
	case GDX_PATH_NUMA_UNKNOWN: return "NUMA-UNKNOWN";
	case GDX_PATH_SYS: return "SYS";
	default: return "UNKNOWN";
	}
}

static bool gdx_topo_is_bridge(hwloc_obj_t o, hwloc_obj_bridge_type_t upstream)
{
	return o && o->type == HWLOC_OBJ_BRIDGE && o->attr->bridge.upstream_type == upstream;
}

/*
 * How hwloc draws PCIe: every root complex is a host bridge (a Bridge whose
 * upstream side is HOST) hanging off the CPU object it is local to (Package,
 * Group or NUMA-level object). Below it, every PCI-to-PCI bridge function is
 * a Bridge with a PCI upstream side: a root port, then for each PCIe switch
 * its upstream port with one child Bridge per downstream port. A device sits
 * below a root port or a switch's downstream port (in a VM, often right on
 * the host bridge).
 *
 * NCCL places a device by its sysfs path: it skips the port right above the
 * device and takes the bridge above that, when there is one, as the switch
 * the device hangs off (so a switch's upstream and downstream ports count as
 * one switch); otherwise the device hangs off the CPU. This returns that
 * switch (its upstream port), or NULL when o hangs off the host bridge.
 */
static hwloc_obj_t gdx_topo_switch_of(hwloc_obj_t o)
{
	hwloc_obj_t port = o->parent;

	if (!gdx_topo_is_bridge(port, HWLOC_OBJ_BRIDGE_PCI))
		return NULL;
	return gdx_topo_is_bridge(port->parent, HWLOC_OBJ_BRIDGE_PCI) ? port->parent : NULL;
}

static hwloc_obj_t gdx_topo_host_bridge_of(hwloc_obj_t o)
{
	for (o = o->parent; o && hwloc_obj_type_is_io(o->type); o = o->parent)
		if (gdx_topo_is_bridge(o, HWLOC_OBJ_BRIDGE_HOST))
			return o;
	return NULL;
}

/* The NUMA node an I/O object is local to: the one node of the CPU object it
 * hangs off; -1 when that object spans several nodes or none. */
static int gdx_topo_numa_of(hwloc_topology_t h, hwloc_obj_t o)
{
	hwloc_obj_t cpu = hwloc_get_non_io_ancestor_obj(h, o);

	if (!cpu || !cpu->nodeset || hwloc_bitmap_weight(cpu->nodeset) != 1)
		return -1;
	return hwloc_bitmap_first(cpu->nodeset);
}

/*
 * The CPU package (socket) an I/O object is local to, as hwloc's logical
 * index: the Package at or above the CPU object it hangs off, or else the
 * one Package whose CPUs include all of that object's (a host bridge hung
 * off the Machine of a one-socket node); -1 when the object spans packages
 * (an old dump that recorded no locality) or the file has no Package.
 */
static int gdx_topo_package_of(hwloc_topology_t h, hwloc_obj_t o)
{
	hwloc_obj_t cpu = hwloc_get_non_io_ancestor_obj(h, o), pkg;

	if (!cpu)
		return -1;
	pkg = cpu->type == HWLOC_OBJ_PACKAGE
		      ? cpu
		      : hwloc_get_ancestor_obj_by_type(h, HWLOC_OBJ_PACKAGE, cpu);
	if (pkg)
		return (int)pkg->logical_index;
	if (!cpu->cpuset || hwloc_bitmap_iszero(cpu->cpuset))
		return -1;
	for (pkg = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PACKAGE, NULL); pkg;
	     pkg = hwloc_get_next_obj_by_type(h, HWLOC_OBJ_PACKAGE, pkg))
		if (pkg->cpuset && hwloc_bitmap_isincluded(cpu->cpuset, pkg->cpuset))
			return (int)pkg->logical_index;
	return -1;
}

/*
 * The path class between a GPU and a NIC PCI device, as `nvidia-smi topo -m`
 * names it and NCCL computes it from the NIC's pciPath:
 * - PIX: both hang off the same switch (see gdx_topo_switch_of): GPU, port,
 *   switch, port, NIC.
 * - PXB: the chains of switches above them meet, but not at the first one of
 *   each: the path crosses from switch to switch without reaching the CPU.
 * - PHB: the chains do not meet, and both sit under the same host bridge.
 * - NODE: different host bridges of the same NUMA node.
 * - SYS: different NUMA nodes, or different packages when a NUMA node is not
 *   recorded. NCCL makes one CPU node per NUMA node and links every two
 *   with the same SYS link, so another NUMA node of the GPU's own package
 *   (AMD NPS2/NPS4, Intel SNC) is SYS as much as the other socket is;
 *   gdx_topo_rank() tells the two apart.
 * - NUMA_UNKNOWN: different host bridges and a NUMA node not recorded (old
 *   dumps hang host bridges off the Machine), unless the packages differ:
 *   NODE or SYS, and nothing here says which.
 * One difference with NCCL: NCCL folds the second level of Broadcom PEX
 * Gen4/Gen5 switches (1000:c010, 1000:c030, Broadcom subsystem ids) into the
 * first, so behind such a switch it may say PIX where nvidia-smi and this
 * code say PXB (DGX A100: PXB here, as in its `nvidia-smi topo -m`).
 */
static enum gdx_path gdx_topo_classify(hwloc_obj_t gpu, const struct gdx_topo_gpu *g,
				       hwloc_obj_t nic, const struct gdx_topo_nic *n)
{
	hwloc_obj_t gpu_sw = gdx_topo_switch_of(gpu), nic_sw = gdx_topo_switch_of(nic);
	hwloc_obj_t host;

	for (hwloc_obj_t sn = nic_sw; sn; sn = gdx_topo_switch_of(sn))
		for (hwloc_obj_t sg = gpu_sw; sg; sg = gdx_topo_switch_of(sg))
			if (sg == sn)
				return sg == gpu_sw && sn == nic_sw ? GDX_PATH_PIX : GDX_PATH_PXB;
	host = gdx_topo_host_bridge_of(gpu);
	if (host && host == gdx_topo_host_bridge_of(nic))
		return GDX_PATH_PHB;
	if (g->numa >= 0 && n->numa >= 0)
		return g->numa == n->numa ? GDX_PATH_NODE : GDX_PATH_SYS;
	if (g->package >= 0 && n->package >= 0 && g->package != n->package)
		return GDX_PATH_SYS;
	return GDX_PATH_NUMA_UNKNOWN;
}

static void gdx_topo_busid(hwloc_obj_t pci, char buf[GDX_TOPO_PCI_LEN])
{
	const struct hwloc_pcidev_attr_s *a = &pci->attr->pcidev;

	snprintf(buf, GDX_TOPO_PCI_LEN, "%04x:%02x:%02x.%01x", (unsigned)a->domain, a->bus, a->dev,
		 a->func);
}

static bool gdx_topo_is_gpu(hwloc_obj_t o)
{
	const struct hwloc_pcidev_attr_s *a = &o->attr->pcidev;

	/* Only the GPU function itself: its HDMI audio, USB-C and the NVSwitches
	 * are NVIDIA devices of other classes. */
	return a->vendor_id == GDX_PCI_VENDOR_NVIDIA &&
	       (a->class_id == GDX_PCI_CLASS_3D || a->class_id == GDX_PCI_CLASS_VGA);
}

static int gdx_topo_cmp_pci(const void *a, const void *b)
{
	const struct hwloc_pcidev_attr_s *x = &(*(const hwloc_obj_t *)a)->attr->pcidev;
	const struct hwloc_pcidev_attr_s *y = &(*(const hwloc_obj_t *)b)->attr->pcidev;
	unsigned long kx = ((unsigned long)x->domain << 24) | ((unsigned long)x->bus << 16) |
			   ((unsigned long)x->dev << 8) | x->func;
	unsigned long ky = ((unsigned long)y->domain << 24) | ((unsigned long)y->bus << 16) |
			   ((unsigned long)y->dev << 8) | y->func;

	return kx < ky ? -1 : kx > ky;
}

static int gdx_topo_cmp_osdev_name(const void *a, const void *b)
{
	const char *x = (*(const hwloc_obj_t *)a)->name, *y = (*(const hwloc_obj_t *)b)->name;

	/* strverscmp so that mlx5_10 comes after mlx5_9, as people number them. */
	return strverscmp(x ? x : "", y ? y : "");
}

static bool gdx_topo_is_rdma(hwloc_obj_t o)
{
	return o->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS && o->name && o->name[0];
}

/* Finds the GPUs and NICs: t->gpus and t->nics, and in scan their PCI
 * objects, which the path classes are computed from. */
/* Whether a GPU of this machine may be on NVLink-C2C, which hwloc cannot
 * show: only an NVIDIA Grace CPU has it, so an x86 or POWER machine's GPUs
 * are not; an Arm one's (or one hwloc does not name) may be. */
static bool gdx_topo_c2c_possible(hwloc_topology_t h)
{
	const char *arch = hwloc_obj_get_info_by_name(hwloc_get_root_obj(h), "Architecture");

	return !arch ||
	       !(!strncmp(arch, "x86", 3) || !strcmp(arch, "i686") || !strncmp(arch, "ppc", 3));
}

static int gdx_topo_collect(struct gdx_topo *t, struct gdx_topo_scan *scan)
{
	hwloc_obj_t o, *nic_osdevs;
	int ng = 0, nn = 0;

	for (o = hwloc_get_next_pcidev(scan->h, NULL); o; o = hwloc_get_next_pcidev(scan->h, o))
		ng += gdx_topo_is_gpu(o);
	for (o = hwloc_get_next_osdev(scan->h, NULL); o; o = hwloc_get_next_osdev(scan->h, o))
		nn += gdx_topo_is_rdma(o);

	/* calloc(0) may return NULL; one spare slot keeps "no memory" unambiguous. */
	scan->gpu_objs = calloc((size_t)ng + 1, sizeof(*scan->gpu_objs));
	scan->nic_objs = calloc((size_t)nn + 1, sizeof(*scan->nic_objs));
	nic_osdevs = calloc((size_t)nn + 1, sizeof(*nic_osdevs));
	t->gpus = calloc((size_t)ng + 1, sizeof(*t->gpus));
	t->nics = calloc((size_t)nn + 1, sizeof(*t->nics));
	if (!scan->gpu_objs || !scan->nic_objs || !nic_osdevs || !t->gpus || !t->nics) {
		free(nic_osdevs);
		return -ENOMEM;
	}

	for (o = hwloc_get_next_pcidev(scan->h, NULL); o && t->ngpus < ng;
	     o = hwloc_get_next_pcidev(scan->h, o))
		if (gdx_topo_is_gpu(o))
			scan->gpu_objs[t->ngpus++] = o;
	for (o = hwloc_get_next_osdev(scan->h, NULL); o && t->nnics < nn;
	     o = hwloc_get_next_osdev(scan->h, o))
		if (gdx_topo_is_rdma(o))
			nic_osdevs[t->nnics++] = o;
	qsort(scan->gpu_objs, (size_t)t->ngpus, sizeof(*scan->gpu_objs), gdx_topo_cmp_pci);
	qsort(nic_osdevs, (size_t)t->nnics, sizeof(*nic_osdevs), gdx_topo_cmp_osdev_name);

	for (int i = 0; i < t->ngpus; i++) {
		gdx_topo_busid(scan->gpu_objs[i], t->gpus[i].pci);
		t->gpus[i].numa = gdx_topo_numa_of(scan->h, scan->gpu_objs[i]);
		t->gpus[i].package = gdx_topo_package_of(scan->h, scan->gpu_objs[i]);
		t->gpus[i].c2c = gdx_topo_c2c_possible(scan->h) ? -1 : 0;
	}
	for (int i = 0; i < t->nnics; i++) {
		struct gdx_topo_nic *nic = &t->nics[i];
		hwloc_obj_t parent = nic_osdevs[i]->parent;

		snprintf(nic->name, sizeof(nic->name), "%s", nic_osdevs[i]->name);
		nic->numa = -1;
		nic->package = -1;
		/* A virtual device (rxe, siw) hangs off a CPU object or the
		 * machine: it has no PCI device and no locality of its own. */
		if (parent && parent->type == HWLOC_OBJ_PCI_DEVICE) {
			scan->nic_objs[i] = parent;
			gdx_topo_busid(parent, nic->pci);
			nic->numa = gdx_topo_numa_of(scan->h, parent);
			nic->package = gdx_topo_package_of(scan->h, parent);
		}
	}
	free(nic_osdevs);
	return 0;
}

/* The options' homes: each NIC named there placed at that PCI device (its
 * path classes, NUMA node and package then follow from it). */
static void gdx_topo_rehome(struct gdx_topo *t, struct gdx_topo_scan *scan,
			    const struct gdx_topo_opts *o)
{
	for (int k = 0; k < o->nhomes; k++) {
		int i = gdx_topo_find_nic(t, o->homes[k].nic);
		hwloc_obj_t pci = hwloc_get_pcidev_by_busidstring(scan->h, o->homes[k].pci);

		if (i < 0)
			continue;
		if (!pci) {
			GDX_INFO(NCCL_INIT | NCCL_NET,
				 "%s: no PCI device %s in the topology: placed at its own, %s",
				 o->homes[k].nic, o->homes[k].pci, t->nics[i].pci);
			continue;
		}
		scan->nic_objs[i] = pci;
		gdx_topo_busid(pci, t->nics[i].pci);
		t->nics[i].numa = gdx_topo_numa_of(scan->h, pci);
		t->nics[i].package = gdx_topo_package_of(scan->h, pci);
	}
}

/* The bridge of hwloc object o in t->bridges, appended (below bridge up) when
 * it is not there yet; -1 when out of memory. */
static int gdx_topo_bridge_add(struct gdx_topo *t, struct gdx_topo_scan *scan, hwloc_obj_t o,
			       enum gdx_topo_bridge_kind kind, int up)
{
	struct gdx_topo_bridge *b;

	for (int i = 0; i < t->nbridges; i++)
		if (scan->bridge_objs[i] == o)
			return i;
	if (t->nbridges == scan->max_bridges) {
		int max = scan->max_bridges ? 2 * scan->max_bridges : 16;
		hwloc_obj_t *objs = realloc(scan->bridge_objs, (size_t)max * sizeof(*objs));
		struct gdx_topo_bridge *bridges;

		if (!objs)
			return -1;
		scan->bridge_objs = objs;
		bridges = realloc(t->bridges, (size_t)max * sizeof(*bridges));
		if (!bridges)
			return -1;
		t->bridges = bridges;
		scan->max_bridges = max;
	}
	b = &t->bridges[t->nbridges];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	b->up = up;
	if (kind == GDX_BRIDGE_HOST) {
		const struct hwloc_bridge_attr_s *a = &o->attr->bridge;

		snprintf(b->pci, sizeof(b->pci), "%04x:[%02x-%02x]",
			 (unsigned)a->downstream.pci.domain, a->downstream.pci.secondary_bus,
			 a->downstream.pci.subordinate_bus);
		b->numa = gdx_topo_numa_of(scan->h, o);
	} else {
		const struct hwloc_pcidev_attr_s *a = &o->attr->bridge.upstream.pci;

		snprintf(b->pci, sizeof(b->pci), "%04x:%02x:%02x.%01x", (unsigned)a->domain, a->bus,
			 a->dev, a->func);
		b->numa = up >= 0 ? t->bridges[up].numa : -1;
	}
	scan->bridge_objs[t->nbridges] = o;
	return t->nbridges++;
}

/*
 * The bridges above a PCI device, walked as gdx_topo_classify() walks them:
 * the switches (gdx_topo_switch_of), then the root port above the topmost,
 * then the host bridge. Added top down so that parents come first. Returns
 * the bridge the device hangs off, -1 when none, -2 when out of memory.
 */
static int gdx_topo_bridges_of(struct gdx_topo *t, struct gdx_topo_scan *scan, hwloc_obj_t dev)
{
	hwloc_obj_t chain[64], top = dev, host;
	enum gdx_topo_bridge_kind kinds[64];
	int n = 0, up = -1;

	for (hwloc_obj_t sw = gdx_topo_switch_of(dev); sw && n < 62; sw = gdx_topo_switch_of(sw)) {
		kinds[n] = GDX_BRIDGE_SWITCH;
		chain[n++] = top = sw;
	}
	/* gdx_topo_switch_of() stopped: top's port, if any, is a root port. */
	if (gdx_topo_is_bridge(top->parent, HWLOC_OBJ_BRIDGE_PCI)) {
		kinds[n] = GDX_BRIDGE_ROOT_PORT;
		chain[n++] = top->parent;
	}
	host = gdx_topo_host_bridge_of(top);
	if (host) {
		kinds[n] = GDX_BRIDGE_HOST;
		chain[n++] = host;
	}
	while (n-- > 0) {
		up = gdx_topo_bridge_add(t, scan, chain[n], kinds[n], up);
		if (up < 0)
			return -2;
	}
	return up;
}

static int gdx_topo_tree(struct gdx_topo *t, struct gdx_topo_scan *scan)
{
	for (int i = 0; i < t->ngpus; i++) {
		t->gpus[i].bridge = gdx_topo_bridges_of(t, scan, scan->gpu_objs[i]);
		if (t->gpus[i].bridge < -1)
			return -ENOMEM;
	}
	for (int i = 0; i < t->nnics; i++) {
		t->nics[i].bridge = -1;
		if (!scan->nic_objs[i])
			continue;
		t->nics[i].bridge = gdx_topo_bridges_of(t, scan, scan->nic_objs[i]);
		if (t->nics[i].bridge < -1)
			return -ENOMEM;
	}
	return 0;
}

/*
 * Where a NIC ranks for a GPU, lower first: its path class, then, within SYS
 * and NUMA_UNKNOWN, the GPU's own package before another or an unknown one.
 * NCCL ranks a GPU's NICs by bandwidth, then path class, and gives every SYS
 * path between two CPU nodes the same bandwidth: on a node with several NUMA
 * nodes per socket it ties a NIC on the GPU's socket with one across the
 * socket interconnect. The rail group takes only the former.
 */
static int gdx_topo_rank_of(enum gdx_path p, int same_pkg)
{
	bool split = p == GDX_PATH_SYS || p == GDX_PATH_NUMA_UNKNOWN;

	return 2 * (int)p + (split && same_pkg != 1);
}

/* Every GPU-NIC pair's path class, and whether they share a package. */
static void gdx_topo_classify_all(struct gdx_topo *t, const struct gdx_topo_scan *scan)
{
	for (int g = 0; g < t->ngpus; g++) {
		enum gdx_path *row = &t->paths[(size_t)g * (size_t)t->nnics];
		signed char *pkg = &t->same_pkg[(size_t)g * (size_t)t->nnics];
		const struct gdx_topo_gpu *gpu = &t->gpus[g];

		for (int i = 0; i < t->nnics; i++) {
			const struct gdx_topo_nic *nic = &t->nics[i];

			row[i] = scan->nic_objs[i] ? gdx_topo_classify(scan->gpu_objs[g], gpu,
								       scan->nic_objs[i], nic)
						   : GDX_PATH_UNKNOWN;
			pkg[i] = scan->nic_objs[i] && gpu->package >= 0 && nic->package >= 0
					 ? gpu->package == nic->package
					 : -1;
		}
	}
}

/* Each GPU's NICs nearest first; the rail group is the head of that
 * list at the best rank. NICs are in name order already, so walking the
 * ranks in order and the NICs in index order sorts by (rank, name). */
static void gdx_topo_rank(struct gdx_topo *t)
{
	int max_rank = gdx_topo_rank_of(GDX_PATH_UNKNOWN, 0);

	for (int g = 0; g < t->ngpus; g++) {
		const enum gdx_path *row = &t->paths[(size_t)g * (size_t)t->nnics];
		const signed char *pkg = &t->same_pkg[(size_t)g * (size_t)t->nnics];
		int *order = &t->order[(size_t)g * (size_t)t->nnics];
		int n = 0, best;

		for (int r = 0; r <= max_rank; r++)
			for (int i = 0; i < t->nnics; i++)
				if (gdx_topo_rank_of(row[i], pkg[i]) == r)
					order[n++] = i;
		t->group_len[g] = 0;
		best = n ? gdx_topo_rank_of(row[order[0]], pkg[order[0]]) : 0;
		while (t->group_len[g] < n && row[order[0]] != GDX_PATH_UNKNOWN &&
		       gdx_topo_rank_of(row[order[t->group_len[g]]], pkg[order[t->group_len[g]]]) ==
			       best)
			t->group_len[g]++;
		for (int i = 0; i < t->group_len[g]; i++)
			t->nics[order[i]].group_gpus++;
	}
}

/* NCCL's classes are gdx_path's values (gdx_topo_nccl.h). */
_Static_assert((int)GDX_TNC_PIX == (int)GDX_PATH_PIX && (int)GDX_TNC_PXB == (int)GDX_PATH_PXB &&
		       (int)GDX_TNC_PHB == (int)GDX_PATH_PHB &&
		       (int)GDX_TNC_SYS == (int)GDX_PATH_SYS &&
		       (int)GDX_TNC_UNKNOWN == (int)GDX_PATH_UNKNOWN,
	       "NCCL's path classes are gdx_path's");

/* n's classes over t's for every pair both name, and t's GPUs' c2c from
 * n's; t->nccl_pairs counts them. */
static void gdx_topo_nccl_apply(struct gdx_topo *t, const struct gdx_topo_nccl *n)
{
	for (int g = 0; g < t->ngpus; g++) {
		int fg = gdx_topo_nccl_find_gpu(n, t->gpus[g].pci);

		if (fg < 0)
			continue;
		t->gpus[g].c2c = n->gpus[fg].c2c;
		for (int i = 0; i < t->nnics; i++) {
			int fn = gdx_topo_nccl_find_nic(n, t->nics[i].name, t->nics[i].pci);

			if (fn < 0)
				continue;
			t->paths[(size_t)g * (size_t)t->nnics + (size_t)i] =
				(enum gdx_path)gdx_topo_nccl_path(n, fg, fn);
			t->nccl_pairs++;
		}
	}
}

/* NCCL's topology file, when named: its classes over hwloc's for the pairs
 * both name. One that cannot be read leaves hwloc's, said in why. */
static int gdx_topo_follow_nccl(struct gdx_topo *t, const char *file, char *why, size_t why_len)
{
	struct gdx_topo_nccl *n;
	int ret;

	if (!file)
		return 0;
	ret = gdx_topo_nccl_read(-1, file, &n, why, why_len);
	if (ret) {
		t->nccl_err = ret;
		return ret == -ENOMEM ? ret : 0;
	}
	gdx_topo_nccl_apply(t, n);
	gdx_topo_nccl_free(n);
	return 0;
}

static bool gdx_topo_same_group(const struct gdx_topo *t, int g, const struct gdx_topo_group *grp)
{
	const int *head = &t->order[(size_t)g * (size_t)t->nnics];

	if (t->group_len[g] != grp->nnics)
		return false;
	for (int i = 0; i < grp->nnics; i++)
		if (head[i] != grp->nics[i])
			return false;
	return true;
}

static int gdx_topo_group_all(struct gdx_topo *t)
{
	/* Room for every GPU once, every rail group's NICs (at most one group per
	 * GPU) and every NIC alone. */
	size_t nidx = (size_t)t->ngpus * ((size_t)t->nnics + 1) + (size_t)t->nnics;
	int *group_of = calloc((size_t)t->ngpus + 1, sizeof(*group_of));
	int *next;

	t->groups = calloc((size_t)t->ngpus + (size_t)t->nnics + 1, sizeof(*t->groups));
	t->group_idx = calloc(nidx + 1, sizeof(*t->group_idx));
	if (!group_of || !t->groups || !t->group_idx) {
		free(group_of);
		return -ENOMEM;
	}
	next = t->group_idx;

	/* First pass: which group each GPU joins, and the groups' NICs. */
	for (int g = 0; g < t->ngpus; g++) {
		int found = -1;

		group_of[g] = -1;
		if (!t->group_len[g])
			continue;
		for (int i = 0; i < t->ngroups && found < 0; i++)
			if (gdx_topo_same_group(t, g, &t->groups[i]))
				found = i;
		if (found < 0) {
			struct gdx_topo_group *grp = &t->groups[t->ngroups];

			memcpy(next, &t->order[(size_t)g * (size_t)t->nnics],
			       (size_t)t->group_len[g] * sizeof(*next));
			grp->nics = next;
			grp->nnics = t->group_len[g];
			next += t->group_len[g];
			found = t->ngroups++;
		}
		group_of[g] = found;
		t->groups[found].ngpus++;
	}
	/* Second pass: each group's GPUs, contiguous and ascending. */
	for (int i = 0; i < t->ngroups; i++) {
		int *gpus = next, n = 0;

		for (int g = 0; g < t->ngpus; g++)
			if (group_of[g] == i)
				gpus[n++] = g;
		t->groups[i].gpus = gpus;
		next += n;
	}
	free(group_of);

	for (int i = 0; i < t->nnics; i++) {
		struct gdx_topo_group *grp;

		if (t->nics[i].group_gpus)
			continue;
		grp = &t->groups[t->ngroups++];
		*next = i;
		grp->nics = next++;
		grp->nnics = 1;
	}
	return 0;
}

/* The root's HostName (hwloc writes the machine's into every XML dump). */
static void gdx_topo_keep_hostname(struct gdx_topo *t, const struct gdx_topo_scan *scan)
{
	const char *h = hwloc_obj_get_info_by_name(hwloc_get_root_obj(scan->h), "HostName");

	snprintf(t->hostname, sizeof(t->hostname), "%s", h ? h : "");
}

int gdx_topo_load(const char *xml, struct gdx_topo **topo_p, char *why, size_t why_len)
{
	/* this machine's, as NCCL sees it: with NCCL_TOPO_FILE's pairing */
	struct gdx_topo_opts o = {.xml = xml, .fd = -1, .nccl_file = gdx_topo_nccl_file(xml)};

	return gdx_topo_load_opts(&o, topo_p, why, why_len);
}

int gdx_topo_load_opts(const struct gdx_topo_opts *o, struct gdx_topo **topo_p, char *why,
		       size_t why_len)
{
	static const struct gdx_topo_opts none = {.fd = -1};
	struct gdx_topo_scan scan = {0};
	struct gdx_topo *t = NULL;
	size_t cells;
	int ret;

	o = o ? o : &none;
	gdx_topo_why(why, why_len, "%s", "");
	t = calloc(1, sizeof(*t));
	if (!t) {
		gdx_topo_why(why, why_len, "out of memory");
		return -ENOMEM;
	}
	ret = gdx_topo_read(&scan.h, o->fd, o->xml, why, why_len);
	if (ret)
		goto out;
	ret = gdx_topo_collect(t, &scan);
	if (ret)
		goto nomem;
	gdx_topo_rehome(t, &scan, o);
	gdx_topo_keep_hostname(t, &scan);
	cells = (size_t)t->ngpus * (size_t)t->nnics + 1;
	t->paths = calloc(cells, sizeof(*t->paths));
	t->same_pkg = calloc(cells, sizeof(*t->same_pkg));
	t->order = calloc(cells, sizeof(*t->order));
	t->group_len = calloc((size_t)t->ngpus + 1, sizeof(*t->group_len));
	if (!t->paths || !t->same_pkg || !t->order || !t->group_len) {
		ret = -ENOMEM;
		goto nomem;
	}
	gdx_topo_classify_all(t, &scan);
	ret = gdx_topo_follow_nccl(t, o->nccl_file, why, why_len);
	if (ret)
		goto nomem;
	gdx_topo_rank(t);
	ret = gdx_topo_tree(t, &scan);
	if (ret)
		goto nomem;
	ret = gdx_topo_group_all(t);
	if (ret)
		goto nomem;
	*topo_p = t;
	t = NULL;
	goto out;
nomem:
	gdx_topo_why(why, why_len, "out of memory");
out:
	if (scan.h)
		hwloc_topology_destroy(scan.h);
	free(scan.gpu_objs);
	free(scan.nic_objs);
	free(scan.bridge_objs);
	gdx_topo_free(t);
	return ret;
}

void gdx_topo_free(struct gdx_topo *t)
{
	if (!t)
		return;
	free(t->gpus);
	free(t->nics);
	free(t->paths);
	free(t->same_pkg);
	free(t->order);
	free(t->group_len);
	free(t->groups);
	free(t->group_idx);
	free(t->bridges);
	free(t);
}

int gdx_topo_ngpus(const struct gdx_topo *t)
{
	return t->ngpus;
}

const struct gdx_topo_gpu *gdx_topo_gpu(const struct gdx_topo *t, int i)
{
	return i >= 0 && i < t->ngpus ? &t->gpus[i] : NULL;
}

const struct gdx_topo_nic *gdx_topo_nic(const struct gdx_topo *t, int i)
{
	return i >= 0 && i < t->nnics ? &t->nics[i] : NULL;
}

int gdx_topo_find_gpu(const struct gdx_topo *t, const char *pci)
{
	for (int i = 0; pci && i < t->ngpus; i++)
		if (!strcasecmp(t->gpus[i].pci, pci))
			return i;
	return -1;
}

int gdx_topo_find_nic(const struct gdx_topo *t, const char *name)
{
	for (int i = 0; name && i < t->nnics; i++)
		if (!strcmp(t->nics[i].name, name))
			return i;
	return -1;
}

enum gdx_path gdx_topo_path(const struct gdx_topo *t, int gpu, int nic)
{
	if (gpu < 0 || gpu >= t->ngpus || nic < 0 || nic >= t->nnics)
		return GDX_PATH_UNKNOWN;
	return t->paths[(size_t)gpu * (size_t)t->nnics + (size_t)nic];
}

int gdx_topo_same_package(const struct gdx_topo *t, int gpu, int nic)
{
	if (gpu < 0 || gpu >= t->ngpus || nic < 0 || nic >= t->nnics)
		return -1;
	return t->same_pkg[(size_t)gpu * (size_t)t->nnics + (size_t)nic];
}

int gdx_topo_ngroups(const struct gdx_topo *t)
{
	return t->ngroups;
}

const struct gdx_topo_group *gdx_topo_group(const struct gdx_topo *t, int i)
{
	return i >= 0 && i < t->ngroups ? &t->groups[i] : NULL;
}

int gdx_topo_auto_groups(const struct gdx_topo *t, const char *const *names, int n,
			 int members[][8], int *counts, int max_groups, int max_members)
{
	int ngroups = 0;

	for (int g = 0; g < gdx_topo_ngroups(t) && ngroups < max_groups; g++) {
		const struct gdx_topo_group *grp = gdx_topo_group(t, g);
		int k = 0;

		if (grp->ngpus == 0 || grp->nnics < 2)
			continue;
		for (int i = 0; i < grp->nnics && k < max_members; i++) {
			const char *nic = gdx_topo_nic(t, grp->nics[i])->name;

			for (int d = 0; d < n; d++) {
				if (!strcmp(names[d], nic)) {
					members[ngroups][k++] = d;
					break;
				}
			}
		}
		if (k >= 2)
			counts[ngroups++] = k;
	}
	return ngroups;
}

uint32_t gdx_topo_far_members(const struct gdx_topo *t, const char *const *names, int n, int *gpu_p,
			      enum gdx_path *classes)
{
	int nic[32], gpu = -1;
	enum gdx_path best = GDX_PATH_UNKNOWN;
	bool near = false;
	uint32_t far = 0;

	if (n < 2 || n > 32)
		return 0;
	for (int k = 0; k < n; k++) {
		nic[k] = gdx_topo_find_nic(t, names[k]);
		if (nic[k] < 0 || !gdx_topo_nic(t, nic[k])->pci[0])
			return 0; /* a member the topology cannot place */
	}
	/* the GPU the device serves: nearest its first member, which NCCL
	 * places the device at; the lowest bus id among equals */
	for (int g = 0; g < gdx_topo_ngpus(t); g++) {
		enum gdx_path p = gdx_topo_path(t, g, nic[0]);

		if (gpu < 0 || p < best ||
		    (p == best && gdx_topo_same_package(t, g, nic[0]) == 1 &&
		     gdx_topo_same_package(t, gpu, nic[0]) != 1)) {
			gpu = g;
			best = p;
		}
	}
	if (gpu < 0)
		return 0;
	for (int k = 0; k < n; k++) {
		enum gdx_path p = gdx_topo_path(t, gpu, nic[k]);

		if (classes)
			classes[k] = p;
		near |= p <= GDX_PATH_PXB;
		if (p >= GDX_PATH_PHB && p != GDX_PATH_UNKNOWN)
			far |= 1u << k;
	}
	if (gpu_p)
		*gpu_p = gpu;
	return near ? far : 0;
}
