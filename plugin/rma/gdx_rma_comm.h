/* SPDX-License-Identifier: MIT */
/*
 * One-sided RMA's objects behind NCCL's opaque pointers (the RMA tables,
 * gdx_rma_tables.c): a listen comm, a collective comm over a group of
 * ranks, blocks of contexts with one connection per (context, peer), the
 * requests of each connection and its work requests, and symmetric memory
 * handles. Shared by the files that make and use them (gdx_rma*.c), each
 * of which declares its functions in its own header.
 *
 * A connection is RC QPs to one peer for one context: one rail per NIC of
 * the larger end's device (rail i on this end's NIC i % its NICs and the
 * peer's NIC i % its NICs, as the two-sided path makes them), each with
 * the same number of QPs. Both ends of a pair use one QP pair: rank A's QP
 * (context c, peer B, rail r, q) is connected to B's (c, A, r, q); a rank's
 * connection to itself is a QP connected to itself.
 *
 * Work requests are kept in a pool per connection and, while not
 * complete, in a FIFO per QP in the order they go to the NIC, so that a
 * signal can see which puts it covers are still outstanding on which QP,
 * and a rail that fails can hand its work to the others (gdx_rma_progress.c).
 * Every work request is signaled: each completion gives back one entry.
 *
 * Threads: NCCL drives a context's data calls from one thread at a time;
 * registration (regMrSym) may run on another thread while data calls run,
 * so the collective comm's registries take its lock.
 */
#ifndef GDX_RMA_COMM_H
#define GDX_RMA_COMM_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"
#include <gdx/gdx_live_layout.h>
#include "comm/gdx_ptrset.h"
#include "rail/gdx_chan.h"

/* First word of every object the RMA tables hand to NCCL. */
enum gdx_rma_kind {
	GDX_KIND_RMA_INIT = 0x52494e49,	  /* "RINI": what init returns */
	GDX_KIND_RMA_LISTEN = 0x524c5354, /* "RLST" */
	GDX_KIND_RMA_COLL = 0x52434f4c,	  /* "RCOL" */
	GDX_KIND_RMA_CTX = 0x52435458,	  /* "RCTX": a block of contexts */
	GDX_KIND_RMA_MR = 0x524d5248,	  /* "RMRH": a symmetric memory handle */
	GDX_KIND_RMA_REQ = 0x52524551,	  /* "RREQ": a request in flight */
};

/* Requests of one connection: NCCL keeps NCCL_NET_MAX_REQUESTS x maxRecvs
 * (1, what getProperties says) in flight per peer and context; flushes and
 * room for a burst come on top. */
#define GDX_RMA_MAX_REQS 64
/* Work requests of one connection not yet complete, over all its QPs: a
 * request waits (in the connection's backlog, in order) until there is
 * room for all of its own. */
#define GDX_RMA_CONN_WRS 512
/* A work request moves at most this much (or the device's max_msg_sz);
 * a request takes as many as its size needs (maxP2pBytes bounds it). */
#define GDX_RMA_PIECE_MAX (1ULL << 30)
#define GDX_RMA_MAX_BYTES (16ULL << 30)
/* QPs of one connection over all its rails (a 64-bit mask of them). */
#define GDX_RMA_MAX_QPS 64
/* Send queue of each QP: every work request is signaled, and a QP never
 * holds more than the connection's pool. */
#define GDX_RMA_SQ 255
/* RDMA READs and atomics in flight each way on a QP (the device may allow
 * fewer). */
#define GDX_RMA_RD_ATOMIC 16
/* No entry, in the 16-bit links below. */
#define GDX_RMA_NIL 0xffffu

/* What a request does. */
enum gdx_rma_op {
	GDX_RMA_PUT = 1,    /* RDMA WRITE */
	GDX_RMA_PUT_SIGNAL, /* RDMA WRITE, then an atomic add once its puts are placed */
	GDX_RMA_GET,	    /* RDMA READ */
	GDX_RMA_FLUSH,	    /* RDMA READ through the connection to itself */
};

/* What one work request does. */
enum gdx_rma_wr_op {
	GDX_RMA_WR_WRITE = 1,
	GDX_RMA_WR_READ,
	GDX_RMA_WR_ATOMIC, /* fetch-and-add on the signal word */
	GDX_RMA_WR_FLUSH,  /* an 8-byte READ of the local window */
};

/* A work request of a connection, from when its request is expanded until
 * its completion (or its rail's failure moves it to another QP). */
struct gdx_rma_wr {
	uint16_t req;  /* its request in the connection's pool */
	uint16_t next; /* in its QP's FIFO, or in the free list */
	uint8_t qp;    /* the connection's QP index (rail * qps_per_rail + q) */
	uint8_t op;    /* enum gdx_rma_wr_op */
	uint8_t gen;   /* in the wr_id: a completion of an older use is dropped */
	bool posted;   /* given to the NIC (on qp) */
	uint32_t len;
	uint64_t off; /* bytes from the start of the request's data */
};

struct gdx_rma_mr;
struct gdx_rma_conn;
struct gdx_rma_ctx;

struct gdx_rma_req {
	uint32_t kind;	/* GDX_KIND_RMA_REQ while in flight, GDX_KIND_DEAD when free */
	uint8_t op;	/* enum gdx_rma_op */
	bool strong;	/* a strong signal */
	bool expanded;	/* its work requests are made (not in the backlog) */
	bool released;	/* its signal's atomic is made */
	bool abandoned; /* test returned its error while work was out: freed once back */
	int err;	/* its first error: test returns it */
	uint16_t index;
	uint16_t next;	  /* in the signal FIFO, or the free list */
	uint16_t bl_next; /* in the backlog */
	uint32_t pending; /* work requests made and not complete, + 1 for a signal not
			   * released */
	uint64_t tick;	  /* issue order on the connection */
	uint64_t size;
	struct gdx_rma_conn *conn;
	struct gdx_rma_mr *lmh; /* the local window: put's source, get's destination */
	uint64_t loff;
	struct gdx_rma_mr *rmh; /* the peer's window: put's destination, get's source */
	uint64_t roff;
	struct gdx_rma_mr *smh; /* signal: the peer's window holding the word */
	uint64_t soff;
	uint64_t add;
	uint64_t issued_ms;
};

/* Where a QP of a connection stands. */
struct gdx_rma_qp {
	uint16_t head, tail; /* FIFO of its work requests not complete, oldest first */
	uint16_t unposted;   /* the first of them not yet given to the NIC */
	uint32_t posted;     /* given to the NIC and not yet complete */
	uint64_t since_ms;   /* posted: when it last moved (a completion, or work
			      * given to an idle QP); the watchdog's clock */
};

struct gdx_rma_conn {
	struct gdx_rma_ctx *ctx;
	int context, peer;
	/* its rails (rail/gdx_chan.h): ch.qps is qp_store; a rail taken out
	 * after a failure stays out (DOWN) */
	struct gdx_chan ch;
	int nqps;
	int nlocal, nremote; /* NICs of this end's device and of the peer's */
	struct gdx_qp qp_store[GDX_RMA_MAX_QPS];
	/* the channel's names for its lines (gdx_stall.c): this end and the peer */
	char name[64], peer_name[40];
	struct gdx_rma_qp qs[GDX_RMA_MAX_QPS];
	uint32_t unflushed_told; /* connection to itself: NICs whose flush read is
				  * no longer possible, said once each */
	int home;		 /* the QP small puts and signals take: rail 0's first, or
				  * the first of the first rail still in */
	int err;		 /* sticky: every request fails with it */
	uint64_t tick;
	int active;	  /* requests in flight */
	bool held;	  /* work made and not given to the NIC (the aggregate hint) */
	bool busy_linked; /* in its context's busy list */
	struct gdx_rma_conn *busy_next, *busy_prev;
	uint16_t free_req, free_wr;
	int nfree_wrs;
	uint16_t sig_head, sig_tail; /* signals not yet released, in issue order */
	uint16_t bl_head, bl_tail;   /* requests waiting for work-request room */
	struct gdx_rma_req reqs[GDX_RMA_MAX_REQS];
	struct gdx_rma_wr wrs[GDX_RMA_CONN_WRS];
};

/* One context of a block: a CQ per NIC of the device, shared by the QPs of
 * every connection of the context on that NIC, and the connections with
 * work still to do. */
struct gdx_rma_cctx {
	struct ibv_cq *cq[GDX_MAX_RAILS];
	struct gdx_rma_conn *busy;
	uint64_t last_tick_ms; /* the watchdogs' last round (gdx_rma_tick) */
};

/* A block of contexts (createContext). */
struct gdx_rma_ctx {
	uint32_t kind;
	struct gdx_rma_coll *coll;
	int ncontexts, stride, tc;
	struct gdx_rma_cctx *cctx;   /* [context] */
	struct gdx_rma_conn **conns; /* [context * nranks + peer], NULL: not connected */
	uint64_t *scratch;	     /* atomics' fetched values and flush reads land here */
	struct ibv_mr *scratch_mr[GDX_MAX_RAILS];
	bool has_error; /* a request failed: queryLastError says so */
	bool error_told;
	char error[640];
	struct gdx_rma_ctx *next; /* the collective comm's list */
};

/* What connect learned of each rank of the group. */
struct gdx_rma_rank {
	uint32_t nmembers;   /* NICs of its device */
	uint32_t qps;	     /* its QPs per rail wish */
	uint32_t link_layer; /* IBV_LINK_LAYER_* of its NICs */
	char dev[GDX_DEV_NAME_MAX];
	char addr[64]; /* its out-of-band address */
};

/* The out-of-band ring the group's collective calls run over. */
struct gdx_rma_boot {
	int nranks, rank;
	int next_fd, prev_fd; /* -1 with one rank */
	char next_addr[64], prev_addr[64];
};

struct gdx_rma_init {
	uint32_t kind;
	uint64_t comm_id;
};

struct gdx_rma_listen {
	uint32_t kind;
	struct gdx_rma_init *owner;
	int dev;
	int fd;
	uint64_t nonce;
	char addr[64];
};

struct gdx_rma_coll {
	uint32_t kind;
	struct gdx_rma_init *owner;
	int dev;
	const struct gdx_vdev *v;
	int nranks, rank;
	int qps; /* QPs per rail of every connection: the largest wish */
	struct gdx_rma_boot boot;
	struct gdx_rma_rank *ranks;
	pthread_mutex_t lock; /* the registries below */
	struct gdx_ptrset mrs;
	struct gdx_ptrset reqs; /* requests handed to NCCL, not yet done or failed in test */
	struct gdx_rma_ctx *ctxs;
	int nctxs;
	struct gdx_live_comm *live;
	struct gdx_live_comm live_own;
};

/* A symmetric window: this rank's registration, and every rank's base,
 * size and keys (sizes may differ between ranks). */
struct gdx_rma_mr_rank {
	uint64_t base, size;
	uint32_t nmembers;
	uint32_t rkey[GDX_MAX_RAILS];
};

struct gdx_rma_mr {
	uint32_t kind;
	uint32_t inflight; /* requests that name it and are not freed yet: it is
			    * not deregistered while any is (gdx_rma_req_hold) */
	struct gdx_rma_coll *coll;
	struct gdx_mr *local;
	int type;
	bool strict;
	struct gdx_rma_mr_rank *ranks; /* [nranks] */
};

/* A request names its windows (held: +1) or lets them go (-1), so that a
 * window is never freed under a request still in flight. */
static inline void gdx_rma_req_hold(struct gdx_rma_req *r, int delta)
{
	struct gdx_rma_mr *w[3] = {r->lmh, r->rmh, r->smh};

	for (int i = 0; i < 3; i++)
		if (w[i] && (i == 0 || w[i] != w[0]) && (i < 2 || w[i] != w[1]))
			__atomic_add_fetch(&w[i]->inflight, (uint32_t)delta, __ATOMIC_RELAXED);
}

/* The largest errno a rank's status word may carry: Linux's are below it. */
#define GDX_RMA_ERRNO_MAX 4095

/* A rank's status word from an exchange (0, or the errno its part failed
 * with) as 0 or a negative errno, in unsigned arithmetic: the word is the
 * peer's to choose, and one no errno could be (0x80000000, whose negation
 * as an int overflows) is -EPROTO. */
static inline int gdx_rma_peer_status(uint32_t st)
{
	return st <= GDX_RMA_ERRNO_MAX ? -(int)st : -EPROTO;
}

/* wr_id of an RMA work request: the peer, the entry and its use. The CQ
 * names the context. */
#define GDX_RMA_WRID(peer, wr, gen) ((uint64_t)(uint32_t)(peer) << 32 | (uint64_t)(wr) << 8 | (gen))
#define GDX_RMA_WRID_PEER(id)	    ((int)((id) >> 32))
#define GDX_RMA_WRID_WR(id)	    ((uint16_t)((id) >> 8))
#define GDX_RMA_WRID_GEN(id)	    ((uint8_t)(id))

/* The connection of a block to a peer for a context, NULL when none. */
static inline struct gdx_rma_conn *gdx_rma_conn_of(const struct gdx_rma_ctx *x, int context,
						   int peer)
{
	return x->conns[(size_t)context * (size_t)x->coll->nranks + (size_t)peer];
}

#endif
