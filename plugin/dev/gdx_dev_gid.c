/* SPDX-License-Identifier: MIT */
/* The GID a connection takes on a device's port (gdx_dev_gid.h). */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "dev/gdx_dev_gid.h"
#include "dev/gdx_gid.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "sys/gdx_sysfs.h"

/* The automatic RoCE GID choice over the port's whole table (sysfs). */
static int gdx_gid_scan(struct gdx_dev *dev)
{
	struct gdx_gid_entry table[GDX_GID_TABLE_MAX];
	struct gdx_gid_range range;
	int n, best;

	n = gdx_gid_read_table(gdx_sysfs_root(), dev->ibdev, dev->ib_port, table,
			       GDX_GID_TABLE_MAX);
	gdx_gid_range_parse(gdx_params.addr_range, &range); /* checked at init */
	best = n > 0 ? gdx_gid_choose(table, n, gdx_params.addr_family, gdx_params.roce_version,
				      &range)
		     : -1;
	if (best < 0) {
		GDX_WARN("%s port %d has no usable RoCE GID%s%s%s (is an IP address configured on "
			 "its netdev?); set NCCL_GDX_GID_INDEX to force one",
			 dev->ibdev, dev->ib_port, range.set ? " in " : "",
			 range.set ? gdx_params.addr_range : "",
			 range.set ? " (NCCL_GDX_ADDR_RANGE)" : "");
		return -EADDRNOTAVAIL;
	}
	return table[best].index;
}

/* The automatic choice, remembered per port: the table is read once, and a
 * later connection only checks (one query) that the index still holds the
 * same GID; an address change on the netdev makes it choose again. */
static int gdx_gid_auto(struct gdx_dev *dev)
{
	union ibv_gid now;
	int index;

	pthread_mutex_lock(&dev->ib->lock);
	index = dev->gid_auto_index;
	if (index >= 0 && (ibv_query_gid(dev->ib->ctx, (uint8_t)dev->ib_port, index, &now) ||
			   memcmp(&now, &dev->gid_auto, sizeof(now))))
		index = -1;
	if (index < 0) {
		index = gdx_gid_scan(dev);
		if (index >= 0 &&
		    ibv_query_gid(dev->ib->ctx, (uint8_t)dev->ib_port, index, &dev->gid_auto) == 0)
			dev->gid_auto_index = index;
	}
	pthread_mutex_unlock(&dev->ib->lock);
	return index;
}

int gdx_dev_gid(struct gdx_dev *dev, int *index, union ibv_gid *gid)
{
	if (dev->link_layer == IBV_LINK_LAYER_INFINIBAND) {
		*index = gdx_params.gid_index >= 0 ? gdx_params.gid_index : 0;
	} else if (gdx_params.gid_index >= 0) {
		*index = gdx_params.gid_index;
	} else {
		*index = gdx_gid_auto(dev);
		if (*index < 0)
			return *index;
	}
	if (ibv_query_gid(dev->ib->ctx, (uint8_t)dev->ib_port, *index, gid)) {
		GDX_WARN("ibv_query_gid(%s port %d index %d) failed: %s", dev->ibdev, dev->ib_port,
			 *index, strerror(errno));
		return -EINVAL;
	}
	if (dev->link_layer == IBV_LINK_LAYER_ETHERNET && gdx_gid_is_zero(gid->raw)) {
		GDX_WARN("%s port %d GID index %d is empty", dev->ibdev, dev->ib_port, *index);
		return -EADDRNOTAVAIL;
	}
	return 0;
}
