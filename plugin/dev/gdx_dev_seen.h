/* SPDX-License-Identifier: MIT */
/*
 * Every port the last discovery (gdx_devs_init()) saw, and what it made of
 * it: the plugin's own decision, which gdx-doctor check shows rather than
 * deciding again (net/gdx_start.h). Kept until the next discovery, a
 * failed one too.
 */
#ifndef GDX_DEV_SEEN_H
#define GDX_DEV_SEEN_H

#include <infiniband/verbs.h>

#include "sys/gdx_name_list.h"

enum gdx_seen_fate {
	GDX_SEEN_TAKEN,	     /* a device of the table, index dev */
	GDX_SEEN_NOT_ACTIVE, /* its state is not ACTIVE (state) */
	GDX_SEEN_LINK,	     /* neither InfiniBand nor Ethernet */
	GDX_SEEN_FILTERED,   /* NCCL_GDX_HCA (or NCCL_IB_HCA) leaves it out */
	GDX_SEEN_QUERY,	     /* ibv_query_port failed */
	GDX_SEEN_OPEN,	     /* the device would not open or answer (port 0: all of it) */
	GDX_SEEN_FULL,	     /* past GDX_MAX_DEVS */
};
#define GDX_SEEN_MAX 256
struct gdx_dev_seen {
	char ibdev[IBV_SYSFS_NAME_MAX];
	int port;  /* 1.., 0 for a device that would not open */
	int state; /* enum ibv_port_state, 0 when unknown */
	int link_layer;
	enum gdx_seen_fate fate;
	int dev; /* the table's index when taken, else -1 */
};
const char *gdx_seen_fate_name(enum gdx_seen_fate f);
/* "ACTIVE", "DOWN", ... of an enum ibv_port_state. */
const char *gdx_port_state_name(int state);
/* The ports of the last discovery, *n of them. */
const struct gdx_dev_seen *gdx_devs_seen(int *n);

/* For gdx_devs_init(): a discovery begins; a port seen (port 0: a device
 * that would not open), dev its table index when taken; the one WARN when
 * none was kept, naming the ports, what left each out, and the fix. */
void gdx_seen_reset(void);
void gdx_seen_add(const char *ibdev, int port, const struct ibv_port_attr *pa,
		  enum gdx_seen_fate fate, int dev);
void gdx_seen_none(int nlist, int seen_ports, const struct gdx_name_list *filter);

#endif
