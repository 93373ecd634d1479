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
#include "rail/gdx_chan.h"
#include "rail/gdx_post.h"
#include "wire/gdx_ctrl.h"
#include "wire/gdx_wire.h"

/* Largest message, maxP2pBytes: test reports a message's size in an int
 * (every API version), so INT_MAX bytes. 0.4.0 took 2 GiB, which test
 * reported as INT_MIN. */
#define GDX_MAX_MESSAGE ((unsigned long long)INT_MAX)

/* A send comm takes NCCL_NET_MAX_REQUESTS x maxRecvs requests (NCCL's rule). */
#define GDX_MAX_SEND_REQUESTS (GDX_MAX_REQUESTS * GDX_MAX_RECVS)
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
	struct gdx_wait wait;	       /* its segments not yet delivered, over all rails */
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
	/* Debug builds only (gdx_req.h): a send's buffer. */
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
	/* Its rails: one per NIC of the larger end's device, as net_ib makes
	 * max(local, remote) QPs (rail/gdx_chan.h). */
	int nmembers;
	struct gdx_chan ch;
	bool handed;	      /* given to NCCL: its NICs' summaries count it (gdx_setup.c) */
	bool ar;	      /* sender: adaptive routing on every rail */
	uint64_t remote_ctrl; /* the peer's control region */
#ifdef GDX_DEBUG
	bool dbg_records; /* both ends are debug builds: pieces carry records (gdx_req.h) */
#endif
	/* The peer's rails and QPs, to connect to again when a rail is restored. */
	struct gdx_wire_rail remote_rails[GDX_MAX_RAILS];
	uint32_t remote_qpn[GDX_MAX_QPS];
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
	/* Its live counters (gdx_live.h) are ch.live: a slot of the process's
	 * file, or live_own when there is none. */
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
	 * have read yet: its rail + 1 (0: none), that rail's generation, and
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
	int type;	   /* NCCL_PTR_HOST or NCCL_PTR_CUDA */
	uint8_t seg_flags; /* what its segments say of their bytes (gdx_mr_set_type) */
	bool gpu;	   /* type is NCCL_PTR_CUDA */
};

/* The channel told whose it is: its lines name the comm's device and peer
 * (the comm's strings), its errors go to the comm. */
static inline void gdx_comm_bind_chan(struct gdx_comm *c)
{
	c->ch.tag = GDX_CHAN_TAG;
	c->ch.err = &c->err;
	c->ch.name = c->dev_name;
	c->ch.peer = c->peer;
	c->ch.peer_dev = c->peer_dev;
}

/* What a segment of a buffer registered as mr says of its bytes: host
 * memory may go inline (rail/gdx_post.h). */
static inline uint8_t gdx_mr_seg_flags(const struct gdx_mr *mr)
{
	return mr->seg_flags;
}

/* A registration's memory type, and what follows from it for each send
 * (worked out once, not per message). */
static inline void gdx_mr_set_type(struct gdx_mr *mr, int type)
{
	mr->type = type;
	mr->seg_flags = type == NCCL_PTR_HOST ? GDX_SEG_HOST : 0;
	mr->gpu = type == NCCL_PTR_CUDA;
}

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

/* Debug builds (GDX_DEBUG, gdx_req.h): the ways a request's bytes went
 * (GDX_REQ_*, rail/gdx_post.h), and a send's buffer, which no WR may read
 * once it completes. */
static inline void gdx_req_mode(struct gdx_request *r, uint32_t mode)
{
	gdx_wait_mode(&r->wait, mode);
}
#ifdef GDX_DEBUG
static inline void gdx_req_buffer(struct gdx_request *r, const void *data, uint64_t size)
{
	r->dbg_buf = data;
	r->dbg_len = size;
}
#else
static inline void gdx_req_buffer(struct gdx_request *r, const void *data, uint64_t size)
{
	(void)r;
	(void)data;
	(void)size;
}
#endif

#endif
