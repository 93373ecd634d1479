/* SPDX-License-Identifier: MIT */
/*
 * Memory registration (gdx_reg.c): host, GPU (peer memory) and DMA-BUF
 * memory, through each rail's registration cache. 0 or a negative errno,
 * after a WARN that names the cause.
 */
#ifndef GDX_REG_H
#define GDX_REG_H

#include <stdint.h>

#include <stdbool.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"

int gdx_reg_mr(struct gdx_comm *comm, void *data, uint64_t size, int type, struct gdx_mr **mr_p);
/* DMA-BUF: fd is only used during the call (NCCL closes it right after). */
int gdx_reg_mr_dmabuf(struct gdx_comm *comm, void *data, uint64_t size, int type, uint64_t offset,
		      int fd, struct gdx_mr **mr_p);
int gdx_dereg_mr(struct gdx_mr *mr);
/* One-sided RMA's symmetric windows (gdx_rma_reg.c), on every NIC of the
 * device v: remote atomics allowed, and strictly ordered when strict (a
 * region that takes signals) or DMA-BUF; never interchangeable with the
 * two-sided path's registrations of the same range. Released with
 * gdx_dereg_mr(). */
int gdx_reg_sym(const struct gdx_vdev *v, void *data, uint64_t size, int type, bool strict,
		bool dmabuf, uint64_t offset, int fd, struct gdx_mr **mr_p);

#endif
