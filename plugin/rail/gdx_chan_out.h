/* SPDX-License-Identifier: MIT */
/*
 * What takes a rail out of a channel: the liveness rule that fails work a
 * QP has held too long, and the taking out itself (the part the two-sided
 * path and one-sided RMA share; each re-sends its own work after it).
 */
#ifndef GDX_CHAN_OUT_H
#define GDX_CHAN_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rail/gdx_chan.h"

/* Rail r out of the channel, to state (DRAINING or DOWN): its QPs to
 * error, its bytes in flight forgotten by the striping, its time and the
 * count of its downs kept. The protocol re-sends its work. */
void gdx_chan_take_out(struct gdx_chan *ch, int r, enum gdx_rail_state state, uint64_t now);

/* How long a QP's retries last (NCCL_GDX_TIMEOUT, NCCL_GDX_RETRY_CNT), ms:
 * 4.096 us * 2^timeout, retry_cnt + 1 times. */
uint64_t gdx_chan_retry_budget_ms(void);

/* The liveness rule for work that has waited waited_ms on a QP of dev:
 * whether to fail it as a completion error would, with why in what. Past
 * what its retries can last once the port went down meanwhile (rxe keeps
 * work it could not send, so its retries need not end), or four times
 * that in any case. */
bool gdx_chan_overdue(struct gdx_dev *dev, uint64_t waited_ms, uint64_t now, char *what,
		      size_t len);

#endif
