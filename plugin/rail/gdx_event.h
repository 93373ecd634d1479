/* SPDX-License-Identifier: MIT */
/* Async verbs events, read without a thread (gdx_event.c). */
#ifndef GDX_EVENT_H
#define GDX_EVENT_H

#include <stdbool.h>

#include "rail/gdx_chan.h"

/* Drains the async events of the channel's devices without blocking (each
 * device at most every few ms, unless force: a failed completion wants its
 * cause); channels they name lose the rail they name (async_failed, which
 * the owner's poll takes out) or fail (their owner's err). A channel
 * without failover fails once its port has been down longer than its
 * retries last; a port's speed change moves its share of the stripe. */
void gdx_event_poll(struct gdx_chan *ch, bool force);
/* One device's events drained the same way (one-sided RMA's QPs are not a
 * channel's context: the port's state is what it reads from them). */
void gdx_event_poll_dev(struct gdx_dev *dev);

#endif
