/* SPDX-License-Identifier: MIT */
/*
 * The listener (gdx_listen.h): its socket on the out-of-band interface and
 * the handle that names it, and the acceptor, one resumable handshake per
 * connection taken from its backlog (gdx_handshake.h), with the shedding of
 * connections that never show the handle's nonce.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "sys/gdx_env.h"
#include "data/gdx_flush.h"
#include "conn/gdx_handshake.h"
#include "conn/gdx_listen.h"
#include "stats/gdx_live.h"
#include "sys/gdx_log.h"
#include "data/gdx_p2p.h"
#include "sys/gdx_param.h"
#include "comm/gdx_registry.h"
#include "conn/gdx_setup.h"
#include "dev/gdx_subnet.h"
#include "sys/gdx_time.h"

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

/* One incoming connection being handshaken. */
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

static int gdx_accept_set_state(struct gdx_accept *a, enum gdx_accept_state to)
{
	if (!gdx_conn_state_step("accept from", gdx_accept_state_names, GDX_ACC_NSTATES,
				 (int)a->state, (int)to, a->peer))
		return -ENOTRECOVERABLE;
	a->state = to;
	return 0;
}

int gdx_oob_addr(struct gdx_sockaddr *addr, char *ifname)
{
	const char *spec = gdx_params.socket_ifname; /* or NCCL_SOCKET_IFNAME, its twin */
	int ret;

	const char *family = gdx_env(GDX_ENV_SOCKET_FAMILY);
	char have[512], what[64];
	int n;

	ret = gdx_sock_find_if(spec, family, addr, ifname);
	if (ret != -ENODEV)
		return ret;
	/* what there is to choose from, and the variable the value came from */
	n = gdx_sock_list_ifs(family, have, sizeof(have));
	if (family && (!strcmp(family, "AF_INET") || !strcmp(family, "AF_INET6")))
		snprintf(what, sizeof(what), "(up, with an %s address that is not link-local)",
			 family);
	else
		snprintf(what, sizeof(what), "(up, with an address that is not link-local)");
	if (spec && *spec && n > 0)
		GDX_WARN("%s=%s matches none of this host's usable out-of-band interfaces %s: %s",
			 gdx_param_src("SOCKET_IFNAME") == GDX_PARAM_TWIN
				 ? "NCCL_SOCKET_IFNAME"
				 : "NCCL_GDX_SOCKET_IFNAME",
			 GDX_LOG_QUOTED(spec), what, have);
	else
		GDX_WARN("no usable out-of-band IP interface: this host has none %s%s%s", what,
			 n < 0 ? " " : "", n < 0 ? have : "");
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
	gdx_subnet_fill(handle, dev);
	ret = gdx_registry_add(lc);
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

static void gdx_recv_comm_free(struct gdx_recv_comm *rc)
{
	if (!rc)
		return;
	gdx_flush_destroy(rc);
	gdx_setup_base_fini(&rc->base);
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
	ret = gdx_setup_base_init(&rc->base, GDX_KIND_RECV, lc->dev_index, -1, a->peer, lc->ctx,
				  -1);
	/* the sender's service level and class for both ends, as net_ib; the
	 * clear-to-sends' own class when NCCL_GDX_FIFO_TC says so */
	/* the connector's rail and QP counts: the larger of both ends' */
	if (!ret && (a->meta.nrails != (uint32_t)gdx_setup_rails_for(
					       dev->nmembers, gdx_wire_hello_rails(&a->hello)) ||
		     (int)a->meta.qps_per_rail < gdx_setup_qps_for((int)a->meta.nrails, 1))) {
		GDX_WARN("refused connection from %s: it made %u rail(s) of %u QP(s), where %d "
			 "NIC(s) here and its %u ask for %d of at least %d",
			 a->peer, a->meta.nrails, a->meta.qps_per_rail, dev->nmembers,
			 gdx_wire_hello_rails(&a->hello),
			 gdx_setup_rails_for(dev->nmembers, gdx_wire_hello_rails(&a->hello)),
			 gdx_setup_qps_for((int)a->meta.nrails, 1));
		ret = -EPROTO;
	}
	if (!ret)
		ret = gdx_setup_rails_create(
			&rc->base, dev, (int)a->meta.nrails, (int)a->meta.qps_per_rail, a->meta.sl,
			gdx_params.fifo_tc >= 0 ? (uint8_t)gdx_params.fifo_tc : a->meta.tc);
	if (ret)
		goto err;
	ret = gdx_setup_rails_connect(&rc->base, &a->meta);
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
			gdx_setup_meta_fill(&a->meta, &a->rc->base);
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

/* The lines about connections closed unread: at once the first time,
 * then at most a second, and what is left when the listener closes. Those
 * that sent no hello, and apart (they may have sent one: it was never read)
 * those refused while the queue held only handshakes that had shown the
 * nonce. */
static void gdx_listen_shed_tell(struct gdx_listen_comm *lc, bool closing)
{
	uint32_t n = lc->shed_silent + lc->shed_busy;
	uint64_t now;

	if (!n && !lc->shed_full)
		return;
	now = gdx_conn_now();
	if (!closing && lc->shed_told && now < lc->shed_told_ms + GDX_SHED_TELL_MS)
		return;
	if (n)
		GDX_WARN("closed %u incoming connection(s) that sent no hello: %u past the %d ms "
			 "hello deadline, %u over the bound of %d unproven per address and %d "
			 "handshakes in all (the last from %s)%s",
			 n, lc->shed_silent, gdx_accept_hello_ms(), lc->shed_busy,
			 GDX_MAX_UNPROVEN_PER_ADDR, GDX_MAX_PENDING_ACCEPTS, lc->shed_last,
			 closing ? ", before the listener closed" : "");
	if (lc->shed_full)
		GDX_WARN("refused %u incoming connection(s) unread: the %d handshakes held had all "
			 "shown the nonce, so none could make room (the last from %s; a real peer "
			 "connects again)%s",
			 lc->shed_full, GDX_MAX_PENDING_ACCEPTS, lc->full_last,
			 closing ? ", before the listener closed" : "");
	lc->shed_silent = 0;
	lc->shed_busy = 0;
	lc->shed_full = 0;
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
			/* Those held proved themselves meanwhile, and the queue has
			 * no room: this one is refused and closed, never stored. */
			gdx_conn_refuse(a->fd, GDX_REFUSED_BUSY);
			lc->shed_full++;
			snprintf(lc->full_last, sizeof(lc->full_last), "%s", a->peer);
			gdx_accept_free(a);
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
		ret = gdx_registry_add(a->rc);
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
	if (gdx_registry_remove(lc))
		return -EBADF;
	gdx_listen_shed_tell(lc, true);
	for (int i = 0; i < lc->npending; i++)
		gdx_accept_free(lc->pending[i]);
	close(lc->fd);
	lc->kind = GDX_KIND_DEAD;
	free(lc);
	return 0;
}

int gdx_close_recv(struct gdx_recv_comm *rc)
{
	if (gdx_registry_remove(rc))
		return -EBADF;
	gdx_recv_comm_free(rc);
	return 0;
}
