/* SPDX-License-Identifier: MIT */
/* Async verbs events, read without a thread (gdx_event.c). */
#ifndef GDX_EVENT_H
#define GDX_EVENT_H

#include <stdbool.h>

#include "comm/gdx_comm.h"

/* Drains the async events of c's devices without blocking (each device at
 * most every few ms, unless force: a failed completion wants its cause);
 * comms they name get their error, or lose the rail they name. */
void gdx_event_poll(struct gdx_comm *c, bool force);
/* One device's events drained the same way (one-sided RMA's QPs are not a
 * comm's: the port's state is what it reads from them). */
void gdx_event_poll_dev(struct gdx_dev *dev);

#endif
