/* SPDX-License-Identifier: MIT */
/*
 * What gdx-doctor asks of a loaded topology (topo/gdx_topo.h) and the plugin
 * never does (gdx_topo_query.c): the machine's name, the counts, the PCIe
 * bridges, and each GPU's NICs in order.
 */
#ifndef GDX_TOPO_QUERY_H
#define GDX_TOPO_QUERY_H

#include "topo/gdx_topo.h"

/* The name of the machine the topology was taken on (hwloc's HostName: an
 * XML file's is its dumped machine's); NULL when it has none. */
const char *gdx_topo_hostname(const struct gdx_topo *t);

/* How many NICs gdx_topo_nic() gives. */
int gdx_topo_nnics(const struct gdx_topo *t);

/* The bridges, parents before children; NULL for an index out of range. */
int gdx_topo_nbridges(const struct gdx_topo *t);
const struct gdx_topo_bridge *gdx_topo_bridge(const struct gdx_topo *t, int i);

/*
 * Every NIC, nearest to the GPU first: by path class; within SYS and
 * NUMA_UNKNOWN, the NICs on the GPU's own package first (crossing the
 * socket interconnect is the longer way); then by name. Fills up to max
 * indices (nics may be NULL when max is 0) and returns how many there are in
 * all (-EINVAL for a bad GPU).
 */
int gdx_topo_gpu_nics(const struct gdx_topo *t, int gpu, int *nics, int max);

/*
 * The GPU's rail group: the head of gdx_topo_gpu_nics(), the NICs that rank equal
 * to the nearest (same path class and, within SYS, same package or not),
 * ties kept, in name order; NICs without a PCI device never belong to a
 * rail group. Fills up to max indices and returns how many there are in all (0: no
 * PCI NIC; -EINVAL: bad GPU).
 */
int gdx_topo_gpu_group(const struct gdx_topo *t, int gpu, int *nics, int max);

#endif
