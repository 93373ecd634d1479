/* SPDX-License-Identifier: MIT */
/*
 * The RDMA devices of a sysfs tree for gdx-doctor topo: the list check
 * reads (class/infiniband), each device's PCI function when it has one and
 * the netdev its port 1 carries (gid_attrs/ndevs, or rxe's "parent"), with
 * that netdev's PCI function. hwloc lists virtual devices only when asked
 * to, so that a VM's rxe devices were missing from topo altogether.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/gdx_topo.h"
#include "sys/gdx_sysfs.h"

#include "tools/common/gdx_topo_query.h"
#include "tools/doctor/gdx_doctor_topo_rdma.h"

/* The last component of the PCI path rel resolves to, when it is on the PCI
 * bus: "0000:00:03.0"; "" otherwise (a virtual device). */
static void rdma_pci_of(const char *root, const char *rel, char *out, size_t len)
{
	char real[4096];
	const char *base;

	out[0] = '\0';
	if (gdx_sysfs_realpath_in(root, rel, real, sizeof(real)) || !strstr(real, "/devices/pci"))
		return;
	base = strrchr(real, '/');
	if (base && strlen(base + 1) < len)
		snprintf(out, len, "%s", base + 1);
}

/* The netdev of port 1: the first GID's (every RoCE device has one), else
 * rxe's own "parent" attribute. */
static void rdma_netdev(const char *root, struct doctor_rdma_dev *d)
{
	char rel[512];

	snprintf(rel, sizeof(rel), "class/infiniband/%s/ports/1/gid_attrs/ndevs/0", d->name);
	if (gdx_sysfs_read_line_in(root, rel, d->netdev, sizeof(d->netdev))) {
		snprintf(rel, sizeof(rel), "class/infiniband/%s/parent", d->name);
		if (gdx_sysfs_read_line_in(root, rel, d->netdev, sizeof(d->netdev)))
			d->netdev[0] = '\0';
	}
	/* A name from the tree goes into text, JSON and dot: a netdev name
	 * never holds a slash, a space or a quote. */
	if (d->netdev[strcspn(d->netdev, "/ \t\"'\\<>&")] != '\0')
		d->netdev[0] = '\0';
	if (!d->netdev[0])
		return;
	snprintf(rel, sizeof(rel), "class/net/%s/device", d->netdev);
	rdma_pci_of(root, rel, d->netdev_pci, sizeof(d->netdev_pci));
}

static int rdma_cmp(const void *a, const void *b)
{
	return strverscmp(((const struct doctor_rdma_dev *)a)->name,
			  ((const struct doctor_rdma_dev *)b)->name);
}

void doctor_rdma_list(const char *root, const struct gdx_topo *t, struct doctor_rdma *r)
{
	struct dirent *e;
	DIR *dir;

	memset(r, 0, sizeof(*r));
	dir = gdx_sysfs_opendir_in(root, "class/infiniband");
	if (!dir)
		return;
	while ((e = readdir(dir)) && r->n < DOCTOR_RDMA_MAX) {
		struct doctor_rdma_dev *d = &r->devs[r->n];
		char rel[512], pci[GDX_TOPO_PCI_LEN];

		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof(d->name) ||
		    e->d_name[strcspn(e->d_name, " \t\"'\\<>&")] != '\0')
			continue;
		snprintf(d->name, sizeof(d->name), "%s", e->d_name);
		snprintf(rel, sizeof(rel), "class/infiniband/%s/device", d->name);
		rdma_pci_of(root, rel, pci, sizeof(pci));
		d->pcie = pci[0] != '\0';
		rdma_netdev(root, d);
		r->n++;
	}
	closedir(dir);
	qsort(r->devs, (size_t)r->n, sizeof(r->devs[0]), rdma_cmp);
	for (int i = 0; i < r->n; i++)
		r->devs[i].topo = t ? gdx_topo_find_nic(t, r->devs[i].name) : -1;
}

const struct doctor_rdma_dev *doctor_rdma_find(const struct doctor_rdma *r, const char *name)
{
	for (int i = 0; i < r->n; i++)
		if (!strcmp(r->devs[i].name, name))
			return &r->devs[i];
	return NULL;
}

int doctor_rdma_unlisted(const struct doctor_rdma *r)
{
	int n = 0;

	for (int i = 0; i < r->n; i++)
		n += r->devs[i].topo < 0;
	return n;
}
