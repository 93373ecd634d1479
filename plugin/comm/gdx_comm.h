/* SPDX-License-Identifier: MIT */
/*
 * The core objects behind NCCL's opaque pointers: listen, send and receive
 * comms, requests and memory handles, shared by the files that make and
 * use them (`git grep -l gdx_comm.h plugin`: the connection setup, the data
 * path, the completion handling and what they call; each declares its
 * functions in its own header). One comm is only ever driven by one thread
 * at a time (NCCL's contract), so the data path takes no lock.
 */
#ifndef GDX_COMM_H
#define GDX_COMM_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nccl/net_common.h>
#include "dev/gdx_dev.h"
#include <gdx/gdx_live_layout.h>
#include "dev/gdx_regcache.h"
#include "sys/gdx_door.h"
#include "sys/gdx_sock.h"
#include "dev/gdx_verbs.h"
#include "wire/gdx_wire.h"

/* Largest message, maxP2pBytes: test reports a message's size in an int
 * (every API version), so INT_MAX bytes. 0.4.0 took 2 GiB, which test
 * reported as INT_MIN. */
#define GDX_MAX_MESSAGE ((unsigned long long)INT_MAX)

#define GDX_MAX_REQUESTS NCCL_NET_MAX_REQUESTS
/* A send comm takes NCCL_NET_MAX_REQUESTS x maxRecvs requests (NCCL's rule). */
#define GDX_MAX_SEND_REQUESTS (GDX_MAX_REQUESTS * GDX_MAX_RECVS)
/* FIFO entries: one slot of GDX_MAX_RECVS entries per receive in flight. */
#define GDX_FIFO_ENTRIES (GDX_MAX_REQUESTS * GDX_MAX_RECVS)
/* The FIFO is stored entry-major: entry i of slot s at GDX_FIFO_INDEX(s, i).
 * The first entries of consecutive slots are then adjacent, and one RDMA
 * WRITE of a packet or less carries a batch of single-buffer clear-to-sends. */
#define GDX_FIFO_INDEX(s, i) ((uint32_t)(i)*GDX_MAX_REQUESTS + (uint32_t)(s))
/* Incoming handshakes a listener holds at once, and of those the ones that
 * have not sent their whole hello from one address: over either bound the
 * oldest of those is closed, unread (sys/gdx_door.h). */
#define GDX_MAX_PENDING_ACCEPTS	  64
#define GDX_MAX_UNPROVEN_PER_ADDR 16

/*
 * Queue depths, from what a comm has in flight. A send comm's send queue
 * takes a WR per isend piece and a group's sizes write per receive (a piece
 * larger than the port's max_msg_sz takes a WR per part): sends wait for
 * room, so the depth bounds only how many are in flight at once. A receive
 * comm's send queue carries only clear-to-send and note writes, which wait
 * for room too; its receive queue, one WR per immediate that can be on its
 * way to the QP, plus a repost batch. A send comm receives nothing.
 */
#define GDX_SIGNAL_EVERY 16
#define GDX_RECV_BATCH	 16
/* Providers round a queue up to a power of two slots, one kept empty: 127
 * takes 128. NCCL's proxy keeps at most NCCL_STEPS (8) sends of a rank in
 * flight, and PXN shares a send comm among at most 8 local ranks: 64 data
 * WRs, their groups' 8 sizes writes, and the unsignaled ones not yet given
 * back fit; more (a driver with 256 grouped sends in flight) wait for room. */
#define GDX_SEND_SQ 127
#define GDX_RECV_SQ 63

/* Receives posted ahead on each QP of a receive comm: each of its 32
 * receives can have a piece on its way to every QP, and once a rail fails
 * its pieces go to the others, so that with n rails a QP may take n. */
static inline uint32_t gdx_recvs_ahead(int nrails)
{
	return GDX_MAX_REQUESTS * (uint32_t)nrails + GDX_RECV_BATCH;
}

/*
 * What one end says to the other about a rail, written by RDMA into the
 * other's control region on a rail that works, so that a rail can be taken
 * out and brought back whatever the out-of-band network does. Each end keeps
 * one note per rail, rewritten whole on every change; epoch counts the
 * changes and stamp, the last field, repeats it: a note is read once its
 * stamp equals its epoch, and acted on once per epoch (gdx_failover.c).
 */
enum gdx_note_kind {
	GDX_NOTE_NONE = 0,
	GDX_NOTE_DOWN,	  /* the rail is out; from the receiver, with its counts */
	GDX_NOTE_RESTORE, /* sender: my QPs are reset, here is my PSN and GID */
	GDX_NOTE_READY,	  /* receiver: mine are at RTS towards yours */
	GDX_NOTE_REFUSE,  /* receiver: not now (my port is down) */
};
#define GDX_NOTE_PORT_DOWN (1u << 31)
/* QPs per rail a note counts: a rail is taken out only where there are two
 * or more, so at most GDX_MAX_QPS / 2 each. */
#define GDX_NOTE_COUNTS (GDX_MAX_QPS / 2)

struct gdx_note {
	uint32_t epoch;
	uint32_t kind;
	uint32_t answers; /* READY and REFUSE: the epoch of the RESTORE they answer,
			   * with GDX_NOTE_PORT_DOWN when the refusal is for that;
			   * DOWN: the rail's incarnation (gdx_rail_run) */
	uint32_t psn;
	uint8_t gid[16];
	char why[80]; /* DOWN: what the writer saw, for the other end's log */
	/* DOWN from the receiver: the immediates each QP of the rail took since
	 * it last started, after it stopped taking any. Per QP, as RC orders
	 * only within one: the n-th immediate on a QP says everything posted
	 * on it before was placed, which the sender matches to its log
	 * (gdx_seglog_entry.imm_ord, counted from the QP's start too). */
	uint32_t counts[GDX_NOTE_COUNTS];
	uint32_t reserved;
	uint32_t stamp;
};

#ifdef GDX_DEBUG
/* Debug builds only (gdx_req.h): what a piece's bytes hold, written by the
 * sender on the piece's QP just before its immediate, so that the receiver
 * checks, as the immediate arrives, that the bytes are in its buffer. */
struct gdx_dbg_piece {
	uint64_t seq;	   /* the message's sequence number + 1; 0: never written */
	uint64_t off, len; /* in the receive's buffer (grouped: buffer i's whole) */
	uint64_t sum;	   /* gdx_req_sum of those bytes, as the sender posted them */
	uint16_t rail, q;  /* the QP the bytes and the immediate go on */
	uint32_t reserved;
};
#endif

/* What the peer writes into a comm, at the offsets its writes name (the wire's
 * layout: the peer adds them to the ctrl_addr of the handshake). Registered
 * remote-writable on every NIC of the device, each kind only over the part
 * its peer writes (gdx_ctrl_span): a send comm's FIFO, which the receiver's
 * clear-to-sends fill, and its notes; a receive comm's records of a slot's
 * sizes ([slot][buffer]; a single receive's size in the first two words),
 * its notes, and in debug builds each piece's record ([slot][piece], or
 * [slot][buffer] for a group; only where both ends are debug builds,
 * GDX_META_F_RECORDS). Nothing the receiver trusts is kept here: what it
 * reads back is checked against its own copy. */
struct gdx_ctrl {
	struct gdx_cts fifo[GDX_FIFO_ENTRIES];
	uint32_t sizes[GDX_MAX_REQUESTS][GDX_MAX_RECVS];
	struct gdx_note notes_in[GDX_MAX_RAILS];
#ifdef GDX_DEBUG
	struct gdx_dbg_piece dbg[GDX_MAX_REQUESTS][GDX_IMM_MAX_PIECES];
#endif
};

/* What a comm writes from into the peer's gdx_ctrl, laid out as it: a
 * receive comm's clear-to-sends, a send comm's size records (and debug
 * records), either's notes. Registered for local access only, so that no
 * peer can change what this end staged, and reads back (gdx_cts.c). */
struct gdx_stage {
	struct gdx_cts fifo[GDX_FIFO_ENTRIES];
	uint32_t sizes[GDX_MAX_REQUESTS][GDX_MAX_RECVS];
	struct gdx_note notes_out[GDX_MAX_RAILS];
#ifdef GDX_DEBUG
	struct gdx_dbg_piece dbg[GDX_MAX_REQUESTS][GDX_IMM_MAX_PIECES];
#endif
};

/* Where a rail of a comm stands (gdx_failover.c). */
enum gdx_rail_state {
	GDX_RAIL_UP = 0,    /* carries traffic */
	GDX_RAIL_DRAINING,  /* taken out, QPs in error: the receiver counts what had
			     * arrived, the sender waits for those counts (it
			     * cannot tell alone: a piece may have landed with
			     * no completion to say so) */
	GDX_RAIL_DOWN,	    /* out, nothing of it outstanding: to be restored */
	GDX_RAIL_RESTORING, /* sender: asked the receiver to restore it */
	GDX_RAIL_PROBING,   /* sender: restored; probes check the path */
};

struct gdx_rail_run {
	enum gdx_rail_state state;
	int speed_mbps;		/* its port's, as its rate last followed it (gdx_event.c) */
	uint64_t since_ms;	/* when it entered the state */
	uint64_t deadline_ms;	/* DRAINING, RESTORING, PROBING: when to move on */
	uint64_t renote_ms;	/* sender, DRAINING: when to ask for the counts again */
	uint64_t down_ms;	/* when it was last taken out */
	uint32_t backoff_ms;	/* DOWN: wait before the next restore attempt */
	uint32_t attempts;	/* restore attempts since it went down */
	uint32_t failed;	/* sender: of those, failed ones NCCL_GDX_RECOVERY_ATTEMPTS
				 * counts (not those the peer's port refused) */
	bool gave_up;		/* sender: it stays out until the comm closes */
	uint32_t downs;		/* times taken out */
	uint32_t my_epoch;	/* of our note about it */
	uint32_t peer_epoch;	/* of the peer's last note acted on */
	uint32_t probes;	/* PROBING: probes not yet completed */
	uint32_t incarnation;	/* of its QPs: the epoch of the sender's RESTORE that
				 * started them, 0 for the first. Not gdx_rail.gen:
				 * each end counts its own resets, and a refused
				 * restore resets the sender's QPs alone */
	bool cq_idle;		/* receiver, DRAINING: the last poll emptied its CQ */
	uint32_t drain_imms;	/* receiver, DRAINING: immediates taken meanwhile */
	uint64_t drain_last_ms; /* and when the last came (for the INFO line) */
	bool note_due;		/* our note about it is still to be written */
	/* That note, as set; it goes into the control region (notes_out) only
	 * once the NIC has read the last write of what is there: a write being
	 * sent, or sent again after a loss, reads the region as it is then,
	 * and a note rewritten under it would arrive half old, half new, with
	 * a stamp that says it is whole. The last write: its rail + 1 (0:
	 * none), that rail's incarnation and its WR count there. */
	struct gdx_note note_next;
	uint8_t note_lane;
	uint16_t note_gen;
	uint32_t note_wr;
	bool unproven; /* receiver: restored, and nothing has come by it yet:
			* control writes avoid it until something does */
	/* A restore's verbs calls, in a thread of their own: taking a RoCE QP
	 * to RTR resolves the peer's address, which after a link flap can
	 * block for a second (gdx_failover.c). */
	pthread_t bg;
	int bg_busy;	     /* the thread runs (atomic) */
	int bg_result;	     /* its result once it is done: 0 or -errno */
	bool bg_joinable;    /* a thread was started and not yet joined */
	uint32_t bg_answers; /* receiver: the RESTORE it works on */
	struct gdx_comm *bg_comm;
	char why[80]; /* why it went down */
	/* striping (gdx_stripe.c): what it delivers, in bytes per ms of the
	 * time it had bytes in flight (idle time does not make it look slow),
	 * over windows of that time */
	double rate;
	uint64_t inflight;   /* bytes posted and not yet known delivered */
	uint64_t busy_since; /* ms; when inflight last went above 0 */
	uint64_t busy_ms;    /* of the current window */
	uint64_t win_bytes;  /* delivered in the current window */
	uint32_t samples;    /* windows measured: the first replaces the port's speed */
};

/* First word of every object handed to NCCL: tells a wrong or freed pointer. */
enum gdx_kind {
	GDX_KIND_LISTEN = 0x4c495354, /* "LIST" */
	GDX_KIND_SEND = 0x53454e44,   /* "SEND" */
	GDX_KIND_RECV = 0x52454356,   /* "RECV" */
	GDX_KIND_MR = 0x4d524d52,     /* "MRMR" */
	GDX_KIND_CTX = 0x43545854,    /* "CTXT" */
	GDX_KIND_DEAD = 0x44454144,   /* "DEAD": closed */
};

/* The part of a comm's gdx_ctrl that its peer writes, [*off, *off + *len):
 * the only part registered remote-writable (gdx_setup.c). A send comm's
 * sizes, between its FIFO and its notes, are never read. */
static inline void gdx_ctrl_span(uint32_t kind, size_t *off, size_t *len)
{
	size_t end = sizeof(struct gdx_ctrl);

	if (kind == GDX_KIND_SEND) {
		*off = offsetof(struct gdx_ctrl, fifo);
		end = offsetof(struct gdx_ctrl, notes_in) +
		      sizeof(((struct gdx_ctrl *)0)->notes_in);
	} else {
		*off = offsetof(struct gdx_ctrl, sizes);
	}
	*len = end - *off;
}

/* Profiler events one request holds at most: a QP piece or a buffer each,
 * as many as net_ib's (MAX_QPS_PER_REQ). */
#define GDX_PROF_MAX_EVENTS 8

enum gdx_req_state {
	GDX_REQ_FREE = 0,
	GDX_REQ_ACTIVE,
};

struct gdx_comm;

/* What one NCCL communicator owns (v11+: init returns one per communicator;
 * older versions use none, and their comms belong to the process). */
struct gdx_ctx {
	uint32_t kind;
	uint64_t comm_id;
	int tc; /* traffic class from NCCL's config; -1: NCCL_GDX_TC */
};

struct gdx_request {
	struct gdx_comm *comm;
	enum gdx_req_state state;
	bool is_send;
	int pending;		       /* completions still to come, over all rails */
	int err;		       /* first error of this request */
	uint64_t size;		       /* send: bytes; receive: bytes arrived (n == 1) */
	uint64_t posted;	       /* receive: size of the (first) posted buffer */
	int n;			       /* receive: buffers of a grouped receive */
	uint32_t sizes[GDX_MAX_RECVS]; /* receive: bytes arrived per buffer (n > 1) */
	/* receive: each buffer's size as posted (n > 1), our own copy: what the
	 * sender claims is checked against it, never against what sits where a
	 * peer can write */
	uint64_t posted_n[GDX_MAX_RECVS];
	bool gpu;     /* GPU memory: counted as GPU-direct bytes */
	bool flush;   /* an iflush: completes on the flush QPs */
	uint64_t seq; /* receive: its clear-to-send's sequence number */
	/* receive: the pieces its sender cut the message into (0 before the
	 * first arrives), how many arrived, and which (each counts once) */
	uint32_t pieces, arrived;
	uint64_t seen[GDX_IMM_MAX_PIECES / 64];
	bool small; /* receive: size came in a small immediate */
	/* NCCL's profiler (gdx_prof.h): the events started for the request and
	 * not yet stopped (0 on a free request), and the handle NCCL gave an
	 * isend into a grouped receive, kept until its bytes go */
	uint8_t prof_n;
	void *prof_phandle;
	void *prof_ev[GDX_PROF_MAX_EVENTS];
	/* Debug builds only (gdx_req.h): the WRs posted for it and those done,
	 * the modes it went by, and a send's buffer. */
	uint32_t dbg_wrs, dbg_wrs_done, dbg_mode;
	const void *dbg_buf;
	uint64_t dbg_len;
};

/* Base of the send and receive comms. */
struct gdx_comm {
	uint32_t kind;
	int dev_index;
	char dev_name[GDX_VDEV_NAME_MAX]; /* its device's, for messages */
	struct gdx_ctx *ctx;		  /* owner, or NULL */
	int tc;				  /* NCCL's traffic class for the connection; -1 none */
	/* One rail per NIC of the larger end's device, as net_ib makes
	 * max(local, remote) QPs: rails[i] is on this end's NIC i % nmembers,
	 * with qps_per_rail QPs each (qps, rail-major). */
	int nmembers;
	int nrails;
	int qps_per_rail;
	struct gdx_rail rails[GDX_MAX_RAILS];
	struct gdx_qp *qps;
	struct gdx_rail_run run[GDX_MAX_RAILS];
	int nlive;	      /* rails UP */
	uint32_t standby;     /* rails on a far NIC of the device (gdx_vdev.far): while a
			       * rail not among them is up, no data goes on them */
	bool handed;	      /* given to NCCL: its NICs' summaries count it (gdx_setup.c) */
	bool failover;	      /* a failed rail is taken out (two or more, NCCL_GDX_FAILOVER) */
	bool ar;	      /* sender: adaptive routing on every rail */
	bool split;	      /* sender: each piece of a rail over all its QPs */
	bool timed;	      /* its signaled sends' latencies go to live (gdx_post.c) */
	uint32_t max_inline;  /* bytes every rail takes inline (the least of them) */
	uint64_t remote_ctrl; /* the peer's control region */
#ifdef GDX_DEBUG
	bool dbg_records; /* both ends are debug builds: pieces carry records (gdx_req.h) */
#endif
	uint32_t remote_ctrl_rkey[GDX_MAX_RAILS]; /* its key on each rail's NIC */
	/* The peer's rails and QPs, to connect to again when a rail is restored. */
	struct gdx_wire_rail remote_rails[GDX_MAX_RAILS];
	uint32_t remote_qpn[GDX_MAX_QPS];
	uint32_t async_failed;	/* rails an async event put in error (gdx_event.c) */
	uint32_t fo_polls;	/* polls since the failover checks last ran */
	uint64_t fo_check_ms;	/* when the async events were last read for it */
	uint64_t stale_imms;	/* immediates of receives no longer posted, dropped */
	int sock;		/* out-of-band socket, kept open as the liveness signal */
	int err;		/* sticky: once set, every call fails with it */
	uint32_t qp_dumped;	/* rails whose QPs' lines were written (gdx_qpstat_dump) */
	uint32_t idle_polls;	/* polls without progress */
	uint64_t last_check_ms; /* last look at the peer's out-of-band socket */
	uint32_t next_req;	/* where the search for a free request starts */
	int max_reqs; /* 2 x GDX_MAX_REQUESTS (flushes too), GDX_MAX_SEND_REQUESTS to send */
	int active;   /* requests in flight */
	struct gdx_request *reqs;		/* max_reqs */
	struct gdx_ctrl *ctrl;			/* the peer writes it */
	struct ibv_mr *ctrl_mr[GDX_MAX_RAILS];	/* per NIC of the device */
	struct gdx_stage *stage;		/* we write from it */
	struct ibv_mr *stage_mr[GDX_MAX_RAILS]; /* per NIC, local access only */
	char peer[64];				/* peer's out-of-band address, for messages */
	char peer_dev[GDX_DEV_NAME_MAX];
	/* Its live counters (gdx_live.h): a slot of the process's file, or
	 * live_own when there is none; never NULL once initialised. */
	struct gdx_live_comm *live;
	struct gdx_live_comm live_own;
};

/* A send comm's FIFO is base.ctrl->fifo, a slot's sizes go out from
 * base.stage->sizes into the receiver's. */
struct gdx_send_comm {
	struct gdx_comm base;
	uint64_t head; /* sequence number of the slot being matched */
	/* The head slot's entries matched by an isend so far (grouped receives
	 * are sent once every entry has its isend). */
	struct gdx_request *matched[GDX_MAX_RECVS];
	void *matched_data[GDX_MAX_RECVS];
	struct gdx_mr *matched_mr[GDX_MAX_RECVS];
	int nmatched;
};

/* A receive comm stages its clear-to-sends in base.stage->fifo, laid out as
 * the sender's FIFO, and takes slots' sizes in base.ctrl->sizes. */
struct gdx_recv_comm {
	struct gdx_comm base;
	uint64_t tail;		  /* sequence number of the next receive */
	uint64_t cts_sent;	  /* receives before this one have their clear-to-send out */
	uint32_t cts_outstanding; /* of those, receives not yet complete */
	bool cts_stalled;	  /* a flush stopped for want of send queue room */
	bool cts_flush_due; /* a poll found them due: held, stalled, a rewrite (gdx_cts_progress) */
	bool cts_rewrite;   /* a rail was taken out: write them again (gdx_cts_rewrite) */
	uint32_t cts_groups; /* grouped receives staged and not yet written: a flush
			      * writes more than the first entry of each slot */
	/* The receive in flight in each slot (sequence % 32), NULL once it is
	 * complete: irecv stages a slot again only then. */
	struct gdx_request *slots[GDX_MAX_REQUESTS];
	/* A rewrite of a slot's clear-to-send (gdx_cts_rewrite) the NIC may not
	 * have read yet: its rail + 1 (0: none), that rail's incarnation, and
	 * its WR count there. The slot is not staged again before it is read. */
	uint8_t rewrite_rail[GDX_MAX_REQUESTS];
	uint16_t rewrite_gen[GDX_MAX_REQUESTS];
	uint32_t rewrite_wr[GDX_MAX_REQUESTS];
	int recvs_active; /* receives in flight: NCCL allows 32 (flushes aside) */
	/* GPU flush: a QP per NIC connected to itself, and a byte to read into;
	 * made when GPU memory is first registered on the comm (gdx_flush.h). */
	int nflush;
	uint32_t flushes_out; /* flush reads posted and not yet back */
	struct gdx_rail flush[GDX_MAX_RAILS];
	struct gdx_qp flush_qp[GDX_MAX_RAILS];
	char *flush_byte;
	struct ibv_mr *flush_mr[GDX_MAX_RAILS];
};

/* A registration on every NIC of a comm's device, indexed as its members. */
struct gdx_mr {
	uint32_t kind;
	int nmembers;
	struct gdx_regcache *caches[GDX_MAX_RAILS];	   /* each NIC's */
	struct gdx_regcache_entry *entries[GDX_MAX_RAILS]; /* taken from those */
	uint32_t lkey[GDX_MAX_RAILS];
	uint32_t rkey[GDX_MAX_RAILS];
	uintptr_t addr;
	uint64_t size;
	int type; /* NCCL_PTR_HOST or NCCL_PTR_CUDA */
};

/* One incoming out-of-band connection being handshaken (gdx_listen.c). */
struct gdx_accept;

struct gdx_listen_comm {
	uint32_t kind;
	int dev_index;
	struct gdx_ctx *ctx; /* owner, or NULL; receive comms inherit it */
	int fd;
	uint64_t nonce;
	bool accept_warned; /* accept(2) failed for another reason than none waiting */
	/* Connections until their hello has shown the nonce (sys/gdx_door.h):
	 * silent ones are closed unread, and told in one line at most a second. */
	struct gdx_door door;
	int npending; /* handshakes past the hello: the door's kept ones */
	struct gdx_accept *pending[GDX_MAX_PENDING_ACCEPTS];
};

/* The receive comm behind a comm known to be one (kind GDX_KIND_RECV). */
static inline struct gdx_recv_comm *gdx_recv_comm_of(struct gdx_comm *c)
{
	return (struct gdx_recv_comm *)((char *)c - offsetof(struct gdx_recv_comm, base));
}

/* The comm fails with err, unless it already has: the first error stays.
 * Here, beside the comm, as every layer above fails one. */
static inline void gdx_comm_fail(struct gdx_comm *c, int err)
{
	if (!c->err)
		c->err = err;
}

/* Debug builds (GDX_DEBUG, gdx_req.h): what a request's work requests did,
 * counted where they are posted and completed. The ways its bytes went, for
 * the invariant's message: */
enum {
	GDX_REQ_CHUNKED = 1u << 0, /* pieces named in the immediate, size in the record */
	GDX_REQ_AR = 1u << 1,	   /* adaptive routing: bulk WRITEs, then the immediate */
	GDX_REQ_QPS = 1u << 2,	   /* split over several QPs of a rail */
	GDX_REQ_STRIPED = 1u << 3, /* over several rails */
	GDX_REQ_GROUPED = 1u << 4, /* a buffer of a grouped receive */
	GDX_REQ_RESENT = 1u << 5,  /* a piece posted again after its rail failed */
	GDX_REQ_INLINE = 1u << 6,  /* every byte inline: done when posted */
	GDX_REQ_FLUSH = 1u << 7,   /* an iflush's reads */
};

#ifdef GDX_DEBUG
static inline void gdx_req_wrs_posted(struct gdx_request *r, uint32_t n)
{
	r->dbg_wrs += n;
}
static inline void gdx_req_wrs_done(struct gdx_request *r, uint32_t n)
{
	r->dbg_wrs_done += n;
}
static inline void gdx_req_mode(struct gdx_request *r, uint32_t mode)
{
	r->dbg_mode |= mode;
}
/* The send's buffer, which no WR may read once it completes. */
static inline void gdx_req_buffer(struct gdx_request *r, const void *data, uint64_t size)
{
	r->dbg_buf = data;
	r->dbg_len = size;
}
#else
static inline void gdx_req_wrs_posted(struct gdx_request *r, uint32_t n)
{
	(void)r;
	(void)n;
}
static inline void gdx_req_wrs_done(struct gdx_request *r, uint32_t n)
{
	(void)r;
	(void)n;
}
static inline void gdx_req_mode(struct gdx_request *r, uint32_t mode)
{
	(void)r;
	(void)mode;
}
static inline void gdx_req_buffer(struct gdx_request *r, const void *data, uint64_t size)
{
	(void)r;
	(void)data;
	(void)size;
}
#endif

#endif
