/* SPDX-License-Identifier: MIT */
/*
 * The GID a connection takes on a device's port: NCCL_GDX_GID_INDEX, or the
 * automatic RoCE choice over the port's table (dev/gdx_gid.h's rules),
 * remembered per port and checked again at each connection.
 */
#ifndef GDX_DEV_GID_H
#define GDX_DEV_GID_H

#include <infiniband/verbs.h>

#include "dev/gdx_dev.h"

/* The GID a rail on dev uses, and its index: NCCL_GDX_GID_INDEX, or the
 * automatic RoCE choice (0 on InfiniBand). A WARN and -errno when there is
 * none. */
int gdx_dev_gid(struct gdx_dev *dev, int *index, union ibv_gid *gid);

#endif
