/* SPDX-License-Identifier: MIT */
/*
 * The door (gdx_door.c): how every listening socket of the plugin and its
 * tools takes its connections. A connection is anybody's until its hello
 * (fixed-size, the connector's first bytes) is whole; the door holds such
 * unproven connections in a bounded set, reads their hellos side by side,
 * and hands each whole one to the owner's check, which keeps it or refuses
 * it. One that sends nothing by the hello deadline, or the oldest over a
 * bound (per address, in all), is closed unread: no silent or slow
 * connection holds up another. A server that speaks first (a challenge)
 * gives its greeting, written as each connection is taken.
 *
 * Nothing here blocks or logs; the owner polls (gdx_door_pollfds), calls
 * take and sweep, and says what was shed (gdx_door_tell) in its own words.
 */
#ifndef GDX_DOOR_H
#define GDX_DOOR_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/gdx_sock.h"

#define GDX_DOOR_MAX	      64 /* connections a door holds unproven, at most */
#define GDX_DOOR_HELLO_MAX    64 /* the largest hello a door reads */
#define GDX_DOOR_GREETING_MAX 32 /* the largest greeting it writes */
/* Its shed lines: at once the first time, then at most this often. */
#define GDX_DOOR_TELL_MS 1000

/* Why a connection was closed unread. */
enum gdx_door_why {
	GDX_DOOR_SILENT, /* no whole hello by the deadline */
	GDX_DOOR_BUSY,	 /* the oldest over a bound, or the newest when none could go */
};

/* One connection taken, its hello not yet whole. */
struct gdx_door_conn {
	int fd;
	uint64_t seq;		    /* its place in the order connections were taken */
	uint64_t taken_ms;	    /* when */
	uint64_t hello_deadline_ms; /* its whole hello by then, or closed unread */
	struct gdx_sockaddr from;
	char peer[64];
	struct gdx_xfer xfer; /* the hello, as far as it came */
	uint8_t hello[GDX_DOOR_HELLO_MAX];
	uint8_t greeting[GDX_DOOR_GREETING_MAX]; /* what the door said first */
	size_t greeting_len;
};

struct gdx_door_ops {
	size_t hello_len;
	int hello_ms;	  /* the hello deadline */
	int max_held;	  /* unproven and kept (below) together, at most GDX_DOOR_MAX */
	int max_per_addr; /* unproven from one address */
	/* Optional: fills c->greeting and c->greeting_len, written as c is
	 * taken; nonzero closes c at once. */
	int (*greet)(void *arg, struct gdx_door_conn *c);
	/* c's hello is whole: 0 when the owner keeps c (its fd is the
	 * owner's then), else c is closed (the owner told it why, if at all). */
	int (*check)(void *arg, struct gdx_door_conn *c);
	/* Optional: tells a connection about to be shed why. */
	void (*refuse)(void *arg, int fd, enum gdx_door_why why);
	/* Optional: c closed or failed before its hello was whole (err). */
	void (*lost)(void *arg, const struct gdx_door_conn *c, int err);
	void *arg;
};

/* What was closed unread since the last line. */
struct gdx_door_shed {
	uint32_t silent, busy; /* past the deadline; the oldest over a bound */
	uint32_t full;	       /* the newest, while every one held was kept */
	char last[64], full_last[64];
};

struct gdx_door {
	int lfd;
	struct gdx_door_ops ops;
	int n; /* unproven, in held */
	struct gdx_door_conn *held[GDX_DOOR_MAX];
	int kept;	/* kept by check, still counted against max_held: the owner's */
	uint64_t taken; /* connections taken from the backlog */
	struct gdx_door_shed shed;
	bool told;
	uint64_t told_ms;
};

void gdx_door_init(struct gdx_door *d, int lfd, const struct gdx_door_ops *ops);
/*
 * Takes connections from lfd's backlog, *budget at most (decremented), making
 * room over the bounds. 1 when some may still wait there (every one held is
 * kept, or the budget is spent), 0 when the backlog is empty, or the
 * negative errno accept(2) failed with.
 */
int gdx_door_take(struct gdx_door *d, int *budget, uint64_t now_ms);
/* Reads what has come of every hello held, checking those now whole, and
 * sheds those past their deadline. */
void gdx_door_sweep(struct gdx_door *d, uint64_t now_ms);
/* A connection check kept no longer counts against max_held. */
void gdx_door_release(struct gdx_door *d);
/* Whether a line about what was shed is due (now, or when closing: what
 * is left); fills *s and starts the count again when it is. */
bool gdx_door_tell(struct gdx_door *d, uint64_t now_ms, bool closing, struct gdx_door_shed *s);
/* The listening socket and every unproven connection, to poll for input;
 * how many were filled (at most 1 + GDX_DOOR_MAX). */
int gdx_door_pollfds(const struct gdx_door *d, struct pollfd *p);
/* Closes every unproven connection (not lfd). */
void gdx_door_close(struct gdx_door *d);

#endif
