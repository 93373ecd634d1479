/* SPDX-License-Identifier: MIT */
/* Async verbs events, read without a thread (gdx_event.c). */
#ifndef GDX_EVENT_H
#define GDX_EVENT_H

#include <stdbool.h>

#include <gdx/gdx_comm.h>

/* Drains the async events of c's devices without blocking (each device at
 * most every few ms, unless force: a failed completion wants its cause);
 * comms they name get their error, or lose the rail they name. */
void gdx_event_poll(struct gdx_comm *c, bool force);

#endif
