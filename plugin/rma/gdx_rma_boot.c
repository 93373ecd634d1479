/* SPDX-License-Identifier: MIT */
/* One-sided RMA's out-of-band ring (gdx_rma_boot.h). */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "conn/gdx_handshake.h"
#include "conn/gdx_listen.h"
#include "sys/gdx_door.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "rma/gdx_rma_boot.h"
#include "sys/gdx_sock.h"
#include "sys/gdx_time.h"

/* Every collective call waits at most this long for its neighbours. */
static uint64_t gdx_rma_boot_deadline(void)
{
	return gdx_now_ms() + 10 * (uint64_t)gdx_params.handshake_timeout_ms;
}

int gdx_rma_boot_listen(void *handle, int *fd_p, uint64_t *nonce_p, char *addr, size_t len)
{
	struct gdx_rma_handle *h = handle;
	struct gdx_sockaddr a, bound;
	char ifname[GDX_IFNAME_MAX], hint[128];
	uint64_t nonce;
	int fd, ret;

	ret = gdx_oob_addr(&a, ifname);
	if (ret)
		return ret;
	ret = gdx_sock_listen(&a, &fd, &bound);
	if (ret) {
		GDX_WARN("RMA: listen on %s failed: %s%s", ifname, strerror(-ret),
			 gdx_fd_hint(ret, hint, sizeof(hint)));
		return ret;
	}
	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		nonce = ((uint64_t)random() << 32) ^ (uint64_t)random() ^ gdx_now_ms();
	memset(h, 0, sizeof(*h));
	h->magic = htole64(GDX_RMA_MAGIC);
	h->version = htole32(GDX_RMA_VERSION);
	h->family = htole16((uint16_t)bound.u.sa.sa_family);
	if (bound.u.sa.sa_family == AF_INET) {
		h->port = bound.u.in.sin_port;
		memcpy(h->addr, &bound.u.in.sin_addr, 4);
	} else {
		h->port = bound.u.in6.sin6_port;
		memcpy(h->addr, &bound.u.in6.sin6_addr, 16);
		h->scope_id = htole32(bound.u.in6.sin6_scope_id);
	}
	h->nonce = htole64(nonce);
	gdx_sock_addr_str(&bound, addr, len);
	*fd_p = fd;
	*nonce_p = nonce;
	return 0;
}

/* The address a handle names; -EPROTO when it is not an RMA handle of this
 * version. */
static int gdx_rma_handle_addr(const struct gdx_rma_handle *h, int rank, struct gdx_sockaddr *a,
			       uint64_t *nonce_p)
{
	uint16_t family = le16toh(h->family);

	if (le64toh(h->magic) != GDX_RMA_MAGIC || le32toh(h->version) != GDX_RMA_VERSION ||
	    (family != AF_INET && family != AF_INET6)) {
		GDX_WARN("RMA connect: the handle of rank %d is not an RMA handle of this plugin "
			 "(magic 0x%016llx version %u, want 0x%016llx version %u): every rank "
			 "must run the same plugin",
			 rank, (unsigned long long)le64toh(h->magic), le32toh(h->version),
			 (unsigned long long)GDX_RMA_MAGIC, GDX_RMA_VERSION);
		return -EPROTO;
	}
	memset(a, 0, sizeof(*a));
	if (family == AF_INET) {
		a->u.in.sin_family = AF_INET;
		a->u.in.sin_port = h->port;
		memcpy(&a->u.in.sin_addr, h->addr, 4);
		a->len = sizeof(a->u.in);
	} else {
		a->u.in6.sin6_family = AF_INET6;
		a->u.in6.sin6_port = h->port;
		memcpy(&a->u.in6.sin6_addr, h->addr, 16);
		a->u.in6.sin6_scope_id = le32toh(h->scope_id);
		a->len = sizeof(a->u.in6);
	}
	*nonce_p = le64toh(h->nonce);
	return 0;
}

static void gdx_rma_hello_pack(struct gdx_rma_hello *h, int rank, int nranks, uint64_t nonce)
{
	memset(h, 0, sizeof(*h));
	h->magic = htole64(GDX_RMA_MAGIC);
	h->version = htole32(GDX_RMA_VERSION);
	h->rank = htole32((uint32_t)rank);
	h->nranks = htole32((uint32_t)nranks);
	h->nonce = htole64(nonce);
}

static bool gdx_rma_hello_ok(const struct gdx_rma_hello *h, int rank, int nranks, uint64_t nonce)
{
	return le64toh(h->magic) == GDX_RMA_MAGIC && le32toh(h->version) == GDX_RMA_VERSION &&
	       le32toh(h->rank) == (uint32_t)rank && le32toh(h->nranks) == (uint32_t)nranks &&
	       le64toh(h->nonce) == nonce;
}

/* Waits up to the deadline for one of fds (events each); -ETIMEDOUT. */
static int gdx_rma_boot_wait(struct pollfd *p, int n, uint64_t deadline)
{
	uint64_t now = gdx_now_ms();
	int left;

	if (now >= deadline)
		return -ETIMEDOUT;
	left = deadline - now > 100 ? 100 : (int)(deadline - now);
	if (poll(p, (nfds_t)n, left) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

/* The ring's two halves, made at once: connect to the next rank and say
 * hello, take the previous rank's connection and answer it. */
struct gdx_rma_ring {
	struct gdx_sockaddr to;
	uint64_t next_nonce;
	int next_state; /* 0 connecting, 1 hello out, 2 answer in, 3 done */
	struct gdx_rma_hello out, next_ack;
	struct gdx_xfer x_next;
	struct gdx_rma_prev prev;
	uint64_t retry_ms;
};

static int gdx_rma_ring_next(struct gdx_rma_boot *b, struct gdx_rma_ring *r)
{
	int ret;

	for (;;) {
		switch (r->next_state) {
		case 0:
			if (b->next_fd < 0) {
				if (gdx_now_ms() < r->retry_ms)
					return -EAGAIN;
				ret = gdx_sock_connect_start(&r->to, &b->next_fd);
				if (ret)
					return ret;
			}
			ret = gdx_sock_connect_done(b->next_fd);
			if (ret == -EAGAIN)
				return ret;
			if (ret == -ECONNREFUSED || ret == -ECONNRESET) {
				/* not listening yet, or gone: try again shortly */
				close(b->next_fd);
				b->next_fd = -1;
				r->retry_ms = gdx_now_ms() + 50;
				return -EAGAIN;
			}
			if (ret)
				return ret;
			gdx_rma_hello_pack(&r->out, b->rank, b->nranks, r->next_nonce);
			gdx_xfer_set(&r->x_next, &r->out, sizeof(r->out));
			r->next_state = 1;
			break;
		case 1:
			ret = gdx_sock_send_some(b->next_fd, &r->x_next);
			if (ret)
				return ret;
			gdx_xfer_set(&r->x_next, &r->next_ack, sizeof(r->next_ack));
			r->next_state = 2;
			break;
		case 2:
			ret = gdx_sock_recv_some(b->next_fd, &r->x_next);
			if (ret)
				return ret;
			if (!gdx_rma_hello_ok(&r->next_ack, (b->rank + 1) % b->nranks, b->nranks,
					      r->next_nonce)) {
				GDX_WARN("RMA connect: rank %d (%s) answered the ring's hello with "
					 "something else: every rank must run the same plugin",
					 (b->rank + 1) % b->nranks, b->next_addr);
				return -EPROTO;
			}
			r->next_state = 3;
			return 0;
		default: return 0;
		}
	}
}

/*
 * The previous side. Anybody may connect to the ring's listen socket, so its
 * connections come through the door (sys/gdx_door.h): each must send the
 * ring's hello within the hello deadline, silent ones are shed oldest
 * first, and none holds up another. The first whose hello names the
 * previous rank and carries this rank's nonce is the previous rank's; a
 * second such claim while the ring is made means one of them is not (every
 * rank holds every rank's handle), and the ring is refused rather than
 * made with either.
 */
static int gdx_rma_prev_check(void *arg, struct gdx_door_conn *c)
{
	struct gdx_rma_prev *p = arg;
	struct gdx_rma_hello h;
	int prev = (p->rank + p->nranks - 1) % p->nranks;

	memcpy(&h, c->hello, sizeof(h));
	if (!gdx_rma_hello_ok(&h, prev, p->nranks, p->nonce)) {
		GDX_INFO(NCCL_NET,
			 "RMA connect: a connection to the ring's listen socket from %s that is "
			 "not rank %d's, closed",
			 c->peer, prev);
		return -EPROTO;
	}
	if (p->fd >= 0) {
		p->rival = true;
		snprintf(p->rival_from, sizeof(p->rival_from), "%s", c->peer);
		return -EEXIST;
	}
	p->fd = c->fd;
	snprintf(p->from, sizeof(p->from), "%s", c->peer);
	gdx_rma_hello_pack(&p->ack, p->rank, p->nranks, p->nonce);
	gdx_xfer_set(&p->x_ack, &p->ack, sizeof(p->ack));
	return 0;
}

void gdx_rma_prev_open(struct gdx_rma_prev *p, int lfd, int rank, int nranks, uint64_t nonce,
		       int hello_ms)
{
	const struct gdx_door_ops ops = {
		.hello_len = sizeof(struct gdx_rma_hello),
		.hello_ms = hello_ms,
		.max_held = GDX_MAX_PENDING_ACCEPTS,
		.max_per_addr = GDX_MAX_UNPROVEN_PER_ADDR,
		.check = gdx_rma_prev_check,
		.arg = p,
	};

	_Static_assert(sizeof(struct gdx_rma_hello) <= GDX_DOOR_HELLO_MAX,
		       "the door reads the ring's hello whole");
	memset(p, 0, sizeof(*p));
	p->rank = rank;
	p->nranks = nranks;
	p->nonce = nonce;
	p->fd = -1;
	gdx_door_init(&p->door, lfd, &ops);
}

/* What the door shed: at once the first time, then at most a second. */
static void gdx_rma_prev_tell(struct gdx_rma_prev *p, uint64_t now, bool closing)
{
	struct gdx_door_shed s;

	if (!gdx_door_tell(&p->door, now, closing, &s))
		return;
	GDX_WARN("RMA connect: rank %d closed %u connection(s) to the ring's listen socket that "
		 "sent no ring hello: %u past the %d ms hello deadline, %u over the bound of %d "
		 "unproven per address and %d in all (the last from %s)",
		 p->rank, s.silent + s.busy + s.full, s.silent, p->door.ops.hello_ms,
		 s.busy + s.full, GDX_MAX_UNPROVEN_PER_ADDR, GDX_MAX_PENDING_ACCEPTS,
		 s.full ? s.full_last : s.last);
}

int gdx_rma_prev_step(struct gdx_rma_prev *p, uint64_t now)
{
	int budget = 2 * GDX_DOOR_MAX, more, ret;

	do {
		more = gdx_door_take(&p->door, &budget, now);
		gdx_door_sweep(&p->door, now);
	} while (more > 0 && budget > 0 && !p->rival);
	gdx_rma_prev_tell(p, now, false);
	if (more < 0)
		return more;
	if (p->rival)
		return -EEXIST;
	if (p->fd < 0)
		return -EAGAIN;
	ret = gdx_sock_send_some(p->fd, &p->x_ack);
	return ret;
}

int gdx_rma_prev_pollfds(const struct gdx_rma_prev *p, struct pollfd *fds)
{
	int n = gdx_door_pollfds(&p->door, fds);

	if (p->fd >= 0 && p->x_ack.off < p->x_ack.len)
		fds[n++] = (struct pollfd){.fd = p->fd, .events = POLLOUT};
	return n;
}

void gdx_rma_prev_close(struct gdx_rma_prev *p, bool keep_fd)
{
	gdx_rma_prev_tell(p, gdx_now_ms(), true);
	gdx_door_close(&p->door);
	if (!keep_fd && p->fd >= 0)
		close(p->fd);
	p->fd = -1;
}

int gdx_rma_boot_ring(struct gdx_rma_boot *b, int lfd, uint64_t nonce, void *const *handles,
		      int nranks, int rank)
{
	struct gdx_rma_ring r = {0};
	uint64_t deadline = gdx_rma_boot_deadline();
	int next = (rank + 1) % nranks, prev = (rank + nranks - 1) % nranks;
	int ret = 0, rn = -EAGAIN, rp = -EAGAIN;

	b->nranks = nranks;
	b->rank = rank;
	b->next_fd = b->prev_fd = -1;
	if (nranks == 1)
		return 0;
	ret = gdx_rma_handle_addr(handles[next], next, &r.to, &r.next_nonce);
	if (ret)
		return ret;
	gdx_sock_addr_str(&r.to, b->next_addr, sizeof(b->next_addr));
	gdx_rma_prev_open(&r.prev, lfd, rank, nranks, nonce, gdx_hello_ms());
	for (;;) {
		struct pollfd p[2 + 1 + GDX_DOOR_MAX];
		int n = 0;

		if (rn == -EAGAIN)
			rn = gdx_rma_ring_next(b, &r);
		/* Still taken while the next side is not done: a second claim
		 * to be the previous rank is seen. */
		if (rp == -EAGAIN || (rp == 0 && rn == -EAGAIN)) {
			ret = gdx_rma_prev_step(&r.prev, gdx_now_ms());
			rp = rp == 0 && ret == -EAGAIN ? 0 : ret;
		}
		if (rn && rn != -EAGAIN) {
			ret = rn;
			GDX_WARN("RMA connect: rank %d could not join the ring at rank %d (%s): %s",
				 rank, next, b->next_addr, strerror(-ret));
			break;
		}
		if (rp == -EEXIST) {
			ret = rp;
			GDX_WARN("RMA connect: rank %d: two connections claimed to be rank %d with "
				 "this rank's handle (from %s, then from %s): one of them is not "
				 "rank %d, so the ring is not made (every rank holds every rank's "
				 "handle: see libnccl-net-gdx-security(7))",
				 rank, prev, r.prev.from, r.prev.rival_from, prev);
			break;
		}
		if (rp && rp != -EAGAIN) {
			ret = rp;
			GDX_WARN(
				"RMA connect: rank %d could not take rank %d's ring connection: %s",
				rank, prev, strerror(-ret));
			break;
		}
		if (rn != -EAGAIN && rp != -EAGAIN)
			break;
		if (b->next_fd >= 0 && rn == -EAGAIN)
			p[n++] = (struct pollfd){.fd = b->next_fd,
						 .events = r.next_state == 2 ? POLLIN : POLLOUT};
		n += gdx_rma_prev_pollfds(&r.prev, p + n);
		ret = gdx_rma_boot_wait(p, n, deadline);
		if (ret) {
			GDX_WARN("RMA connect: rank %d of %d: the ring is not whole after %llu ms "
				 "(rank %d at %s %s, rank %d %s): is every rank calling connect?",
				 rank, nranks,
				 10ULL * (unsigned long long)gdx_params.handshake_timeout_ms, next,
				 b->next_addr, rn ? "not reached" : "reached", prev,
				 rp ? "not heard from" : "heard from");
			break;
		}
	}
	if (!ret) {
		b->prev_fd = r.prev.fd;
		snprintf(b->prev_addr, sizeof(b->prev_addr), "%s", r.prev.from);
	}
	gdx_rma_prev_close(&r.prev, !ret);
	if (ret) {
		gdx_rma_boot_close(b);
		return ret;
	}
	return 0;
}

int gdx_rma_boot_allgather(struct gdx_rma_boot *b, void *buf, size_t block, const char *what)
{
	uint64_t deadline = gdx_rma_boot_deadline();
	int n = b->nranks;

	for (int step = 0; step < n - 1; step++) {
		int sidx = (b->rank - step + n) % n, ridx = (b->rank - step - 1 + n) % n;
		struct gdx_xfer xs, xr;
		int rs = -EAGAIN, rr = -EAGAIN, ret;

		gdx_xfer_set(&xs, (char *)buf + (size_t)sidx * block, block);
		gdx_xfer_set(&xr, (char *)buf + (size_t)ridx * block, block);
		while (rs == -EAGAIN || rr == -EAGAIN) {
			struct pollfd p[2];
			int k = 0;

			if (rs == -EAGAIN)
				rs = gdx_sock_send_some(b->next_fd, &xs);
			if (rr == -EAGAIN)
				rr = gdx_sock_recv_some(b->prev_fd, &xr);
			if ((rs && rs != -EAGAIN) || (rr && rr != -EAGAIN)) {
				bool out = rs && rs != -EAGAIN;

				ret = out ? rs : rr;
				GDX_WARN(
					"RMA %s: rank %d lost its ring neighbour, rank %d (%s): %s "
					"(its process ended, or it gave up on the call)",
					what, b->rank,
					out ? (b->rank + 1) % n : (b->rank + n - 1) % n,
					out ? b->next_addr : b->prev_addr, strerror(-ret));
				return ret;
			}
			if (rs == -EAGAIN)
				p[k++] = (struct pollfd){.fd = b->next_fd, .events = POLLOUT};
			if (rr == -EAGAIN)
				p[k++] = (struct pollfd){.fd = b->prev_fd, .events = POLLIN};
			if (!k)
				break;
			ret = gdx_rma_boot_wait(p, k, deadline);
			if (ret) {
				GDX_WARN("RMA %s: rank %d of %d waited %llu ms for its ring "
					 "neighbours: is every rank making the call?",
					 what, b->rank, n,
					 10ULL * (unsigned long long)
							 gdx_params.handshake_timeout_ms);
				return ret;
			}
		}
	}
	return 0;
}

void gdx_rma_boot_close(struct gdx_rma_boot *b)
{
	if (b->next_fd >= 0)
		close(b->next_fd);
	if (b->prev_fd >= 0)
		close(b->prev_fd);
	b->next_fd = b->prev_fd = -1;
}
