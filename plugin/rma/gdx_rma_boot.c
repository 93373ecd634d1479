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

#include "conn/gdx_handshake.h"
#include "conn/gdx_listen.h"
#include "sys/gdx_log.h"
#include "sys/gdx_param.h"
#include "rma/gdx_rma_boot.h"
#include "sys/gdx_sock.h"
#include "sys/gdx_time.h"

/* The first bytes each way on a ring socket: the connector's proves it
 * holds the listener's handle (its nonce) and says who it is; the
 * listener's answer says it was taken. */
struct gdx_rma_hello {
	uint64_t magic;
	uint32_t version;
	uint32_t rank;
	uint32_t nranks;
	uint32_t reserved;
	uint64_t nonce;
};

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
	struct gdx_rma_hello out, next_ack, prev_in, prev_ack;
	struct gdx_xfer x_next, x_prev;
	int cand;	/* an accepted connection whose hello is being read */
	int prev_state; /* 0 accepting, 1 hello in, 2 answer out, 3 done */
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

static int gdx_rma_ring_prev(struct gdx_rma_boot *b, struct gdx_rma_ring *r, int lfd,
			     uint64_t nonce)
{
	int prev = (b->rank + b->nranks - 1) % b->nranks, ret;

	for (;;) {
		switch (r->prev_state) {
		case 0:
			ret = gdx_sock_accept(lfd, &r->cand);
			if (ret)
				return ret;
			gdx_xfer_set(&r->x_prev, &r->prev_in, sizeof(r->prev_in));
			r->prev_state = 1;
			break;
		case 1:
			ret = gdx_sock_recv_some(r->cand, &r->x_prev);
			if (ret == -EAGAIN)
				return ret;
			if (ret || !gdx_rma_hello_ok(&r->prev_in, prev, b->nranks, nonce)) {
				/* not the ring's: someone else found the port */
				GDX_INFO(NCCL_NET,
					 "RMA connect: a connection to the ring's listen "
					 "socket that is not rank %d's, closed",
					 prev);
				close(r->cand);
				r->cand = -1;
				r->prev_state = 0;
				break;
			}
			gdx_rma_hello_pack(&r->prev_ack, b->rank, b->nranks, nonce);
			gdx_xfer_set(&r->x_prev, &r->prev_ack, sizeof(r->prev_ack));
			r->prev_state = 2;
			break;
		case 2:
			ret = gdx_sock_send_some(r->cand, &r->x_prev);
			if (ret)
				return ret;
			b->prev_fd = r->cand;
			r->cand = -1;
			r->prev_state = 3;
			return 0;
		default: return 0;
		}
	}
}

int gdx_rma_boot_ring(struct gdx_rma_boot *b, int lfd, uint64_t nonce, void *const *handles,
		      int nranks, int rank)
{
	struct gdx_rma_ring r = {.cand = -1};
	uint64_t deadline = gdx_rma_boot_deadline();
	int next = (rank + 1) % nranks, ret = 0, rn = -EAGAIN, rp = -EAGAIN;

	b->nranks = nranks;
	b->rank = rank;
	b->next_fd = b->prev_fd = -1;
	if (nranks == 1)
		return 0;
	ret = gdx_rma_handle_addr(handles[next], next, &r.to, &r.next_nonce);
	if (ret)
		return ret;
	gdx_sock_addr_str(&r.to, b->next_addr, sizeof(b->next_addr));
	while (rn == -EAGAIN || rp == -EAGAIN) {
		struct pollfd p[3];
		int n = 0;

		if (rn == -EAGAIN)
			rn = gdx_rma_ring_next(b, &r);
		if (rp == -EAGAIN)
			rp = gdx_rma_ring_prev(b, &r, lfd, nonce);
		if (rn && rn != -EAGAIN) {
			ret = rn;
			GDX_WARN("RMA connect: rank %d could not join the ring at rank %d (%s): %s",
				 rank, next, b->next_addr, strerror(-ret));
			break;
		}
		if (rp && rp != -EAGAIN) {
			ret = rp;
			GDX_WARN(
				"RMA connect: rank %d could not take rank %d's ring connection: %s",
				rank, (rank + nranks - 1) % nranks, strerror(-ret));
			break;
		}
		if (rn != -EAGAIN && rp != -EAGAIN)
			break;
		if (b->next_fd >= 0 && rn == -EAGAIN)
			p[n++] = (struct pollfd){.fd = b->next_fd,
						 .events = r.next_state == 2 ? POLLIN : POLLOUT};
		p[n++] = (struct pollfd){.fd = r.cand >= 0 ? r.cand : lfd,
					 .events = r.prev_state == 2 ? POLLOUT : POLLIN};
		ret = gdx_rma_boot_wait(p, n, deadline);
		if (ret) {
			GDX_WARN("RMA connect: rank %d of %d: the ring is not whole after %llu ms "
				 "(rank %d at %s %s, rank %d %s): is every rank calling connect?",
				 rank, nranks,
				 10ULL * (unsigned long long)gdx_params.handshake_timeout_ms, next,
				 b->next_addr, rn ? "not reached" : "reached",
				 (rank + nranks - 1) % nranks,
				 rp ? "not heard from" : "heard from");
			break;
		}
	}
	if (r.cand >= 0)
		close(r.cand);
	if (ret) {
		gdx_rma_boot_close(b);
		return ret;
	}
	{
		struct gdx_sockaddr a = {.len = sizeof(a.u)};

		if (!getpeername(b->prev_fd, &a.u.sa, &a.len))
			gdx_sock_addr_str(&a, b->prev_addr, sizeof(b->prev_addr));
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
