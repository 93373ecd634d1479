/* SPDX-License-Identifier: MIT */
/*
 * The layout of the live counter files (gdx_live.h), which the plugin writes
 * and gdx-doctor reads. Live counters, readable from outside the process: each
 * process that loads the plugin keeps one shared-memory file,
 * $NCCL_GDX_LIVE_DIR/nccl-net-gdx-UID/nccl-net-gdx.PID.PIDNS.RANDOM (/dev/shm
 * by default; NCCL_GDX_LIVE=0: none), in a directory of its user's that no
 * other user can enter (0700), under a name no one can guess (RANDOM) that
 * processes of two pid namespaces never share (PIDNS, the namespace's inode),
 * which gdx-doctor top and hang read. The data path writes its comm's slot
 * with plain stores (one thread drives a comm), never a lock or a system
 * call; what needs a clock is written where a comm already reads one, while
 * it waits (gdx_live_tick). The process holds a lock on its file for as long
 * as it lives; the file goes at finalize or unload, and a later load of the
 * same user removes those whose lock is free (their process ended).
 *
 * The layout is versioned (GDX_LIVE_LAYOUT): a reader refuses another. All
 * times are CLOCK_MONOTONIC_COARSE milliseconds (gdx_now_ms), which a reader
 * on the same machine compares with its own clock.
 */
#ifndef GDX_LIVE_LAYOUT_H
#define GDX_LIVE_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#define GDX_LIVE_MAGIC	  "gdxlive"
#define GDX_LIVE_LAYOUT	  1
#define GDX_LIVE_PREFIX	  "nccl-net-gdx." /* + PID.PIDNS.RANDOM */
#define GDX_LIVE_USER_DIR "nccl-net-gdx-" /* + the uid */
#define GDX_LIVE_NAME_MAX 72		  /* a file's name, with its terminator */
#define GDX_LIVE_COMMS	  1024		  /* slots; comms past them are counted, not shown */
#define GDX_LIVE_RAILS	  8

/* What a comm waits for, as its last tick saw it. */
enum gdx_live_wait {
	GDX_LIVE_IDLE = 0,	  /* nothing outstanding */
	GDX_LIVE_WAIT_CTS,	  /* send: a send waits for the receiver's clear-to-send */
	GDX_LIVE_WAIT_COMPLETION, /* send: posted, its completion not yet seen */
	GDX_LIVE_WAIT_DATA,	  /* receive: clear-to-send out, the data not arrived */
	GDX_LIVE_PEER_CLOSED,	  /* the peer closed or its process went */
	GDX_LIVE_FAILED,	  /* the comm failed (err) */
};

enum { GDX_LIVE_FREE = 0, GDX_LIVE_SEND = 1, GDX_LIVE_RECV = 2 };

/* A store of the data path into a live slot. Built with -DGDX_LIVE_OFF the
 * data path has none: what scripts/cpu-cost.sh compares them against. */
#ifndef GDX_LIVE_OFF
#define GDX_LIVE_COUNT(stmt) \
	do {                 \
		stmt;        \
	} while (0)
#else
#define GDX_LIVE_COUNT(stmt) \
	do {                 \
	} while (0)
#endif

struct gdx_live_rail {
	char ibdev[32];
	uint32_t port;
	uint32_t state;	    /* enum gdx_rail_state */
	uint64_t since_ms;  /* when it entered that state */
	uint64_t downs;	    /* times taken out */
	uint64_t tx_bytes;  /* send: bytes posted on it */
	uint64_t rx_pieces; /* receive: immediates taken on it */
};

struct gdx_live_comm {
	uint32_t role; /* GDX_LIVE_FREE, _SEND, _RECV; written last at claim */
	uint32_t gen;  /* one more at each claim and release: a reader rereads it */
	char dev[64];  /* the plugin device (fused: "rxe0+rxe2") */
	char peer[64]; /* the peer's out-of-band address */
	char peer_dev[64];
	uint32_t nrails;
	int32_t err; /* the comm's sticky error, 0 while it works */
	uint64_t opened_ms;
	/* the data path's */
	uint64_t msgs;	     /* requests completed */
	uint64_t bytes_gpu;  /* of those, bytes in GPU memory (GPU-direct) */
	uint64_t bytes_host; /* and in host memory (staged, or a host buffer) */
	uint32_t outstanding;
	uint32_t want_cts; /* send: NCCL asked to send and no clear-to-send was there */
	/* the ticks': the last one, and since when msgs has not moved while
	 * something was outstanding */
	uint64_t tick_ms;
	uint64_t tick_msgs;
	uint64_t stall_ms;
	uint32_t wait; /* enum gdx_live_wait */
	uint32_t pad;
	struct gdx_live_rail rails[GDX_LIVE_RAILS];
};

struct gdx_live_hdr {
	char magic[8];
	uint32_t layout;
	uint32_t size; /* of the whole file */
	int32_t pid;
	uint32_t ncomms;     /* slots */
	uint64_t proc_start; /* /proc/PID/stat's start time: tells a reused pid */
	uint64_t created_ms;
	char version[24];   /* the plugin's */
	char cmd[64];	    /* the process's command line, for a person */
	uint64_t untracked; /* comms opened while every slot was taken */
	/* what comms that closed had moved, so that totals never go back */
	uint64_t closed_msgs, closed_bytes_gpu, closed_bytes_host;
};

struct gdx_live {
	struct gdx_live_hdr hdr;
	struct gdx_live_comm comms[GDX_LIVE_COMMS];
};

#endif
