/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's symmetric windows (gdx_rma_reg.c): regMrSym and
 * regMrSymDmaBuf register a buffer on every NIC of this rank's device and
 * all-gather every rank's base address, size and keys over the group's
 * ring, so that a handle addresses the buffer of any rank at an offset. A
 * rank whose registration fails still takes part in the exchange, and the
 * call fails on every rank together (one failing while the others wait
 * would hang them). The collective comm keeps the live handles: a data call
 * with a handle that is not one of them (freed, another comm's, made up)
 * is refused. deregMrSym is local.
 */
#ifndef GDX_RMA_REG_H
#define GDX_RMA_REG_H

#include <stdbool.h>
#include <stdint.h>

#include "rma/gdx_rma_comm.h"

/* dmabuf: fd and offset as regMrSymDmaBuf gives them (fd only read during
 * the call). mr_flags: NCCL_NET_MR_FLAG_*; FORCE_SO registers strictly
 * ordered. */
int gdx_rma_reg_sym(struct gdx_rma_coll *c, void *data, uint64_t size, int type, uint64_t mr_flags,
		    bool dmabuf, uint64_t offset, int fd, struct gdx_rma_mr **mh_p);
int gdx_rma_dereg_sym(struct gdx_rma_coll *c, struct gdx_rma_mr *mh);
/* Whether mh is a live handle of c (takes c's lock). */
bool gdx_rma_mr_live(struct gdx_rma_coll *c, const void *mh);
/* Every handle of c released (closeColl); returns how many there were. */
int gdx_rma_mrs_drop(struct gdx_rma_coll *c);

/* For the tests only: no other file of the plugin uses what follows. */

/* regMrSym's exchanged records (every rank's, in rank order) into mh's
 * ranks, checked: 0, a rank's errno, -EPROTO for a malformed one. */
int gdx_rma_mr_unpack(struct gdx_rma_coll *c, const uint8_t *all, struct gdx_rma_mr *mh);

#endif
