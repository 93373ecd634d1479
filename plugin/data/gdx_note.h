/* SPDX-License-Identifier: MIT */
/*
 * The notes the two ends of a connection write about its rails into each
 * other's control region (struct gdx_note, gdx_comm.h): set, written on a
 * rail that works without overwriting one the NIC may still read, and read
 * back whole (gdx_failover.c acts on them).
 */
#ifndef GDX_NOTE_H
#define GDX_NOTE_H

#include <stdbool.h>
#include <stdint.h>

#include "comm/gdx_comm.h"

/* Sets our note about rail r, written at the next flush. A new epoch each
 * time, as the peer acts once per epoch. The counts are this end's
 * immediates per QP since its QPs last started; only the receiver's, in a
 * DOWN, mean anything to the other end. */
void gdx_note_set(struct gdx_comm *c, int r, enum gdx_note_says says, uint32_t answers,
		  const char *why);
/* Writes the notes not yet written on rail lane (-1: none up, nothing is
 * written), each signaled and never over one the NIC may still read
 * (gdx_rail_run.note_next): a note whose last write is not yet complete
 * waits for a later call. */
void gdx_note_flush(struct gdx_comm *c, int lane);
/* The peer's note about rail r when it has one not yet acted on. The peer
 * may be rewriting it while it is read: the stamp is read before and after. */
bool gdx_note_read(const struct gdx_comm *c, int r, struct gdx_note *out);

#endif
