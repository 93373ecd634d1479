/* SPDX-License-Identifier: MIT */
/* The door every listening socket takes its connections through (gdx_door.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys/gdx_door.h"

void gdx_door_init(struct gdx_door *d, int lfd, const struct gdx_door_ops *ops)
{
	memset(d, 0, sizeof(*d));
	d->lfd = lfd;
	d->ops = *ops;
	if (d->ops.max_held > GDX_DOOR_MAX || d->ops.max_held < 1)
		d->ops.max_held = GDX_DOOR_MAX;
	if (d->ops.max_per_addr < 1 || d->ops.max_per_addr > d->ops.max_held)
		d->ops.max_per_addr = d->ops.max_held;
	if (d->ops.hello_len > GDX_DOOR_HELLO_MAX)
		d->ops.hello_len = GDX_DOOR_HELLO_MAX;
}

static bool gdx_door_addr_same(const struct gdx_sockaddr *x, const struct gdx_sockaddr *y)
{
	if (x->u.sa.sa_family != y->u.sa.sa_family)
		return false;
	if (x->u.sa.sa_family == AF_INET)
		return x->u.in.sin_addr.s_addr == y->u.in.sin_addr.s_addr;
	if (x->u.sa.sa_family == AF_INET6)
		return !memcmp(&x->u.in6.sin6_addr, &y->u.in6.sin6_addr, 16);
	return true; /* unknown peers count as one */
}

/* Unproven connections held from that address. */
static int gdx_door_from(const struct gdx_door *d, const struct gdx_sockaddr *from)
{
	int n = 0;

	for (int i = 0; i < d->n; i++)
		n += gdx_door_addr_same(&d->held[i]->from, from);
	return n;
}

/* Forgets held connection i (the last takes its place); closes it unless
 * the owner kept it. */
static void gdx_door_forget(struct gdx_door *d, int i, bool close_it)
{
	struct gdx_door_conn *c = d->held[i];

	d->held[i] = d->held[--d->n];
	if (close_it)
		close(c->fd);
	free(c);
}

/* Closes held connection i unread, telling it why, and counts it. */
static void gdx_door_shed(struct gdx_door *d, int i, enum gdx_door_why why)
{
	struct gdx_door_conn *c = d->held[i];

	if (d->ops.refuse)
		d->ops.refuse(d->ops.arg, c->fd, why);
	if (why == GDX_DOOR_SILENT)
		d->shed.silent++;
	else
		d->shed.busy++;
	snprintf(d->shed.last, sizeof(d->shed.last), "%s", c->peer);
	gdx_door_forget(d, i, true);
}

enum { GDX_DOOR_WAIT, GDX_DOOR_KEPT, GDX_DOOR_GONE };

/* Reads what has come of held connection i's hello: GDX_DOOR_WAIT while
 * it may yet come; once it is whole and the owner's check kept it,
 * GDX_DOOR_KEPT; GDX_DOOR_GONE when the check refused it or the connection
 * failed. It is no longer held but while it waits. */
static int gdx_door_read(struct gdx_door *d, int i)
{
	struct gdx_door_conn *c = d->held[i];
	int ret = gdx_sock_recv_some(c->fd, &c->xfer);

	if (ret == -EAGAIN)
		return GDX_DOOR_WAIT;
	if (ret) {
		if (d->ops.lost)
			d->ops.lost(d->ops.arg, c, ret);
		gdx_door_forget(d, i, true);
		return GDX_DOOR_GONE;
	}
	ret = d->ops.check(d->ops.arg, c);
	d->kept += !ret;
	gdx_door_forget(d, i, ret != 0);
	return ret ? GDX_DOOR_GONE : GDX_DOOR_KEPT;
}

/* Makes room: closes the oldest unproven connection (from that address, or
 * any). One whose hello came meanwhile is read and checked first. Returns
 * false when no unproven one is left. */
static bool gdx_door_shed_oldest(struct gdx_door *d, const struct gdx_sockaddr *from)
{
	for (;;) {
		int victim = -1, got;

		for (int i = 0; i < d->n; i++) {
			if (from && !gdx_door_addr_same(&d->held[i]->from, from))
				continue;
			if (victim < 0 || d->held[i]->seq < d->held[victim]->seq)
				victim = i;
		}
		if (victim < 0)
			return false;
		got = gdx_door_read(d, victim);
		if (got == GDX_DOOR_WAIT) {
			gdx_door_shed(d, victim, GDX_DOOR_BUSY);
			return true;
		}
		if (got == GDX_DOOR_GONE)
			return true; /* refused on its own: room made */
		/* its hello had come and was kept: it still counts, look again */
	}
}

/* A new connection on fd, or NULL (it is closed) when it cannot be held. */
static struct gdx_door_conn *gdx_door_conn_new(struct gdx_door *d, int fd, uint64_t now_ms)
{
	struct gdx_door_conn *c = calloc(1, sizeof(*c));
	struct gdx_xfer out;

	if (!c) {
		close(fd);
		return NULL;
	}
	c->fd = fd;
	c->seq = d->taken++;
	c->taken_ms = now_ms;
	c->hello_deadline_ms = now_ms + (uint64_t)d->ops.hello_ms;
	c->from.len = sizeof(c->from.u);
	if (getpeername(fd, &c->from.u.sa, &c->from.len))
		c->from.u.sa.sa_family = AF_UNSPEC;
	gdx_sock_addr_str(&c->from, c->peer, sizeof(c->peer));
	c->xfer = (struct gdx_xfer){c->hello, d->ops.hello_len, 0};
	if (d->ops.greet && d->ops.greet(d->ops.arg, c))
		goto err;
	/* a fresh socket's buffer takes a greeting this small whole */
	out = (struct gdx_xfer){c->greeting, c->greeting_len, 0};
	if (c->greeting_len && gdx_sock_send_some(fd, &out))
		goto err;
	return c;

err:
	close(fd);
	free(c);
	return NULL;
}

int gdx_door_take(struct gdx_door *d, int *budget, uint64_t now_ms)
{
	while (*budget > 0) {
		struct gdx_door_conn *c;
		int fd, ret;

		if (d->n + d->kept >= d->ops.max_held && !d->n)
			return 1; /* every one held was kept: the rest wait */
		ret = gdx_sock_accept(d->lfd, &fd);
		if (ret)
			return ret == -EAGAIN ? 0 : ret;
		(*budget)--;
		c = gdx_door_conn_new(d, fd, now_ms);
		if (!c)
			continue;
		if (d->n + d->kept >= d->ops.max_held && !gdx_door_shed_oldest(d, NULL)) {
			/* those held were kept meanwhile, and there is no room:
			 * this one is refused and closed, never held */
			if (d->ops.refuse)
				d->ops.refuse(d->ops.arg, c->fd, GDX_DOOR_BUSY);
			d->shed.full++;
			snprintf(d->shed.full_last, sizeof(d->shed.full_last), "%s", c->peer);
			close(c->fd);
			free(c);
			continue;
		}
		d->held[d->n++] = c;
		if (gdx_door_from(d, &c->from) > d->ops.max_per_addr)
			gdx_door_shed_oldest(d, &c->from);
	}
	return 1;
}

void gdx_door_sweep(struct gdx_door *d, uint64_t now_ms)
{
	for (int i = 0; i < d->n; i++) {
		if (gdx_door_read(d, i) != GDX_DOOR_WAIT)
			i--; /* the last took its place */
		else if (now_ms > d->held[i]->hello_deadline_ms)
			gdx_door_shed(d, i--, GDX_DOOR_SILENT);
	}
}

void gdx_door_release(struct gdx_door *d)
{
	if (d->kept > 0)
		d->kept--;
}

bool gdx_door_tell(struct gdx_door *d, uint64_t now_ms, bool closing, struct gdx_door_shed *s)
{
	if (!d->shed.silent && !d->shed.busy && !d->shed.full)
		return false;
	if (!closing && d->told && now_ms < d->told_ms + GDX_DOOR_TELL_MS)
		return false;
	*s = d->shed;
	memset(&d->shed, 0, sizeof(d->shed));
	d->told = true;
	d->told_ms = now_ms;
	return true;
}

int gdx_door_pollfds(const struct gdx_door *d, struct pollfd *p)
{
	p[0] = (struct pollfd){.fd = d->lfd, .events = POLLIN};
	for (int i = 0; i < d->n; i++)
		p[1 + i] = (struct pollfd){.fd = d->held[i]->fd, .events = POLLIN};
	return 1 + d->n;
}

void gdx_door_close(struct gdx_door *d)
{
	while (d->n)
		gdx_door_forget(d, d->n - 1, true);
}
