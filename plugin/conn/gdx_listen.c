/* SPDX-License-Identifier: MIT */
/*
 * The listener (gdx_listen.h): its socket on the out-of-band interface and
 * the handle that names it, and the acceptor: connections taken through
 * the door (sys/gdx_door.h), which sheds those that never send their hello,
 * and one resumable handshake (gdx_handshake.h) for each whose hello shows
 * the handle's nonce.
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
	GDX_ACC_RECV_HELLO, /* the door reads the connector's hello */
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
	uint64_t deadline_ms; /* the whole handshake by then */
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

static void gdx_listen_door_open(struct gdx_listen_comm *lc);

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
	gdx_listen_door_open(lc);
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

/* Tells a peer why it is refused (gdx_wire.h): the socket is closed next, so
 * this is all it gets, and it never holds the nonce. */
static void gdx_conn_refuse(int fd, uint32_t why)
{
	struct gdx_wire_hello no;
	struct gdx_xfer x = {&no, sizeof(no), 0};

	gdx_wire_refusal_pack(&no, why);
	gdx_sock_send_some(fd, &x);
}

/* The log line for a handshake's socket failing (-EAGAIN: none); off and
 * len: how far the part being moved came. */
static int gdx_accept_io_err(const char *peer, bool hello, const struct gdx_xfer *x, int ret)
{
	if (ret == -EAGAIN)
		return ret;
	if (ret == -ECONNRESET && hello && x->off == 0)
		GDX_INFO(NCCL_NET, "connection from %s closed before any byte (a port probe?)",
			 peer);
	else if (ret == -ECONNRESET)
		GDX_WARN("connection from %s closed during the handshake after %zu of %zu bytes",
			 peer, x->off, x->len);
	else
		GDX_WARN("connection from %s failed during the handshake: %s", peer,
			 strerror(-ret));
	return ret;
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
		case GDX_ACC_RECV_HELLO: return -ENOTRECOVERABLE; /* the door's, never here */
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
	return gdx_accept_io_err(a->peer, false, &a->xfer, ret);
}

/*
 * Silent clients. A connection counts as proven once its hello has shown the
 * handle's nonce; before that it is anybody's, and the door holds it
 * (sys/gdx_door.h), within GDX_MAX_UNPROVEN_PER_ADDR from one address and
 * GDX_MAX_PENDING_ACCEPTS handshakes in all, proven ones included, until
 * the hello deadline. Each one shed gets a refusal that says why, and the
 * connector of a real peer closed so connects again.
 */

/* The door's check: a whole hello that carries the nonce is kept as a
 * handshake in recv-meta; any other is refused with one log line. Nothing
 * else is read before the hello is checked, and nothing is answered but a
 * refusal. */
static int gdx_listen_check(void *arg, struct gdx_door_conn *c)
{
	struct gdx_listen_comm *lc = arg;
	struct gdx_accept *a;
	char why[256];
	int ret;

	_Static_assert(sizeof(a->hello) <= GDX_DOOR_HELLO_MAX, "the door reads a hello whole");
	ret = gdx_wire_hello_check(c->hello, sizeof(a->hello), lc->nonce, why, sizeof(why));
	if (ret) {
		/* It has not shown the nonce: it learns why, and our version so
		 * that it can name both, nothing more. */
		gdx_conn_refuse(c->fd, ret == -EPROTONOSUPPORT ? GDX_REFUSED_VERSION
				       : ret == -EACCES	       ? GDX_REFUSED_NONCE
							       : GDX_REFUSED_HELLO);
		GDX_WARN("refused connection from %s: %s", c->peer, why);
		return ret;
	}
	if (lc->npending == GDX_MAX_PENDING_ACCEPTS)
		return -ENOSPC; /* the door counts these: never */
	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->fd = c->fd;
	a->state = GDX_ACC_RECV_HELLO;
	a->deadline_ms = c->taken_ms + (uint64_t)gdx_params.handshake_timeout_ms;
	memcpy(&a->hello, c->hello, sizeof(a->hello));
	snprintf(a->peer, sizeof(a->peer), "%s", c->peer);
	gdx_xfer_set(&a->xfer, &a->meta, sizeof(a->meta));
	ret = gdx_accept_set_state(a, GDX_ACC_RECV_META);
	if (ret) {
		free(a);
		return ret;
	}
	lc->pending[lc->npending++] = a;
	return 0;
}

static void gdx_listen_refuse(void *arg, int fd, enum gdx_door_why why)
{
	(void)arg;
	gdx_conn_refuse(fd, why == GDX_DOOR_SILENT ? GDX_REFUSED_SILENT : GDX_REFUSED_BUSY);
}

static void gdx_listen_lost(void *arg, const struct gdx_door_conn *c, int err)
{
	(void)arg;
	gdx_accept_io_err(c->peer, true, &c->xfer, err);
}

static void gdx_listen_door_open(struct gdx_listen_comm *lc)
{
	const struct gdx_door_ops ops = {
		.hello_len = sizeof(struct gdx_wire_hello),
		.hello_ms = gdx_hello_ms(),
		.max_held = GDX_MAX_PENDING_ACCEPTS,
		.max_per_addr = GDX_MAX_UNPROVEN_PER_ADDR,
		.check = gdx_listen_check,
		.refuse = gdx_listen_refuse,
		.lost = gdx_listen_lost,
		.arg = lc,
	};

	gdx_door_init(&lc->door, lc->fd, &ops);
}

int gdx_listen_held(const struct gdx_listen_comm *lc)
{
	return lc->door.n + lc->npending;
}

/* The lines about connections closed unread: at once the first time,
 * then at most a second, and what is left when the listener closes. Those
 * that sent no hello, and apart (they may have sent one: it was never read)
 * those refused while the queue held only handshakes that had shown the
 * nonce. */
static void gdx_listen_shed_tell(struct gdx_listen_comm *lc, bool closing)
{
	struct gdx_door_shed s;
	uint32_t n;

	if (!gdx_door_tell(&lc->door, gdx_conn_now(), closing, &s))
		return;
	n = s.silent + s.busy;
	if (n)
		GDX_WARN("closed %u incoming connection(s) that sent no hello: %u past the %d ms "
			 "hello deadline, %u over the bound of %d unproven per address and %d "
			 "handshakes in all (the last from %s)%s",
			 n, s.silent, lc->door.ops.hello_ms, s.busy, GDX_MAX_UNPROVEN_PER_ADDR,
			 GDX_MAX_PENDING_ACCEPTS, s.last,
			 closing ? ", before the listener closed" : "");
	if (s.full)
		GDX_WARN("refused %u incoming connection(s) unread: the %d handshakes held had all "
			 "shown the nonce, so none could make room (the last from %s; a real peer "
			 "connects again)%s",
			 s.full, GDX_MAX_PENDING_ACCEPTS, s.full_last,
			 closing ? ", before the listener closed" : "");
}

/* Connections taken from the backlog in one accept call, at most: a client
 * that connects faster than they are taken cannot keep the call going. */
#define GDX_TAKE_MAX (2 * GDX_MAX_PENDING_ACCEPTS)

/* Takes connections through the door. Returns true when some may still
 * wait in the backlog, false when it is empty. */
static bool gdx_listen_take(struct gdx_listen_comm *lc, int *budget)
{
	char hint[128];
	int ret = gdx_door_take(&lc->door, budget, gdx_conn_now());

	/* a peer waits in the backlog: say why it is not taken, once */
	if (ret < 0 && !lc->accept_warned)
		GDX_WARN("accept on device %d failed: %s%s", lc->dev_index, strerror(-ret),
			 gdx_fd_hint(ret, hint, sizeof(hint)));
	lc->accept_warned |= ret < 0;
	return ret > 0;
}

/* Forgets handshake i (the last takes its place): the door counts it no
 * more. */
static struct gdx_accept *gdx_listen_forget(struct gdx_listen_comm *lc, int i)
{
	struct gdx_accept *a = lc->pending[i];

	lc->pending[i] = lc->pending[--lc->npending];
	gdx_door_release(&lc->door);
	return a;
}

/* Reads what has come of every hello, then progresses every handshake past
 * it once, dropping failed ones; hands back the first that completes. */
static int gdx_accept_pending(struct gdx_listen_comm *lc, struct gdx_recv_comm **comm_p)
{
	uint64_t now = gdx_conn_now();
	char note[320];

	gdx_door_sweep(&lc->door, now);
	for (int i = 0; i < lc->npending; i++) {
		struct gdx_accept *a = lc->pending[i];
		int ret = gdx_accept_progress(lc, a);

		if (ret == -EAGAIN && now > a->deadline_ms) {
			GDX_WARN(
				"dropped connection from %s: no handshake within %d ms (%zu of %zu "
				"bytes)",
				a->peer, gdx_params.handshake_timeout_ms, a->xfer.off, a->xfer.len);
			ret = -ETIMEDOUT;
		}
		if (ret == -EAGAIN)
			continue;
		gdx_listen_forget(lc, i--);
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
			 GDX_LOG_QUOTED(a->rc->base.peer_dev), a->rc->base.dev_name,
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
	gdx_door_close(&lc->door);
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
