/* SPDX-License-Identifier: MIT */
/*
 * listen / connect / accept as resumable state machines over a non-blocking
 * out-of-band TCP socket. Nothing here ever waits: a step that cannot finish
 * returns -EAGAIN and the next call resumes from the saved offset, so NCCL can
 * drive connect and accept of one pair from a single thread.
 *
 * Connector                          Acceptor
 *   hello + meta (rails, FIFO)  -->    validate; QPs to RTS; post receives
 *                               <--    hello + meta (rails)
 *   QPs to RTS; ready           -->    comm returned
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <gdx/gdx_comm.h>
#include <gdx/gdx_conn.h>
#include <gdx/gdx_env.h>
#include <gdx/gdx_flush.h>
#include <gdx/gdx_handshake.h>
#include <gdx/gdx_live.h>
#include <gdx/gdx_log.h>
#include <gdx/gdx_p2p.h>
#include <gdx/gdx_param.h>
#include <gdx/gdx_registry.h>
#include <gdx/gdx_setup.h>
#include <gdx/gdx_time.h>

/*
 * Three registries, each for what NCCL can hand back to us:
 * - connects under way (gdx_connects): NCCL calls connect() again until it
 *   returns a comm, with the same handle buffer and nothing else that names
 *   the attempt, so the attempt is found again by that buffer's address and
 *   the handle in it (its listener's address and nonce): a buffer NCCL
 *   reuses for another handle starts a connect of its own. One that NCCL
 *   stops calling is freed once it has not been called for the handshake
 *   timeout (the handle's bytes are the peer's and checked, never trusted);
 * - live comms (gdx_registry.c);
 * - contexts (gdx_net.c): the v11+ per-communicator contexts, checked on
 *   every call that passes one.
 */

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

enum gdx_accept_state {
	GDX_ACC_RECV_HELLO, /* reading the connector's hello */
	GDX_ACC_RECV_META,  /* reading its rails and FIFO */
	GDX_ACC_SEND,	    /* our QPs are at RTS; sending our hello and rails */
	GDX_ACC_RECV_READY, /* waiting for the connector's QPs to reach RTS */
	GDX_ACC_DONE,
};
#define GDX_ACC_NSTATES (GDX_ACC_DONE + 1)

static const char *const gdx_accept_state_names[] = {
	[GDX_ACC_RECV_HELLO] = "recv-hello",
	[GDX_ACC_RECV_META] = "recv-meta",
	[GDX_ACC_SEND] = "send",
	[GDX_ACC_RECV_READY] = "recv-ready",
	[GDX_ACC_DONE] = "done",
};
_Static_assert(sizeof(gdx_accept_state_names) / sizeof(gdx_accept_state_names[0]) ==
		       GDX_ACC_NSTATES,
	       "every accept state has a name");

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

struct gdx_accept {
	enum gdx_accept_state state;
	int fd;
	uint64_t seq;		    /* its place in the order connections were taken */
	uint64_t hello_deadline_ms; /* its whole hello by then, or it is closed unread */
	uint64_t deadline_ms;	    /* the whole handshake by then */
	struct gdx_sockaddr from;
	struct gdx_xfer xfer;
	struct gdx_wire_hello hello;
	struct gdx_wire_meta meta; /* in: the connector's; then out: ours */
	struct {
		struct gdx_wire_hello hello;
		struct gdx_wire_meta meta;
	} out; /* sent as one buffer: both parts are multiples of 8 bytes */
	uint32_t ready;
	struct gdx_recv_comm *rc;
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

static int gdx_accept_set_state(struct gdx_accept *a, enum gdx_accept_state to)
{
	if (!gdx_conn_state_step("accept from", gdx_accept_state_names, GDX_ACC_NSTATES,
				 (int)a->state, (int)to, a->peer))
		return -ENOTRECOVERABLE;
	a->state = to;
	return 0;
}

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

static int gdx_oob_addr(struct gdx_sockaddr *addr, char *ifname)
{
	const char *spec = gdx_params.socket_ifname; /* or NCCL_SOCKET_IFNAME, its twin */
	int ret;

	ret = gdx_sock_find_if(spec, gdx_env(GDX_ENV_SOCKET_FAMILY), addr, ifname);
	if (ret == -ENODEV)
		GDX_WARN("no usable out-of-band IP interface%s%s%s; set NCCL_GDX_SOCKET_IFNAME",
			 spec && *spec ? " matches \""
				       : " (up, with an address that is not "
					 "link-local)",
			 spec && *spec ? spec : "", spec && *spec ? "\"" : "");
	return ret;
}

int gdx_oob_check(char *desc, size_t len)
{
	struct gdx_sockaddr addr;
	char ifname[GDX_IFNAME_MAX], buf[80], *port;
	int ret = gdx_oob_addr(&addr, ifname);

	if (!ret) {
		gdx_sock_addr_str(&addr, buf, sizeof(buf));
		GDX_INFO(NCCL_NET, "out-of-band interface %s, address %s", ifname, buf);
		port = strrchr(buf, ':'); /* no port yet: listen binds one */
		if (port)
			*port = '\0';
		snprintf(desc, len, "%s %s", ifname, buf);
	}
	return ret;
}

int gdx_listen(struct gdx_ctx *ctx, int dev, void *handle, struct gdx_listen_comm **comm_p)
{
	struct gdx_sockaddr addr, bound;
	char ifname[GDX_IFNAME_MAX];
	struct gdx_listen_comm *lc;
	const void *ip;
	int ret;

	ret = gdx_oob_addr(&addr, ifname);
	if (ret)
		return ret;
	lc = calloc(1, sizeof(*lc));
	if (!lc)
		return -ENOMEM;
	lc->kind = GDX_KIND_LISTEN;
	lc->dev_index = dev;
	lc->ctx = ctx;
	ret = gdx_sock_listen(&addr, &lc->fd, &bound);
	if (ret) {
		char hint[128];

		GDX_WARN("listen on %s failed: %s%s", ifname, strerror(-ret),
			 gdx_fd_hint(ret, hint, sizeof(hint)));
		goto err_free;
	}
	if (getrandom(&lc->nonce, sizeof(lc->nonce), 0) != sizeof(lc->nonce))
		lc->nonce = ((uint64_t)random() << 32) ^ (uint64_t)random() ^ gdx_now_ms();
	ip = bound.u.sa.sa_family == AF_INET ? (const void *)&bound.u.in.sin_addr
					     : (const void *)&bound.u.in6.sin6_addr;
	gdx_handle_pack(handle, bound.u.sa.sa_family, ip,
			bound.u.sa.sa_family == AF_INET ? bound.u.in.sin_port
							: bound.u.in6.sin6_port,
			bound.u.sa.sa_family == AF_INET6 ? bound.u.in6.sin6_scope_id : 0, lc->nonce,
			gdx_vdev_get(dev) ? (uint32_t)gdx_vdev_get(dev)->nmembers : 1,
			(uint32_t)gdx_params.qps_per_connection);
	ret = gdx_comm_register(lc);
	if (ret)
		goto err_close;
	*comm_p = lc;
	return 0;

err_close:
	close(lc->fd);
err_free:
	free(lc);
	return ret;
}

static void gdx_send_comm_free(struct gdx_send_comm *sc)
{
	if (!sc)
		return;
	gdx_comm_base_fini(&sc->base);
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
	ret = gdx_comm_base_init(&sc->base, GDX_KIND_SEND, cs->dev, -1, cs->peer, cs->ctx, cs->tc);
	gdx_rail_qos(sc->base.tc, &sl, &tc);
	if (!ret) {
		int nrails = gdx_comm_rails_for(dev->nmembers, cs->remote_members);

		ret = gdx_comm_rails_create(&sc->base, dev, nrails,
					    gdx_comm_qps_for(nrails, cs->remote_qps), sl, tc);
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
				gdx_comm_meta_fill(&cs->reply.meta, &cs->sc->base); /* scratch */
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
			ret = gdx_comm_rails_connect(&cs->sc->base, &cs->reply.meta);
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
	ret = gdx_comm_register(sc);
	if (ret) {
		gdx_send_comm_free(sc);
		return ret;
	}
	gdx_live_comm_open(&sc->base);
	sc->base.handed = true;
	GDX_INFO(NCCL_NET, "connected %s to %s (%s), %s", sc->base.dev_name, sc->base.peer,
		 sc->base.peer_dev, gdx_rails_note(&sc->base, members, note, sizeof(note)));
	*comm_p = sc;
	return 0;
}

static void gdx_recv_comm_free(struct gdx_recv_comm *rc)
{
	if (!rc)
		return;
	gdx_flush_destroy(rc);
	gdx_comm_base_fini(&rc->base);
	free(rc);
}

static int gdx_recv_comm_create(struct gdx_listen_comm *lc, struct gdx_accept *a)
{
	struct gdx_vdev *dev = gdx_vdev_get(lc->dev_index);
	struct gdx_recv_comm *rc;
	int ret;

	if (!dev)
		return -ENODEV;
	rc = calloc(1, sizeof(*rc));
	if (!rc)
		return -ENOMEM;
	ret = gdx_comm_base_init(&rc->base, GDX_KIND_RECV, lc->dev_index, -1, a->peer, lc->ctx, -1);
	/* the sender's service level and class for both ends, as net_ib; the
	 * clear-to-sends' own class when NCCL_GDX_FIFO_TC says so */
	/* the connector's rail and QP counts: the larger of both ends' */
	if (!ret && (a->meta.nrails != (uint32_t)gdx_comm_rails_for(
					       dev->nmembers, gdx_wire_hello_rails(&a->hello)) ||
		     (int)a->meta.qps_per_rail < gdx_comm_qps_for((int)a->meta.nrails, 1))) {
		GDX_WARN("refused connection from %s: it made %u rail(s) of %u QP(s), where %d "
			 "NIC(s) here and its %u ask for %d of at least %d",
			 a->peer, a->meta.nrails, a->meta.qps_per_rail, dev->nmembers,
			 gdx_wire_hello_rails(&a->hello),
			 gdx_comm_rails_for(dev->nmembers, gdx_wire_hello_rails(&a->hello)),
			 gdx_comm_qps_for((int)a->meta.nrails, 1));
		ret = -EPROTO;
	}
	if (!ret)
		ret = gdx_comm_rails_create(
			&rc->base, dev, (int)a->meta.nrails, (int)a->meta.qps_per_rail, a->meta.sl,
			gdx_params.fifo_tc >= 0 ? (uint8_t)gdx_params.fifo_tc : a->meta.tc);
	if (ret)
		goto err;
	ret = gdx_comm_rails_connect(&rc->base, &a->meta);
	if (!ret)
		ret = gdx_recv_comm_start(rc);
	if (ret)
		goto err;
	a->rc = rc;
	return 0;

err:
	gdx_recv_comm_free(rc);
	return ret;
}

static void gdx_accept_free(struct gdx_accept *a)
{
	if (a->rc)
		gdx_recv_comm_free(a->rc); /* owns fd once it exists */
	else if (a->fd >= 0)
		close(a->fd);
	free(a);
}

/* The hello deadline: NCCL_GDX_HELLO_TIMEOUT_MS, within the handshake's. */
static int gdx_accept_hello_ms(void)
{
	return gdx_params.hello_timeout_ms < gdx_params.handshake_timeout_ms
		       ? gdx_params.hello_timeout_ms
		       : gdx_params.handshake_timeout_ms;
}

/* Tells a peer why it is refused (gdx_wire.h): the socket is closed next, so
 * this is all it gets, and it never holds the nonce. */
static void gdx_conn_refuse(int fd, uint32_t why)
{
	struct gdx_wire_hello no;
	struct gdx_xfer x = {&no, sizeof(no), 0};

	gdx_wire_refusal_pack(&no, why);
	gdx_sock_send_some(fd, &x);
}

/* The log line for a handshake's socket failing (-EAGAIN: none). */
static int gdx_accept_io_err(const struct gdx_accept *a, int ret)
{
	if (ret == -EAGAIN)
		return ret;
	if (ret == -ECONNRESET && a->state == GDX_ACC_RECV_HELLO && a->xfer.off == 0)
		GDX_INFO(NCCL_NET, "connection from %s closed before any byte (a port probe?)",
			 a->peer);
	else if (ret == -ECONNRESET)
		GDX_WARN("connection from %s closed during the handshake after %zu of %zu bytes",
			 a->peer, a->xfer.off, a->xfer.len);
	else
		GDX_WARN("connection from %s failed during the handshake: %s", a->peer,
			 strerror(-ret));
	return ret;
}

/* Reads what has come of the connector's hello: 0 once it is whole and
 * carries the nonce (the connection is then proven, in recv-meta), -EAGAIN,
 * or an error after the refusal and one log line. Nothing else is read
 * before the hello is checked, and nothing is answered but a refusal. */
static int gdx_accept_recv_hello(struct gdx_listen_comm *lc, struct gdx_accept *a)
{
	char why[256];
	int ret = gdx_sock_recv_some(a->fd, &a->xfer);

	if (ret)
		return gdx_accept_io_err(a, ret);
	ret = gdx_wire_hello_check(&a->hello, sizeof(a->hello), lc->nonce, why, sizeof(why));
	if (ret) {
		/* It has not shown the nonce: it learns why, and our version so
		 * that it can name both, nothing more. */
		gdx_conn_refuse(a->fd, ret == -EPROTONOSUPPORT ? GDX_REFUSED_VERSION
				       : ret == -EACCES	       ? GDX_REFUSED_NONCE
							       : GDX_REFUSED_HELLO);
		GDX_WARN("refused connection from %s: %s", a->peer, why);
		return ret;
	}
	gdx_xfer_set(&a->xfer, &a->meta, sizeof(a->meta));
	return gdx_accept_set_state(a, GDX_ACC_RECV_META);
}

/* One pass of one incoming handshake: 0 when done, -EAGAIN, or an error. */
static int gdx_accept_progress(struct gdx_listen_comm *lc, struct gdx_accept *a)
{
	char why[256];
	struct gdx_vdev *v = gdx_vdev_get(lc->dev_index);
	int nrails = v ? v->nmembers : 1;
	int ret;

	for (;;) {
		switch (a->state) {
		case GDX_ACC_RECV_HELLO:
			ret = gdx_accept_recv_hello(lc, a);
			if (ret)
				return ret;
			break;
		case GDX_ACC_RECV_META:
			ret = gdx_sock_recv_some(a->fd, &a->xfer);
			if (ret)
				goto io_err;
			ret = gdx_wire_meta_unpack(&a->meta, sizeof(a->meta), &a->meta, why,
						   sizeof(why));
			if (ret) {
				gdx_conn_refuse(a->fd, GDX_REFUSED_META);
				GDX_WARN("refused connection from %s: %s", a->peer, why);
				return ret;
			}
			ret = gdx_recv_comm_create(lc, a);
			if (ret) {
				gdx_conn_refuse(a->fd, ret == -EPROTO ? GDX_REFUSED_RAILS
								      : GDX_REFUSED_LOCAL);
				return ret;
			}
			a->rc->base.sock = a->fd;
			gdx_wire_hello_pack(&a->out.hello, lc->nonce, (uint32_t)nrails);
			gdx_comm_meta_fill(&a->meta, &a->rc->base);
			gdx_wire_meta_pack(&a->out.meta, &a->meta);
			gdx_xfer_set(&a->xfer, &a->out, sizeof(a->out));
			ret = gdx_accept_set_state(a, GDX_ACC_SEND);
			if (ret)
				return ret;
			break;
		case GDX_ACC_SEND:
			ret = gdx_sock_send_some(a->fd, &a->xfer);
			if (ret)
				goto io_err;
			gdx_xfer_set(&a->xfer, &a->ready, sizeof(a->ready));
			ret = gdx_accept_set_state(a, GDX_ACC_RECV_READY);
			if (ret)
				return ret;
			break;
		case GDX_ACC_RECV_READY:
			ret = gdx_sock_recv_some(a->fd, &a->xfer);
			if (ret)
				goto io_err;
			if (le32toh(a->ready) != GDX_WIRE_READY) {
				GDX_WARN("refused connection from %s: bad ready word 0x%08x",
					 a->peer, le32toh(a->ready));
				return -EPROTO;
			}
			return gdx_accept_set_state(a, GDX_ACC_DONE);
		case GDX_ACC_DONE: return 0;
		}
	}

io_err:
	return gdx_accept_io_err(a, ret);
}

/*
 * Silent clients. A connection counts as proven once its hello has shown the
 * handle's nonce; before that it is anybody's, and what such connections can
 * hold is bounded: GDX_MAX_UNPROVEN_PER_ADDR from one address, and
 * GDX_MAX_PENDING_ACCEPTS handshakes in all. Over either bound the oldest
 * unproven one (from that address, or any) is closed unread; so is one that
 * has not sent its whole hello by the hello deadline. Each gets a refusal
 * that says why, and the connector of a real peer closed so connects again.
 * The closing is told in one line at most a second.
 */
#define GDX_SHED_TELL_MS 1000

static bool gdx_accept_proven(const struct gdx_accept *a)
{
	return a->state != GDX_ACC_RECV_HELLO;
}

static bool gdx_addr_same(const struct gdx_sockaddr *x, const struct gdx_sockaddr *y)
{
	if (x->u.sa.sa_family != y->u.sa.sa_family)
		return false;
	if (x->u.sa.sa_family == AF_INET)
		return x->u.in.sin_addr.s_addr == y->u.in.sin_addr.s_addr;
	if (x->u.sa.sa_family == AF_INET6)
		return !memcmp(&x->u.in6.sin6_addr, &y->u.in6.sin6_addr, 16);
	return true; /* unknown peers count as one */
}

/* Unproven handshakes held, from that address or (NULL) in all. */
static int gdx_listen_unproven(const struct gdx_listen_comm *lc, const struct gdx_sockaddr *from)
{
	int n = 0;

	for (int i = 0; i < lc->npending; i++)
		n += !gdx_accept_proven(lc->pending[i]) &&
		     (!from || gdx_addr_same(&lc->pending[i]->from, from));
	return n;
}

/* Forgets pending handshake i (the last takes its place) and frees it. */
static void gdx_listen_drop(struct gdx_listen_comm *lc, int i)
{
	struct gdx_accept *a = lc->pending[i];

	lc->pending[i] = lc->pending[--lc->npending];
	gdx_accept_free(a);
}

/* Closes unproven handshake i unread, telling it why, and counts it for the
 * next line. */
static void gdx_listen_shed(struct gdx_listen_comm *lc, int i, uint32_t why)
{
	struct gdx_accept *a = lc->pending[i];

	gdx_conn_refuse(a->fd, why);
	if (why == GDX_REFUSED_SILENT)
		lc->shed_silent++;
	else
		lc->shed_busy++;
	snprintf(lc->shed_last, sizeof(lc->shed_last), "%s", a->peer);
	gdx_listen_drop(lc, i);
}

/* Makes room: closes the oldest unproven handshake (from that address, or
 * any). One whose hello has come meanwhile is read first, and kept when it
 * carries the nonce. Returns false when no unproven one is left. */
static bool gdx_listen_shed_oldest(struct gdx_listen_comm *lc, const struct gdx_sockaddr *from)
{
	for (;;) {
		int victim = -1, ret;

		for (int i = 0; i < lc->npending; i++) {
			const struct gdx_accept *a = lc->pending[i];

			if (gdx_accept_proven(a) || (from && !gdx_addr_same(&a->from, from)))
				continue;
			if (victim < 0 || a->seq < lc->pending[victim]->seq)
				victim = i;
		}
		if (victim < 0)
			return false;
		ret = gdx_accept_recv_hello(lc, lc->pending[victim]);
		if (ret == -EAGAIN) {
			gdx_listen_shed(lc, victim, GDX_REFUSED_BUSY);
			return true;
		}
		if (ret) {
			gdx_listen_drop(lc, victim); /* refused on its own */
			return true;
		}
		/* its hello had come and carries the nonce: kept, look again */
	}
}

/* The one line about connections closed unread: at once the first time,
 * then at most a second, and what is left when the listener closes. */
static void gdx_listen_shed_tell(struct gdx_listen_comm *lc, bool closing)
{
	uint32_t n = lc->shed_silent + lc->shed_busy;
	uint64_t now;

	if (!n)
		return;
	now = gdx_conn_now();
	if (!closing && lc->shed_told && now < lc->shed_told_ms + GDX_SHED_TELL_MS)
		return;
	GDX_WARN("closed %u incoming connection(s) that sent no hello: %u past the %d ms hello "
		 "deadline, %u over the bound of %d unproven per address and %d handshakes in "
		 "all (the last from %s)%s",
		 n, lc->shed_silent, gdx_accept_hello_ms(), lc->shed_busy,
		 GDX_MAX_UNPROVEN_PER_ADDR, GDX_MAX_PENDING_ACCEPTS, lc->shed_last,
		 closing ? ", before the listener closed" : "");
	lc->shed_silent = 0;
	lc->shed_busy = 0;
	lc->shed_told = true;
	lc->shed_told_ms = now;
}

/* Connections taken from the backlog in one accept call, at most: a client
 * that connects faster than they are taken cannot keep the call going. */
#define GDX_TAKE_MAX (2 * GDX_MAX_PENDING_ACCEPTS)

/* Takes connections from the backlog, making room over the bounds above.
 * Returns true when some may still wait there (every handshake held is
 * proven, or this call took its share), false when the backlog is empty. */
static bool gdx_listen_take(struct gdx_listen_comm *lc, int *budget)
{
	while (*budget > 0) {
		struct gdx_accept *a;
		char hint[128];
		uint64_t now;
		int fd, ret;

		if (lc->npending == GDX_MAX_PENDING_ACCEPTS && !gdx_listen_unproven(lc, NULL))
			return true; /* all have shown the nonce: the rest wait */
		ret = gdx_sock_accept(lc->fd, &fd);
		if (ret) {
			/* a peer waits in the backlog: say why it is not taken, once */
			if (ret != -EAGAIN && !lc->accept_warned)
				GDX_WARN("accept on device %d failed: %s%s", lc->dev_index,
					 strerror(-ret), gdx_fd_hint(ret, hint, sizeof(hint)));
			lc->accept_warned |= ret != -EAGAIN;
			return false;
		}
		(*budget)--;
		a = calloc(1, sizeof(*a));
		if (!a) {
			close(fd);
			return false;
		}
		a->fd = fd;
		a->state = GDX_ACC_RECV_HELLO;
		a->seq = lc->taken++;
		now = gdx_conn_now();
		a->hello_deadline_ms = now + (uint64_t)gdx_accept_hello_ms();
		a->deadline_ms = now + (uint64_t)gdx_params.handshake_timeout_ms;
		a->from.len = sizeof(a->from.u);
		if (getpeername(fd, &a->from.u.sa, &a->from.len))
			a->from.u.sa.sa_family = AF_UNSPEC;
		gdx_sock_addr_str(&a->from, a->peer, sizeof(a->peer));
		gdx_xfer_set(&a->xfer, &a->hello, sizeof(a->hello));
		if (lc->npending == GDX_MAX_PENDING_ACCEPTS && !gdx_listen_shed_oldest(lc, NULL)) {
			/* those held proved themselves meanwhile: this one goes */
			lc->pending[lc->npending++] = a;
			gdx_listen_shed(lc, lc->npending - 1, GDX_REFUSED_BUSY);
			continue;
		}
		lc->pending[lc->npending++] = a;
		if (gdx_listen_unproven(lc, &a->from) > GDX_MAX_UNPROVEN_PER_ADDR)
			gdx_listen_shed_oldest(lc, &a->from);
	}
	return true;
}

/* Progresses every pending handshake once, dropping failed ones; hands back
 * the first that completes. */
static int gdx_accept_pending(struct gdx_listen_comm *lc, struct gdx_recv_comm **comm_p)
{
	uint64_t now = gdx_conn_now();
	char note[320];

	for (int i = 0; i < lc->npending; i++) {
		struct gdx_accept *a = lc->pending[i];
		int ret = gdx_accept_progress(lc, a);

		if (ret == -EAGAIN && !gdx_accept_proven(a) && now > a->hello_deadline_ms) {
			gdx_listen_shed(lc, i--, GDX_REFUSED_SILENT);
			continue;
		}
		if (ret == -EAGAIN && now > a->deadline_ms) {
			GDX_WARN(
				"dropped connection from %s: no handshake within %d ms (%zu of %zu "
				"bytes)",
				a->peer, gdx_params.handshake_timeout_ms, a->xfer.off, a->xfer.len);
			ret = -ETIMEDOUT;
		}
		if (ret == -EAGAIN)
			continue;
		lc->pending[i--] = lc->pending[--lc->npending];
		if (ret) {
			/* One bad peer must not take the listener down. */
			gdx_accept_free(a);
			continue;
		}
		ret = gdx_comm_register(a->rc);
		if (ret) {
			gdx_accept_free(a);
			return ret;
		}
		gdx_live_comm_open(&a->rc->base);
		a->rc->base.handed = true;
		*comm_p = a->rc;
		GDX_INFO(NCCL_NET, "accepted %s (%s) on %s, %s", a->rc->base.peer,
			 a->rc->base.peer_dev, a->rc->base.dev_name,
			 gdx_rails_note(&a->rc->base, gdx_wire_hello_rails(&a->hello), note,
					sizeof(note)));
		a->rc = NULL;
		a->fd = -1;
		gdx_accept_free(a);
		return 0;
	}
	return 0;
}

/* A few rounds, so probes that already hung up free their slots for whoever
 * waits behind them in the backlog, without looping unbounded in one call. */
#define GDX_ACCEPT_ROUNDS 4

int gdx_accept(struct gdx_listen_comm *lc, struct gdx_recv_comm **comm_p)
{
	int budget = GDX_TAKE_MAX, ret = 0;

	*comm_p = NULL;
	for (int round = 0; round < GDX_ACCEPT_ROUNDS; round++) {
		bool more = gdx_listen_take(lc, &budget);

		ret = gdx_accept_pending(lc, comm_p);
		if (ret || *comm_p || !more || !budget)
			break;
	}
	gdx_listen_shed_tell(lc, false);
	return ret;
}

int gdx_close_listen(struct gdx_listen_comm *lc)
{
	if (gdx_comm_unregister(lc))
		return -EBADF;
	gdx_listen_shed_tell(lc, true);
	for (int i = 0; i < lc->npending; i++)
		gdx_accept_free(lc->pending[i]);
	close(lc->fd);
	lc->kind = GDX_KIND_DEAD;
	free(lc);
	return 0;
}

int gdx_close_send(struct gdx_send_comm *sc)
{
	if (gdx_comm_unregister(sc))
		return -EBADF;
	gdx_send_drain(sc);
	gdx_send_comm_free(sc);
	return 0;
}

int gdx_close_recv(struct gdx_recv_comm *rc)
{
	if (gdx_comm_unregister(rc))
		return -EBADF;
	gdx_recv_comm_free(rc);
	return 0;
}

int gdx_conn_close_owned(struct gdx_ctx *ctx)
{
	struct gdx_connect *cs;
	int closed = 0;

	for (;;) {
		const void *victim;

		victim = gdx_comm_find_owned(ctx);
		if (!victim)
			break;
		switch (*(const uint32_t *)victim) {
		case GDX_KIND_LISTEN: gdx_close_listen((struct gdx_listen_comm *)victim); break;
		case GDX_KIND_SEND: gdx_close_send((struct gdx_send_comm *)victim); break;
		default: gdx_close_recv(gdx_recv_comm_of((struct gdx_comm *)victim)); break;
		}
		closed++;
	}
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

void gdx_conn_fini(void)
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
	gdx_comms_fini();
}
