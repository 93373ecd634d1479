/* SPDX-License-Identifier: MIT */
/*
 * The RDMA devices of a sysfs tree, as gdx-doctor check lists them (every
 * entry of class/infiniband), for gdx-doctor topo (gdx_doctor_topo_rdma.c):
 * hwloc lists no virtual device (rxe, siw), which has no PCI function of its
 * own; topo shows such a device by the netdev it sits on.
 */
#ifndef GDX_DOCTOR_TOPO_RDMA_H
#define GDX_DOCTOR_TOPO_RDMA_H

#include <stdbool.h>

#include "topo/gdx_topo.h"

#define DOCTOR_RDMA_MAX 64

struct doctor_rdma_dev {
	char name[GDX_TOPO_NAME_LEN];
	bool pcie;			   /* a PCI function of its own */
	char netdev[32];		   /* the netdev of its port 1, "" when none is named */
	char netdev_pci[GDX_TOPO_PCI_LEN]; /* that netdev's PCI function, "" when virtual */
	int topo; /* its index in the topology, -1 when hwloc lists it not */
};

struct doctor_rdma {
	int n;
	struct doctor_rdma_dev devs[DOCTOR_RDMA_MAX];
};

/*
 * Every RDMA device under root's class/infiniband ("/sys", a saved tree), in
 * version order (mlx5_9 before mlx5_10), each with its netdev and its index
 * in t. r->n is 0 when the tree has no such directory.
 */
void doctor_rdma_list(const char *root, const struct gdx_topo *t, struct doctor_rdma *r);

/* The device of that name; NULL when the tree has none. */
const struct doctor_rdma_dev *doctor_rdma_find(const struct doctor_rdma *r, const char *name);

/* How many devices hwloc's topology does not list (they are not on PCIe). */
int doctor_rdma_unlisted(const struct doctor_rdma *r);

#endif
