/* SPDX-License-Identifier: MIT */
/*
 * A port's speed in Mb/s (gdx_dev_speed.c), as the device table and a
 * speed change event ask it.
 */
#ifndef GDX_DEV_SPEED_H
#define GDX_DEV_SPEED_H

#include <infiniband/verbs.h>

/* Mb/s of a port (ibv_query_port_speed, else active_speed x width, else
 * sysfs); 0 when unknown. */
int gdx_dev_port_speed(struct ibv_context *ctx, const char *ibdev, int port,
		       const struct ibv_port_attr *pa);
/* For the tests only: no other file of the plugin uses what follows. */

/* Mbps for an active_speed (or active_speed_ex) / active_width pair, 0 when
 * unknown. */
int gdx_dev_speed_mbps(unsigned active_speed, unsigned active_width);
/* Mbps of sysfs's port rate, "400 Gb/sec (4X NDR)"; 0 when it is not one. */
int gdx_dev_rate_mbps(const char *rate);

#endif
