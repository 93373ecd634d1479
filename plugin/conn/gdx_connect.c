/* SPDX-License-Identifier: MIT */
/*
 * The connector (gdx_connect.h), and the connects under way (gdx_connects),
 * one of the three registries of what NCCL can hand back to us (the live
 * comms are gdx_registry.c's, the contexts gdx_net.c's): NCCL calls connect()
 * again until it returns a comm, with the same handle buffer and nothing else
 * that names the attempt, so the attempt is found again by that buffer's
 * address and the handle in it (its listener's address and nonce): a buffer
 * NCCL reuses for another handle starts a connect of its own. One that NCCL
 * stops calling is freed once it has not been called for the handshake
 * timeout (the handle's bytes are the peer's and checked, never trusted).
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "conn/gdx_connect.h"
#include "conn/gdx_handshake.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "data/gdx_p2p.h"
#include "sys/gdx_param.h"
#include "comm/gdx_registry.h"
#include "conn/gdx_setup.h"
#include "dev/gdx_subnet.h"

enum gdx_connect_state {
	GDX_CONN_TCP,	     /* connect() in progress */
	GDX_CONN_SEND,	     /* sending hello + meta */
	GDX_CONN_RECV_HELLO, /* reading the acceptor's hello */
	GDX_CONN_RECV_META,  /* reading its rails */
	GDX_CONN_SEND_READY, /* our QPs are at RTS; telling the acceptor */
};
#define GDX_CONN_NSTATES (GDX_CONN_SEND_READY + 1)

static const char *const gdx_connect_state_names[] = {
	[GDX_CONN_TCP] = "tcp",
	[GDX_CONN_SEND] = "send",
	[GDX_CONN_RECV_HELLO] = "recv-hello",
	[GDX_CONN_RECV_META] = "recv-meta",
	[GDX_CONN_SEND_READY] = "send-ready",
};
_Static_assert(sizeof(gdx_connect_state_names) / sizeof(gdx_connect_state_names[0]) ==
		       GDX_CONN_NSTATES,
	       "every connect state has a name");

/* A connect under way, found by the handle buffer and its contents (above). */
struct gdx_connect {
	struct gdx_connect *next;
	const void *key;
	struct gdx_handle handle; /* as it was in the buffer */
	uint64_t last_ms;	  /* when a call last gave it back (under the lock) */
	bool busy;		  /* a call is driving it: never swept meanwhile */
	uint32_t remote_members;  /* NICs of the listener's device */
	uint32_t remote_qps;	  /* QPs per rail the listener asks for */
	struct gdx_ctx *ctx;
	int dev;
	int tc;
	enum gdx_connect_state state;
	int fd;
	uint64_t nonce;
	struct gdx_xfer xfer;
	struct {
		struct gdx_wire_hello hello;
		struct gdx_wire_meta meta;
	} out;			     /* sent as one buffer: both parts are multiples of 8 bytes */
	struct gdx_conn_reply reply; /* the acceptor's hello and rails */
	uint32_t ready;
	struct gdx_send_comm *sc;
	struct gdx_sockaddr to; /* the listener, to connect to again */
	int tries;		/* connections the listener closed unread */
	char peer[64];
};

static int gdx_connect_set_state(struct gdx_connect *cs, enum gdx_connect_state to)
{
	if (!gdx_conn_state_step("connect to", gdx_connect_state_names, GDX_CONN_NSTATES,
				 (int)cs->state, (int)to, cs->peer))
		return -ENOTRECOVERABLE;
	cs->state = to;
	return 0;
}

/* Guards the list, and each connect's busy and last_ms. */
static pthread_mutex_t gdx_conn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gdx_connect *gdx_connects;

int gdx_connects_pending(void)
{
	struct gdx_connect *cs;
	int n = 0;

	pthread_mutex_lock(&gdx_conn_lock);
	for (cs = gdx_connects; cs; cs = cs->next)
		n++;
	pthread_mutex_unlock(&gdx_conn_lock);
	return n;
}

static void gdx_send_comm_free(struct gdx_send_comm *sc)
{
	if (!sc)
		return;
	gdx_setup_base_fini(&sc->base);
	free(sc);
}

static int gdx_send_comm_create(struct gdx_connect *cs, struct gdx_send_comm **sc_p)
{
	struct gdx_vdev *dev = gdx_vdev_get(cs->dev);
	struct gdx_send_comm *sc;
	uint8_t sl, tc;
	int ret;

	if (!dev)
		return -ENODEV;
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	ret = gdx_setup_base_init(&sc->base, GDX_KIND_SEND, cs->dev, -1, cs->peer, cs->ctx, cs->tc);
	gdx_rail_qos(sc->base.tc, &sl, &tc);
	if (!ret) {
		int nrails = gdx_setup_rails_for(dev->nmembers, cs->remote_members);

		ret = gdx_setup_rails_create(&sc->base, dev, nrails,
					     gdx_setup_qps_for(nrails, cs->remote_qps), sl, tc);
	}
	if (ret)
		goto err;
	sc->base.sock = cs->fd;
	*sc_p = sc;
	return 0;

err:
	gdx_send_comm_free(sc);
	return ret;
}

/* Frees a connect that no list holds any more. */
static void gdx_connect_destroy(struct gdx_connect *cs)
{
	if (cs->sc)
		gdx_send_comm_free(cs->sc); /* closes fd too */
	else if (cs->fd >= 0)
		close(cs->fd);
	free(cs);
}

/* Takes cs off the list of connects under way; the caller holds the lock. */
static void gdx_connect_unlink_locked(struct gdx_connect *cs)
{
	for (struct gdx_connect **pp = &gdx_connects; *pp; pp = &(*pp)->next) {
		if (*pp == cs) {
			*pp = cs->next;
			return;
		}
	}
}

/* The connect under way for this buffer, when the buffer still holds its
 * handle; the caller holds the lock. */
static struct gdx_connect *gdx_connect_lookup_locked(const void *key)
{
	struct gdx_connect *cs;

	for (cs = gdx_connects; cs; cs = cs->next)
		if (cs->key == key && !memcmp(&cs->handle, key, sizeof(cs->handle)))
			break;
	return cs;
}

/* The connect this call resumes, claimed: in use (never swept, never driven
 * by another thread) until gdx_connect_put(). -ENOENT when there is none;
 * -EBUSY when another thread is driving it at this moment. */
static int gdx_connect_claim(const void *key, struct gdx_connect **cs_p)
{
	struct gdx_connect *cs;
	int ret;

	pthread_mutex_lock(&gdx_conn_lock);
	cs = gdx_connect_lookup_locked(key);
	ret = !cs ? -ENOENT : cs->busy ? -EBUSY : 0;
	if (!ret) {
		cs->busy = true;
		cs->last_ms = gdx_conn_now();
		*cs_p = cs;
	}
	pthread_mutex_unlock(&gdx_conn_lock);
	return ret;
}

/* This call is done with cs: it is given back, stamped with the time it was
 * last driven; or, when done (connected or failed), taken off the list and
 * freed. */
static void gdx_connect_put(struct gdx_connect *cs, bool done)
{
	pthread_mutex_lock(&gdx_conn_lock);
	if (done) {
		gdx_connect_unlink_locked(cs);
	} else {
		cs->busy = false;
		cs->last_ms = gdx_conn_now();
	}
	pthread_mutex_unlock(&gdx_conn_lock);
	if (done)
		gdx_connect_destroy(cs);
}

/*
 * Frees connects NCCL has stopped calling: none for the handshake timeout.
 * The clock is read under the lock, so it is never older than a stamp it is
 * compared with (every stamp is written under the lock too), and a connect a
 * thread is driving is skipped: it is stamped when that thread gives it back.
 */
static void gdx_connect_sweep(void)
{
	for (;;) {
		struct gdx_connect *cs;
		uint64_t now;

		pthread_mutex_lock(&gdx_conn_lock);
		now = gdx_conn_now();
		for (cs = gdx_connects; cs; cs = cs->next)
			if (!cs->busy && now > cs->last_ms &&
			    now - cs->last_ms > (uint64_t)gdx_params.handshake_timeout_ms)
				break;
		if (cs)
			gdx_connect_unlink_locked(cs); /* ours alone to free now */
		pthread_mutex_unlock(&gdx_conn_lock);
		if (!cs)
			return;
		GDX_INFO(NCCL_NET,
			 "connect to %s abandoned: not called again for %d ms; its socket and "
			 "QPs are freed",
			 cs->peer, gdx_params.handshake_timeout_ms);
		gdx_connect_destroy(cs);
	}
}

static int gdx_connect_start(struct gdx_ctx *ctx, int dev, int tc, const void *handle,
			     struct gdx_connect **cs_p)
{
	const struct gdx_handle *h = handle;
	struct gdx_sockaddr to;
	struct gdx_connect *cs;
	char why[256];
	int ret;

	ret = gdx_handle_check(h, why, sizeof(why));
	if (ret) {
		GDX_WARN("connect on device %d refused: %s", dev, why);
		return ret;
	}
	dev = gdx_subnet_pick(dev, h);
	memset(&to, 0, sizeof(to));
	if (le16toh(h->family) == AF_INET) {
		to.u.in.sin_family = AF_INET;
		to.u.in.sin_port = h->port;
		memcpy(&to.u.in.sin_addr, h->addr, 4);
		to.len = sizeof(to.u.in);
	} else {
		to.u.in6.sin6_family = AF_INET6;
		to.u.in6.sin6_port = h->port;
		memcpy(&to.u.in6.sin6_addr, h->addr, 16);
		to.u.in6.sin6_scope_id = le32toh(h->scope_id);
		to.len = sizeof(to.u.in6);
	}
	cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	cs->key = handle;
	memcpy(&cs->handle, handle, sizeof(cs->handle));
	cs->remote_members = le16toh(h->nrails);
	cs->remote_qps = le16toh(h->qps);
	cs->ctx = ctx;
	cs->dev = dev;
	cs->tc = tc;
	cs->fd = -1;
	cs->nonce = le64toh(h->nonce);
	cs->to = to;
	gdx_sock_addr_str(&to, cs->peer, sizeof(cs->peer));
	ret = gdx_sock_connect_start(&to, &cs->fd);
	if (ret) {
		char hint[128];

		GDX_WARN("connect to %s failed: %s%s", cs->peer, strerror(-ret),
			 gdx_fd_hint(ret, hint, sizeof(hint)));
		free(cs);
		return ret;
	}
	cs->state = GDX_CONN_TCP;
	cs->busy = true;
	pthread_mutex_lock(&gdx_conn_lock);
	if (gdx_connect_lookup_locked(handle)) {
		/* another thread started one for this buffer meanwhile: that
		 * one goes on, found by the next call */
		pthread_mutex_unlock(&gdx_conn_lock);
		gdx_connect_destroy(cs);
		return -EBUSY;
	}
	cs->last_ms = gdx_conn_now();
	cs->next = gdx_connects;
	gdx_connects = cs;
	pthread_mutex_unlock(&gdx_conn_lock);
	*cs_p = cs;
	return 0;
}

void gdx_conn_reply_start(struct gdx_conn_reply *r)
{
	gdx_xfer_set(&r->xfer, &r->hello, sizeof(r->hello));
}

/* A socket error while the listener's answer is awaited (-EAGAIN: none). */
static int gdx_conn_reply_io_err(const struct gdx_conn_reply *r, int ret, const char *peer)
{
	if (ret == -EAGAIN)
		return ret;
	if (ret == -ECONNRESET && r->xfer.buf == &r->hello && r->xfer.off == 0)
		GDX_WARN("connect to %s: the listener closed the connection before answering "
			 "(it refused our hello; see its log)",
			 peer);
	else
		GDX_WARN("connect to %s: out-of-band socket failed during the handshake after "
			 "%zu of %zu bytes of the listener's answer: %s",
			 peer, r->xfer.off, r->xfer.len, strerror(-ret));
	return ret;
}

int gdx_conn_reply_hello(struct gdx_conn_reply *r, int fd, uint64_t nonce, uint32_t rails,
			 const char *peer)
{
	char why[256];
	int ret = gdx_sock_recv_some(fd, &r->xfer);

	if (ret)
		return gdx_conn_reply_io_err(r, ret, peer);
	ret = gdx_wire_hello_check(&r->hello, sizeof(r->hello), nonce, why, sizeof(why));
	if (ret == -ECONNREFUSED) {
		uint32_t reason = le32toh(r->hello.refused);

		if (reason == GDX_REFUSED_BUSY || reason == GDX_REFUSED_SILENT)
			return -ECONNABORTED; /* the caller connects again, or says why */
		GDX_WARN("connect to %s refused by the listener: %s", peer,
			 gdx_wire_refusal_str(reason));
		return ret;
	}
	if (ret) {
		GDX_WARN("connect to %s refused: the listener's answer: %s", peer, why);
		return ret;
	}
	if (gdx_wire_hello_rails(&r->hello) != rails) {
		GDX_WARN("connect to %s refused: the listener's handle said %u rail(s), its hello "
			 "says %u",
			 peer, rails, gdx_wire_hello_rails(&r->hello));
		return -EPROTO;
	}
	gdx_xfer_set(&r->xfer, &r->meta, sizeof(r->meta));
	return 0;
}

int gdx_conn_reply_meta(struct gdx_conn_reply *r, int fd, const char *peer)
{
	char why[256];
	int ret = gdx_sock_recv_some(fd, &r->xfer);

	if (ret)
		return gdx_conn_reply_io_err(r, ret, peer);
	ret = gdx_wire_meta_unpack(&r->meta, sizeof(r->meta), &r->meta, why, sizeof(why));
	if (ret)
		GDX_WARN("connect to %s: bad metadata: %s", peer, why);
	return ret;
}

/* Connections the listener may close unread before the connect gives up. */
#define GDX_CONNECT_TRIES 8

/*
 * The listener closed our connection unread, too busy with connections that
 * sent no hello or ours having come after its hello deadline (gdx_wire.h):
 * nothing of it was read, so a new connection starts over, with the comm
 * already made. The connector's one move back to an earlier state.
 */
static int gdx_connect_again(struct gdx_connect *cs)
{
	const char *why = gdx_wire_refusal_str(le32toh(cs->reply.hello.refused));
	char hint[128];
	int ret;

	if (++cs->tries >= GDX_CONNECT_TRIES) {
		GDX_WARN("connect to %s failed: the listener closed %d connections unread, the "
			 "last because %s",
			 cs->peer, cs->tries, why);
		return -ECONNREFUSED;
	}
	GDX_INFO(NCCL_NET, "connect to %s: %s; connecting again", cs->peer, why);
	close(cs->fd);
	cs->fd = -1;
	cs->sc->base.sock = -1;
	ret = gdx_sock_connect_start(&cs->to, &cs->fd);
	if (ret) {
		GDX_WARN("connect to %s failed: %s%s", cs->peer, strerror(-ret),
			 gdx_fd_hint(ret, hint, sizeof(hint)));
		return ret;
	}
	cs->sc->base.sock = cs->fd;
	GDX_TRACE(NCCL_NET, "connect to %s: %s -> %s", cs->peer, gdx_connect_state_names[cs->state],
		  gdx_connect_state_names[GDX_CONN_TCP]);
	cs->state = GDX_CONN_TCP;
	return 0;
}

/* One pass of the connector's state machine: 0 when connected, -EAGAIN, or an
 * error (already logged). */
static int gdx_connect_progress(struct gdx_connect *cs)
{
	int ret;

	for (;;) {
		switch (cs->state) {
		case GDX_CONN_TCP:
			ret = gdx_sock_connect_done(cs->fd);
			if (ret == -EAGAIN)
				return ret;
			if (ret) {
				GDX_WARN("connect to %s failed: %s", cs->peer, strerror(-ret));
				return ret;
			}
			if (!cs->sc) {
				/* made once; a connection made again sends the same */
				ret = gdx_send_comm_create(cs, &cs->sc);
				if (ret)
					return ret;
				gdx_wire_hello_pack(&cs->out.hello, cs->nonce,
						    (uint32_t)cs->sc->base.nmembers);
				gdx_setup_meta_fill(&cs->reply.meta, &cs->sc->base); /* scratch */
				gdx_wire_meta_pack(&cs->out.meta, &cs->reply.meta);
			}
			gdx_xfer_set(&cs->xfer, &cs->out, sizeof(cs->out));
			ret = gdx_connect_set_state(cs, GDX_CONN_SEND);
			if (ret)
				return ret;
			break;
		case GDX_CONN_SEND:
			ret = gdx_sock_send_some(cs->fd, &cs->xfer);
			if (ret == -EAGAIN)
				return ret;
			/* a listener that closed the connection unread or refused it
			 * may have said why: its answer is read either way */
			if (ret && ret != -ECONNRESET) {
				GDX_WARN("connect to %s: out-of-band socket failed sending our "
					 "hello: %s",
					 cs->peer, strerror(-ret));
				return ret;
			}
			gdx_conn_reply_start(&cs->reply);
			ret = gdx_connect_set_state(cs, GDX_CONN_RECV_HELLO);
			if (ret)
				return ret;
			break;
		case GDX_CONN_RECV_HELLO:
			ret = gdx_conn_reply_hello(&cs->reply, cs->fd, cs->nonce,
						   cs->remote_members, cs->peer);
			if (ret == -ECONNABORTED)
				ret = gdx_connect_again(cs);
			else if (!ret)
				ret = gdx_connect_set_state(cs, GDX_CONN_RECV_META);
			if (ret)
				return ret;
			break;
		case GDX_CONN_RECV_META:
			ret = gdx_conn_reply_meta(&cs->reply, cs->fd, cs->peer);
			if (ret)
				return ret;
			ret = gdx_setup_rails_connect(&cs->sc->base, &cs->reply.meta);
			if (ret)
				return ret;
			cs->ready = htole32(GDX_WIRE_READY);
			gdx_xfer_set(&cs->xfer, &cs->ready, sizeof(cs->ready));
			ret = gdx_connect_set_state(cs, GDX_CONN_SEND_READY);
			if (ret)
				return ret;
			break;
		case GDX_CONN_SEND_READY:
			ret = gdx_sock_send_some(cs->fd, &cs->xfer);
			if (ret == -EAGAIN)
				return ret;
			if (ret)
				GDX_WARN(
					"connect to %s: out-of-band socket failed sending the ready "
					"word: %s",
					cs->peer, strerror(-ret));
			return ret;
		}
	}
}

int gdx_connect(struct gdx_ctx *ctx, int dev, int tc, void *handle, struct gdx_send_comm **comm_p)
{
	struct gdx_connect *cs;
	struct gdx_send_comm *sc;
	uint32_t members;
	char note[320];
	int ret;

	*comm_p = NULL;
	gdx_connect_sweep();
	ret = gdx_connect_claim(handle, &cs);
	if (ret == -ENOENT)
		ret = gdx_connect_start(ctx, dev, tc, handle, &cs);
	if (ret == -EBUSY)
		return 0; /* another thread drives this very connect: call again */
	if (ret)
		return ret;
	ret = gdx_connect_progress(cs);
	if (ret == -EAGAIN) {
		gdx_connect_put(cs, false);
		return 0;
	}
	if (ret) {
		gdx_connect_put(cs, true);
		return ret;
	}
	sc = cs->sc;
	cs->sc = NULL;
	cs->fd = -1;
	members = cs->remote_members;
	gdx_connect_put(cs, true);
	ret = gdx_registry_add(sc);
	if (ret) {
		gdx_send_comm_free(sc);
		return ret;
	}
	gdx_live_comm_open(&sc->base);
	sc->base.handed = true;
	GDX_INFO(NCCL_NET, "connected %s to %s (%s), %s", sc->base.dev_name, sc->base.peer,
		 GDX_LOG_QUOTED(sc->base.peer_dev),
		 gdx_rails_note(&sc->base, members, note, sizeof(note)));
	*comm_p = sc;
	return 0;
}

int gdx_close_send(struct gdx_send_comm *sc)
{
	if (gdx_registry_remove(sc))
		return -EBADF;
	gdx_send_drain(sc);
	gdx_send_comm_free(sc);
	return 0;
}

int gdx_connects_close_owned(struct gdx_ctx *ctx)
{
	struct gdx_connect *cs;
	int closed = 0;

	/* a connect that a thread is inside is left to it: NCCL finalizes a
	 * context only once its calls on it returned */
	do {
		pthread_mutex_lock(&gdx_conn_lock);
		for (cs = gdx_connects; cs && (cs->ctx != ctx || cs->busy); cs = cs->next)
			;
		if (cs)
			gdx_connect_unlink_locked(cs);
		pthread_mutex_unlock(&gdx_conn_lock);
		if (cs) {
			gdx_connect_destroy(cs);
			closed++;
		}
	} while (cs);
	return closed;
}

void gdx_connects_fini(void)
{
	struct gdx_connect *cs;

	pthread_mutex_lock(&gdx_conn_lock);
	cs = gdx_connects;
	gdx_connects = NULL;
	pthread_mutex_unlock(&gdx_conn_lock);
	while (cs) {
		struct gdx_connect *next = cs->next;

		gdx_connect_destroy(cs);
		cs = next;
	}
}
