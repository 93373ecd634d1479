/* SPDX-License-Identifier: MIT */
/*
 * The core objects behind NCCL's opaque pointers: listen, send and receive
 * comms, requests and memory handles, shared by the files that make and use
 * them (gdx_conn.c, gdx_p2p.c, gdx_flush.c, gdx_reg.c, gdx_event.c; each
 * declares its functions in its own header). One comm is only ever driven by
 * one thread at a time (NCCL's contract), so the data path takes no lock.
 */
#ifndef GDX_COMM_H
#define GDX_COMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <nccl/net_common.h>
#include <gdx/gdx_regcache.h>
#include <gdx/gdx_sock.h>
#include <gdx/gdx_verbs.h>
#include <gdx/gdx_wire.h>

#define GDX_MAX_REQUESTS NCCL_NET_MAX_REQUESTS
/* A send comm takes NCCL_NET_MAX_REQUESTS x maxRecvs requests (NCCL's rule). */
#define GDX_MAX_SEND_REQUESTS (GDX_MAX_REQUESTS * GDX_MAX_RECVS)
/* FIFO entries: one slot of GDX_MAX_RECVS entries per receive in flight. */
#define GDX_FIFO_ENTRIES (GDX_MAX_REQUESTS * GDX_MAX_RECVS)
/* The FIFO is stored entry-major: entry i of slot s at GDX_FIFO_INDEX(s, i).
 * The first entries of consecutive slots are then adjacent, and one RDMA
 * WRITE of a packet or less carries a batch of single-buffer clear-to-sends. */
#define GDX_FIFO_INDEX(s, i)	((uint32_t)(i)*GDX_MAX_REQUESTS + (uint32_t)(s))
#define GDX_MAX_PENDING_ACCEPTS 64

/*
 * Queue depths, from what a comm has in flight. A send comm's send queue
 * takes a WR per isend and a group's sizes write per receive (a message
 * larger than the port's max_msg_sz takes a WR per piece): sends wait for
 * room, so the depth bounds only how many are in flight at once. A receive
 * comm's send queue carries only clear-to-send writes, which wait for room
 * too; its receive queue, one WR per immediate that can be on its way on a
 * rail (one per receive) plus a repost batch. A send comm receives nothing.
 */
#define GDX_SIGNAL_EVERY 16
#define GDX_RECV_BATCH	 16
/* Providers round a queue up to a power of two slots, one kept empty: 127
 * takes 128. NCCL's proxy keeps at most NCCL_STEPS (8) sends of a rank in
 * flight, and PXN shares a send comm among at most 8 local ranks: 64 data
 * WRs, their groups' 8 sizes writes, and the unsignaled ones not yet given
 * back fit; more (a driver with 256 grouped sends in flight) wait for room. */
#define GDX_SEND_SQ	127
#define GDX_RECV_SQ	63
#define GDX_RECVS_AHEAD (GDX_MAX_REQUESTS + GDX_RECV_BATCH)

/* The registered control area of a comm: the FIFO (a sender's, which the
 * receiver RDMA-writes; a receiver's staging, which it writes from) and the
 * grouped receives' sizes ([slot][buffer], written by the sender into the
 * receiver's). One region, one registration per NIC of the device. */
struct gdx_ctrl {
	struct gdx_cts fifo[GDX_FIFO_ENTRIES];
	uint32_t sizes[GDX_MAX_REQUESTS][GDX_MAX_RECVS];
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
	uint16_t wrs[GDX_MAX_RAILS];   /* send: queue slots held on each rail */
	bool gpu;		       /* GPU memory: counted as GPU-direct bytes */
	bool flush;		       /* an iflush: completes on the flush QPs */
	uint64_t seq;		       /* receive: its clear-to-send's sequence number */
};

/* wr_id of a signaled work request that belongs to no request in flight (a
 * clear-to-send, a refusal, an inline send already reported done): its
 * completion frees the send queue slots of n WRs, its own and the unsignaled
 * ones before it. Request pointers are aligned, so bit 0 tells them apart. */
#define GDX_WRID_SLOTS(n)     (((uint64_t)(n) << 8) | 1)
#define GDX_WRID_IS_SLOTS(id) ((id)&1)
#define GDX_WRID_SLOTS_N(id)  ((uint32_t)((id) >> 8))

/* Base of the send and receive comms. */
struct gdx_comm {
	uint32_t kind;
	int dev_index;
	struct gdx_ctx *ctx; /* owner, or NULL */
	int tc;		     /* NCCL's traffic class for the connection; -1 none */
	/* One QP (rail) per NIC of the larger end's device, as net_ib makes
	 * max(local, remote) QPs: rails[i] is on this end's NIC i % nmembers. */
	int nmembers;
	int nrails;
	struct gdx_rail rails[GDX_MAX_RAILS];
	int sock;			/* out-of-band socket, kept open as the liveness signal */
	int err;			/* sticky: once set, every call fails with it */
	uint32_t idle_polls;		/* polls without progress */
	uint64_t last_check_ms;		/* last look at the peer's out-of-band socket */
	uint32_t next_req;		/* where the search for a free request starts */
	uint64_t bytes_gpu, bytes_host; /* moved by completed requests, by memory */
	int max_reqs; /* 2 x GDX_MAX_REQUESTS (flushes too), GDX_MAX_SEND_REQUESTS to send */
	int active;   /* requests in flight */
	struct gdx_request *reqs; /* max_reqs */
	struct gdx_ctrl *ctrl;
	struct ibv_mr *ctrl_mr[GDX_MAX_RAILS]; /* per NIC of the device */
	char peer[64];			       /* peer's out-of-band address, for messages */
	char peer_dev[GDX_DEV_NAME_MAX];
};

/* A send comm's FIFO is base.ctrl->fifo, a group's sizes go out from
 * base.ctrl->sizes. */
struct gdx_send_comm {
	struct gdx_comm base;
	uint64_t remote_sizes;			   /* the receiver's ctrl->sizes */
	uint32_t remote_sizes_rkey[GDX_MAX_RAILS]; /* per rail */
	uint64_t head;				   /* sequence number of the slot being matched */
	/* The head slot's entries matched by an isend so far (grouped receives
	 * are sent once every entry has its isend). */
	struct gdx_request *matched[GDX_MAX_RECVS];
	void *matched_data[GDX_MAX_RECVS];
	struct gdx_mr *matched_mr[GDX_MAX_RECVS];
	int nmatched;
};

/* Receives whose immediates are still due on one rail, in posting order:
 * one entry per receive in flight (a group ends with one immediate). */
struct gdx_expect_ring {
	struct gdx_request *reqs[GDX_MAX_REQUESTS];
	uint32_t head, tail;
};

/* A receive comm stages its clear-to-sends in base.ctrl->fifo, laid out as
 * the sender's FIFO, and takes grouped receives' sizes in base.ctrl->sizes. */
struct gdx_recv_comm {
	struct gdx_comm base;
	uint64_t remote_fifo;
	uint32_t remote_fifo_rkey;
	uint64_t tail;		  /* sequence number of the next receive */
	uint64_t cts_sent;	  /* receives before this one have their clear-to-send out */
	uint32_t cts_outstanding; /* of those, receives the sender has not filled yet */
	bool cts_stalled;	  /* a flush stopped for want of send queue room */
	bool cts_flushing;	  /* in gdx_cts_flush(), which may poll */
	uint32_t recvs_to_post[GDX_MAX_RAILS];
	struct gdx_expect_ring expect[GDX_MAX_RAILS];
	int recvs_active; /* receives in flight: NCCL allows 32 (flushes aside) */
	/* GPU flush: a QP per NIC connected to itself, and a byte to read into;
	 * made when GPU memory is first registered on the comm (gdx_flush.h). */
	int nflush;
	struct gdx_rail flush[GDX_MAX_RAILS];
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

/* One incoming out-of-band connection being handshaken (gdx_conn.c). */
struct gdx_accept;

struct gdx_listen_comm {
	uint32_t kind;
	int dev_index;
	struct gdx_ctx *ctx; /* owner, or NULL; receive comms inherit it */
	int fd;
	uint64_t nonce;
	bool accept_warned; /* accept(2) failed for another reason than none waiting */
	int npending;
	struct gdx_accept *pending[GDX_MAX_PENDING_ACCEPTS];
};

/* The receive comm behind a comm known to be one (kind GDX_KIND_RECV). */
static inline struct gdx_recv_comm *gdx_recv_comm_of(struct gdx_comm *c)
{
	return (struct gdx_recv_comm *)((char *)c - offsetof(struct gdx_recv_comm, base));
}

#endif
