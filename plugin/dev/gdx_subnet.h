/* SPDX-License-Identifier: MIT */
/*
 * Subnet-aware device choice (NCCL_GDX_SUBNET_AWARE_ROUTING, NCCL 2.30.7's
 * NCCL_IB_SUBNET_AWARE_ROUTING), gdx_subnet.c. Where RoCE NICs are cabled
 * point to point without a switch (a ring of nodes, each port its own /30 or
 * /24), only the local port on the peer port's subnet reaches it, and the
 * device NCCL pairs by index may be another. The listener puts its ports'
 * GIDs in the handle; the connector keeps the device NCCL gave when every
 * one of its ports shares a subnet with a listener port, else takes the
 * first device of its view for which that holds, and says so in one line.
 */
#ifndef GDX_SUBNET_H
#define GDX_SUBNET_H

#include <stdbool.h>
#include <stdint.h>

#include "wire/gdx_wire.h"

/* Listener: the GIDs of dev's RoCE members into h (when the setting is on). */
void gdx_subnet_fill(struct gdx_handle *h, int dev);
/* Connector: the device to connect from, dev or a better one; dev itself
 * when the setting is off, the handle names no GID, or no device does
 * better. */
int gdx_subnet_pick(int dev, const struct gdx_handle *h);

/* For the tests only: no other file of the plugin uses what follows. */

/* Whether two GIDs share a subnet of prefix bits: of the IPv4 address for
 * two IPv4-mapped GIDs (32 at most), else of the whole GID. Zero GIDs share
 * nothing. */
bool gdx_subnet_same(const uint8_t a[16], const uint8_t b[16], int prefix);
/* Whether every one of n local GIDs shares a subnet with one of the
 * handle's (n > 0). */
bool gdx_subnet_reaches(const uint8_t (*local)[16], int n, const struct gdx_handle *h, int prefix);

#endif
