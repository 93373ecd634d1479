/* SPDX-License-Identifier: MIT */
/*
 * ConnectX-8 Data Direct: an mlx5 NIC whose DMA goes through a PCI function
 * of its own (beside the GPU's PCIe switch) while its control path stays on
 * the NIC's function. As NCCL's net_ib does it (NCCL_GDX_DATA_DIRECT, twin of
 * NCCL_IB_DATA_DIRECT): such a device is advertised as "<dev>_dma" at that
 * function's PCI path, and its DMA-BUF memory is registered for it.
 */
#ifndef GDX_DATA_DIRECT_H
#define GDX_DATA_DIRECT_H

#include <infiniband/verbs.h>
#include <stddef.h>

/* NCCL_GDX_DATA_DIRECT's values */
enum gdx_dd_mode {
	GDX_DD_OFF = 0,	 /* the NIC's own function only */
	GDX_DD_ONLY = 1, /* the Data Direct device in place of the NIC's own */
	GDX_DD_BOTH = 2, /* both, the Data Direct one after it */
};

/* Whether the opened device has a Data Direct DMA function NCCL would use:
 * NCCL_GDX_DATA_DIRECT above 0, an mlx5 device (libmlx5 found), DMA-BUF
 * registration not refused as unsupported (a probe with fd -1 through
 * ibv_reg_dmabuf_mr and mlx5dv_reg_dmabuf_mr), and mlx5 naming the
 * function. 1 with its PCI path (the sysfs root in front, as NCCL puts
 * /sys), 0 when not (or after one WARN when mlx5 fails to say). */
int gdx_dd_path(struct ibv_device *dev, struct ibv_context *ctx, char *path, size_t len);

/* A DMA-BUF registration for the Data Direct function:
 * mlx5dv_reg_dmabuf_mr with MLX5DV_REG_DMABUF_ACCESS_DATA_DIRECT. NULL
 * with errno set, EOPNOTSUPP when libmlx5 is gone. */
struct ibv_mr *gdx_dd_reg_dmabuf(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
				 int fd, int access);

#endif
