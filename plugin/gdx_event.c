/* SPDX-License-Identifier: MIT */
/*
 * Async verbs events, read without a thread: a comm that is waiting (no
 * completion for a while) drains its devices' event queues, non-blocking, and
 * any comm an event names gets its error. Nothing runs in the background, so
 * closing a comm or unloading the library leaves nothing to stop.
 */
#include <errno.h>
#include <pthread.h>

#include <gdx/gdx_comm.h>
#include <gdx/gdx_log.h>

/* Several comms of one device may wait on different threads. */
static pthread_mutex_t gdx_event_lock = PTHREAD_MUTEX_INITIALIZER;

static void gdx_event_fail(struct gdx_comm *c, const struct ibv_async_event *ev)
{
	if (!c)
		return;
	if (!__atomic_load_n(&c->err, __ATOMIC_RELAXED))
		GDX_WARN("%s: async event %s on the comm with peer %s (%s): the QP is in error",
			 gdx_vdev_get(c->dev_index)->name, ibv_event_type_str(ev->event_type),
			 c->peer, c->peer_dev);
	__atomic_store_n(&c->err, -EREMOTEIO, __ATOMIC_RELAXED);
}

static void gdx_event_handle(struct gdx_dev *dev, const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR: gdx_event_fail(ev->element.qp->qp_context, ev); break;
	case IBV_EVENT_CQ_ERR: gdx_event_fail(ev->element.cq->cq_context, ev); break;
	case IBV_EVENT_DEVICE_FATAL:
		GDX_WARN("%s: device fatal error: every comm on it fails", dev->ibdev);
		__atomic_store_n(&dev->ib->fatal, 1, __ATOMIC_RELAXED);
		break;
	case IBV_EVENT_PORT_ERR:
		/* Comms on it fail by themselves when the retries run out. */
		GDX_WARN("%s port %d is down (link lost?): its comms will fail once retries run "
			 "out",
			 dev->ibdev, ev->element.port_num);
		break;
	case IBV_EVENT_PORT_ACTIVE:
		GDX_INFO(NCCL_NET, "%s port %d is active again", dev->ibdev, ev->element.port_num);
		break;
	default:
		GDX_INFO(NCCL_NET, "%s: async event %s", dev->ibdev,
			 ibv_event_type_str(ev->event_type));
	}
}

void gdx_event_poll(struct gdx_comm *c)
{
	pthread_mutex_lock(&gdx_event_lock);
	for (int r = 0; r < c->nrails; r++) {
		struct gdx_dev *dev = c->rails[r].dev;
		struct ibv_async_event ev;

		while (ibv_get_async_event(dev->ib->ctx, &ev) == 0) {
			gdx_event_handle(dev, &ev);
			/* Last: destroying an object waits for its events' acks. */
			ibv_ack_async_event(&ev);
		}
		if (__atomic_load_n(&dev->ib->fatal, __ATOMIC_RELAXED) && !c->err) {
			GDX_WARN("%s: device %s had a fatal error",
				 gdx_vdev_get(c->dev_index)->name, dev->ibdev);
			c->err = -EIO;
		}
	}
	pthread_mutex_unlock(&gdx_event_lock);
}
