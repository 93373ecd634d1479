/* SPDX-License-Identifier: MIT */
/* Async verbs events, read without a thread (gdx_event.c). */
#ifndef GDX_EVENT_H
#define GDX_EVENT_H

#include <gdx/gdx_comm.h>

/* Drains the async events of c's devices without blocking; comms they name
 * get their error. Called only while c waits. */
void gdx_event_poll(struct gdx_comm *c);

#endif
