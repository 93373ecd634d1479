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
 * The layout is versioned (GDX_LIVE_LAYOUT): a reader refuses another (and
 * says how many it left out). Times are CLOCK_MONOTONIC_COARSE milliseconds
 * (gdx_now_ms), which a reader on the same machine compares with its own
 * clock, except the send latencies: ticks of gdx_stamp, read at post and at
 * completion of a signaled send (the cycle counter on x86: a coarse clock
 * cannot time microseconds, and a fine one can cost a system call).
 */
#ifndef GDX_LIVE_LAYOUT_H
#define GDX_LIVE_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

#define GDX_LIVE_MAGIC	     "gdxlive"
#define GDX_LIVE_LAYOUT	     2
#define GDX_LIVE_PREFIX	     "nccl-net-gdx." /* + PID.PIDNS.RANDOM */
#define GDX_LIVE_USER_DIR    "nccl-net-gdx-" /* + the uid */
#define GDX_LIVE_NAME_MAX    72		     /* a file's name, with its terminator */
#define GDX_LIVE_COMMS	     1024	     /* slots; comms past them are counted, not shown */
#define GDX_LIVE_RAILS	     8
#define GDX_LIVE_LAT_BUCKETS 40 /* log2 of stamp ticks: 2^40 at 3 GHz is 6 minutes */

/* What a comm waits for, as its last tick saw it. */
enum gdx_live_wait {
	GDX_LIVE_IDLE = 0,	  /* nothing outstanding */
	GDX_LIVE_WAIT_CTS,	  /* send: a send waits for the receiver's clear-to-send */
	GDX_LIVE_WAIT_COMPLETION, /* send: posted, its completion not yet seen */
	GDX_LIVE_WAIT_DATA,	  /* receive: clear-to-send out, the data not arrived */
	GDX_LIVE_PEER_CLOSED,	  /* the peer closed or its process went */
	GDX_LIVE_FAILED,	  /* the comm failed (err) */
	GDX_LIVE_WAIT_SIGNAL,	  /* RMA: a signal waits for the puts it covers to be placed
				   * (peer_dev says which) */
};

/* Slot roles. GDX_LIVE_RMA (one-sided RMA's collective comm, one per
 * connect of the RMA tables) came within layout 2: readers that know
 * only send and receive slots skip it, as they skip a slot being claimed.
 * In such a slot dev is the plugin device, addr this rank's out-of-band
 * address, peer "rank R of N"; peer_dev, while a request waits, what the
 * oldest one waits for ("signal +0x40 to rank 2, ctx 0: puts on 2 QP(s)
 * not yet placed"); each rail is a NIC of the device, tx_bytes the bytes
 * put through it, rx_pieces the bytes got through it (RDMA READ); msgs
 * the requests completed, outstanding those in flight. */
enum {
	GDX_LIVE_FREE = 0,
	GDX_LIVE_SEND = 1,
	GDX_LIVE_RECV = 2,
	GDX_LIVE_RMA = 3,
	GDX_LIVE_NIC = 4
};

/* A store of the data path into a live slot. Built with -DGDX_LIVE_OFF the
 * data path has none: what scripts/cpu-cost.sh compares them against. */
#ifndef GDX_LIVE_OFF
#define GDX_LIVE_COUNT(stmt) \
	do {                 \
		stmt;        \
	} while (0)
#else
/* compiled, never run: what it reads stays used */
#define GDX_LIVE_COUNT(stmt)  \
	do {                  \
		if (0) {      \
			stmt; \
		}             \
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
	/* send: each signaled send's time from post to completion, in ticks
	 * of gdx_stamp (hdr.stamp_hz a second): lat[b] counts the times in
	 * [2^b, 2^(b+1)), the last bucket everything longer */
	uint64_t lat_count, lat_sum;
	uint64_t lat[GDX_LIVE_LAT_BUCKETS];
	uint64_t stalls; /* a QP's oldest work request waited past NCCL_GDX_STALL_MS */
};

struct gdx_live_comm {
	uint32_t role; /* GDX_LIVE_FREE, _SEND, _RECV; written last at claim */
	uint32_t gen;  /* one more at each claim and release: a reader rereads it */
	char dev[64];  /* the plugin device (fused: "rxe0+rxe2") */
	char addr[64]; /* this end's out-of-band address (the socket's own) */
	char peer[64]; /* the peer's: addr and peer of one end are peer and addr of the other */
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

/* A NIC port's counters as the kernel keeps them (gdx_qpstat.h): role
 * GDX_LIVE_NIC, one slot per NIC port the process has QPs on, held from
 * its first QP there to finalize. It came within layout 2, in a slot of a
 * comm's size: readers that know only comm slots skip it, as they skip
 * RMA's. Its fields after gen are the plugin's plain stores, read about
 * once a second; a reader may see a read half written (each value whole). */
#define GDX_LIVE_NIC_COUNTERS 64
#define GDX_LIVE_NIC_NAME     40

/* Where a NIC slot's counters come from. */
enum gdx_live_nic_source {
	GDX_LIVE_NIC_NONE = 0, /* none could be read */
	GDX_LIVE_NIC_QP,       /* a kernel counter bound to this process's QPs on the port */
	GDX_LIVE_NIC_PORT,     /* the port's totals, every process's (RDMA netlink) */
	GDX_LIVE_NIC_SYSFS,    /* the port's totals, from sysfs hw_counters */
};

struct gdx_live_nic_counter {
	char name[GDX_LIVE_NIC_NAME]; /* the kernel's ("retry_exceeded_err") */
	uint64_t value;
};

struct gdx_live_nic {
	uint32_t role; /* GDX_LIVE_NIC; as a comm slot's, written last at claim */
	uint32_t gen;
	char ibdev[32];
	uint32_t port;
	uint32_t source;     /* enum gdx_live_nic_source */
	uint32_t counter_id; /* GDX_LIVE_NIC_QP: the kernel's counter (rdma statistic qp) */
	uint32_t qps;	     /* the process's QPs on the port now */
	uint32_t unbound;    /* GDX_LIVE_NIC_QP: of those, QPs the counter does not count */
	uint32_t ncounters;  /* written after their names */
	uint64_t read_ms;    /* when last read (gdx_now_ms) */
	struct gdx_live_nic_counter counters[GDX_LIVE_NIC_COUNTERS];
};

struct gdx_live_hdr {
	char magic[8];
	uint32_t layout;
	uint32_t size; /* of the whole file */
	int32_t pid;
	uint32_t ncomms;     /* slots */
	uint64_t proc_start; /* /proc/PID/stat's start time: tells a reused pid */
	uint64_t created_ms;
	char version[24]; /* the plugin's */
	char cmd[64];	  /* the process's command line, for a person */
	/* who the process is in its job, to match reports of many nodes: its
	 * host, SLURM_JOB_ID, and the first rank variable a launcher set
	 * (rank_var names it; rank -1: none), LOCAL_RANK's kind likewise */
	char host[64];
	char job[32];
	char rank_var[24];
	int32_t rank, local_rank;
	uint64_t stamp_hz;  /* gdx_stamp's ticks a second; 0: not measured */
	uint64_t untracked; /* comms opened while every slot was taken */
	/* what comms that closed had moved, so that totals never go back */
	uint64_t closed_msgs, closed_bytes_gpu, closed_bytes_host;
};

struct gdx_live {
	struct gdx_live_hdr hdr;
	struct gdx_live_comm comms[GDX_LIVE_COMMS];
};

/* A signaled send on rail r took ticks (gdx_stamp) from post to completion:
 * into its histogram, with plain stores (the data path's). */
static inline void gdx_live_latency(struct gdx_live_rail *r, uint64_t ticks)
{
	unsigned b = ticks ? 63u - (unsigned)__builtin_clzll(ticks) : 0;

	r->lat[b < GDX_LIVE_LAT_BUCKETS ? b : GDX_LIVE_LAT_BUCKETS - 1]++;
	r->lat_count++;
	r->lat_sum += ticks;
}

#endif
