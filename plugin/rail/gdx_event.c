/* SPDX-License-Identifier: MIT */
/*
 * Async verbs events, read without a thread: a comm that is waiting (no
 * completion for a while) drains its devices' event queues, non-blocking, and
 * any comm an event names gets its error. Nothing runs in the background, so
 * closing a comm or unloading the library leaves nothing to stop.
 */
#include <errno.h>
#include <pthread.h>

#include "rail/gdx_chan_out.h"
#include "rail/gdx_event.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "sys/gdx_time.h"

/* rdma-core 57's event (after IBV_EVENT_WQ_FATAL), which older headers
 * lack: a port's effective speed moved without a link flap. */
#define GDX_EVENT_DEVICE_SPEED_CHANGE (IBV_EVENT_WQ_FATAL + 1)

/* How often one device's event queue is read when nobody forces it. */
#define GDX_EVENT_MS 10

/* Several comms of one device may wait on different threads. */
static pthread_mutex_t gdx_event_lock = PTHREAD_MUTEX_INITIALIZER;

/* The rail of ch an event names (its QP or CQ), -1 if none (a receive
 * comm's flush QP). */
static int gdx_event_rail(const struct gdx_chan *ch, const struct ibv_async_event *ev, bool qp)
{
	for (int r = 0; r < ch->nrails; r++) {
		if (!qp && ch->rails[r].cq == ev->element.cq)
			return r;
		for (int q = 0; qp && q < ch->rails[r].nqps; q++)
			if (ch->rails[r].qps[q].qp == ev->element.qp)
				return r;
	}
	return -1;
}

/* An event that put a QP or CQ whose context is ctx in error. */
static void gdx_event_fail(void *ctx, const struct ibv_async_event *ev, bool qp)
{
	struct gdx_chan *ch = ctx;
	int rail;

	if (!ch || ch->tag != GDX_CHAN_TAG)
		return; /* not a channel's: one-sided RMA reads its ports' state */
	rail = gdx_event_rail(ch, ev, qp);
	if (ch->failover && rail >= 0) {
		/* the owner's poll takes the rail out (gdx_failover.c) */
		GDX_INFO(NCCL_NET, "%s: async event %s on rail %d of the comm with peer %s",
			 ch->name, ibv_event_type_str(ev->event_type), rail, ch->peer);
		__atomic_or_fetch(&ch->async_failed, 1u << rail, __ATOMIC_RELAXED);
		return;
	}
	if (!__atomic_load_n(ch->err, __ATOMIC_RELAXED))
		GDX_WARN("%s: async event %s on the comm with peer %s (%s): the QP is in error",
			 ch->name, ibv_event_type_str(ev->event_type), ch->peer,
			 GDX_LOG_QUOTED(ch->peer_dev));
	__atomic_store_n(ch->err, -EREMOTEIO, __ATOMIC_RELAXED);
}

static void gdx_event_handle(struct gdx_dev *dev, const struct ibv_async_event *ev)
{
	switch ((int)ev->event_type) { /* int: rdma-core 57's event is not in older enums */
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR: gdx_event_fail(ev->element.qp->qp_context, ev, true); break;
	case IBV_EVENT_CQ_ERR: gdx_event_fail(ev->element.cq->cq_context, ev, false); break;
	case IBV_EVENT_DEVICE_FATAL:
		GDX_WARN("%s: device fatal error: every comm on it fails", dev->ibdev);
		__atomic_store_n(&dev->ib->fatal, 1, __ATOMIC_RELAXED);
		break;
	case IBV_EVENT_PORT_ERR:
		GDX_WARN("%s port %d is down (link lost?): connections with another rail move "
			 "their traffic there; the others fail if it stays down longer than "
			 "their retries last",
			 dev->ibdev, ev->element.port_num);
		__atomic_store_n(&dev->port_down_ms, gdx_now_ms(), __ATOMIC_RELAXED);
		break;
	case IBV_EVENT_PORT_ACTIVE:
		GDX_INFO(NCCL_NET, "%s port %d is active again", dev->ibdev, ev->element.port_num);
		__atomic_store_n(&dev->port_down_ms, 0, __ATOMIC_RELAXED);
		break;
	case GDX_EVENT_DEVICE_SPEED_CHANGE: gdx_dev_speed_changed(dev, ev->element.port_num); break;
	default:
		GDX_INFO(NCCL_NET, "%s: async event %s", dev->ibdev,
			 ibv_event_type_str(ev->event_type));
	}
}

/* A comm that waits with nothing of its own on the wire (a sender waiting for
 * a clear-to-send) gets no completion error when its port goes down; fail it
 * once the port has been down longer than its retries would have lasted. */
static void gdx_event_check_port(struct gdx_chan *ch, struct gdx_dev *dev)
{
	uint64_t down = __atomic_load_n(&dev->port_down_ms, __ATOMIC_RELAXED);

	if (!down || __atomic_load_n(ch->err, __ATOMIC_RELAXED) ||
	    gdx_now_ms() - down <= gdx_chan_retry_budget_ms())
		return;
	GDX_WARN("%s: %s port %d has been down for %llu ms, longer than the QP retries "
		 "last (%llu ms): failing the comm with peer %s",
		 ch->name, dev->ibdev, dev->ib_port, (unsigned long long)(gdx_now_ms() - down),
		 (unsigned long long)gdx_chan_retry_budget_ms(), ch->peer);
	__atomic_store_n(ch->err, -ENETDOWN, __ATOMIC_RELAXED);
}

/* The device's events, at most every GDX_EVENT_MS unless force; under
 * gdx_event_lock. */
static void gdx_event_drain(struct gdx_dev *dev, bool force, uint64_t now)
{
	struct ibv_async_event ev;

	/* one read per device every GDX_EVENT_MS, however many comms ask */
	if (!force && now - dev->ib->events_ms < GDX_EVENT_MS)
		return;
	dev->ib->events_ms = now;
	while (ibv_get_async_event(dev->ib->ctx, &ev) == 0) {
		gdx_event_handle(dev, &ev);
		/* Last: destroying an object waits for its events' acks. */
		ibv_ack_async_event(&ev);
	}
}

/* A rail whose port's speed moved: its share of the stripe follows at once,
 * scaled as the speed was (measured windows correct it from there). */
static void gdx_event_speed(struct gdx_chan *ch, int r)
{
	int now = __atomic_load_n(&ch->rails[r].dev->speed_mbps, __ATOMIC_RELAXED);
	int was = ch->run[r].speed_mbps;

	if (now > 0 && was > 0 && now != was)
		ch->run[r].rate *= (double)now / was;
	if (now > 0)
		ch->run[r].speed_mbps = now;
}

void gdx_event_poll_dev(struct gdx_dev *dev)
{
	pthread_mutex_lock(&gdx_event_lock);
	gdx_event_drain(dev, false, gdx_now_ms());
	pthread_mutex_unlock(&gdx_event_lock);
}

void gdx_event_poll(struct gdx_chan *ch, bool force)
{
	uint64_t now = gdx_now_ms();

	pthread_mutex_lock(&gdx_event_lock);
	for (int r = 0; r < ch->nrails; r++) {
		struct gdx_dev *dev = ch->rails[r].dev;

		gdx_event_drain(dev, force, now);
		if (__atomic_load_n(&dev->ib->fatal, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(ch->err, __ATOMIC_RELAXED)) {
			GDX_WARN("%s: device %s had a fatal error", ch->name, dev->ibdev);
			__atomic_store_n(ch->err, -EIO, __ATOMIC_RELAXED);
		}
		if (!ch->failover)
			gdx_event_check_port(ch, dev);
		gdx_event_speed(ch, r);
	}
	pthread_mutex_unlock(&gdx_event_lock);
}
