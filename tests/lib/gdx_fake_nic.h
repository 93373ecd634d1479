/* SPDX-License-Identifier: MIT */
/*
 * Scripted verbs: a made-up NIC under the plugin's own send and receive
 * comms (libgdx.a), both in the test's process, so that a test decides when
 * each work request is carried out, in what order across QPs, and when a
 * QP's path fails. It does what an RC NIC does, one WR at a time:
 * - an RDMA WRITE copies its bytes into the peer's memory (inline bytes as
 *   they were when posted, others as they are when it runs), checked
 *   against the peer's registrations (else a remote access error);
 * - a WRITE_WITH_IMM then consumes a receive posted on the peer's QP and
 *   puts the immediate in the peer's CQ;
 * - an RDMA READ copies the peer's bytes into the local buffer, and an
 *   ATOMIC_FETCH_AND_ADD adds to the peer's 64-bit word, its old value into
 *   the local buffer (one-sided RMA's gets and signals);
 * - a signaled WR, once carried out, completes on its own CQ;
 * - a QP in error flushes whatever it holds and is posted: every WR
 *   completes, with an error, signaled or not, as the verbs spec says;
 * - a WR towards a QP in error, or reset and not yet at RTR again, is never
 *   answered: its retries run out (IBV_WC_RETRY_EXC_ERR).
 * It keeps, per QP, every WR in the order it was carried out, for tests
 * that check what crossed the wire. It fails the test (ASSERT) when the
 * plugin posts what a NIC would refuse: bytes outside a registration of
 * the key it names (the control region, which the peer writes, has no
 * local key: the plugin sends from its staging), more inline bytes than the
 * rail's maximum, more WRs on a QP than its depth.
 *
 * A program that includes this header links tests/lib/gdx_fake_nic.c
 * (the Makefile finds them), which replaces libibverbs' exported
 * ibv_modify_qp, ibv_query_port, ibv_query_port_speed, ibv_query_gid and the
 * async event calls for the whole program: the VM tests must not link it.
 * The unit tests link it, and so does the fuzzer tests/fuzz/ctrl.c, which
 * defines the two calls it makes into the harness (gdx_test_fail,
 * gdx_test_logger) itself.
 *
 * It also plays a list of mlx5 devices for discovery (gdx_devs_init():
 * ibv_get_device_list and the calls on what it opens) and libmlx5.so.1's
 * Data Direct calls (the plugin's gdx_mlx5dv_sym() seam), absent until a
 * test calls fake_mlx5_devices().
 */
#ifndef GDX_FAKE_NIC_H
#define GDX_FAKE_NIC_H

#include <stdbool.h>
#include <stdint.h>

#include "comm/gdx_comm.h"
#include "rma/gdx_rma_comm.h"

#define FAKE_MAX_RAILS 4
#define FAKE_MAX_QPS   4   /* per rail */
#define FAKE_SQ	       256 /* WRs a QP holds not yet carried out; more than any depth */
#define FAKE_RQ	       512
#define FAKE_CQ	       4096
#define FAKE_LOG       8192 /* WRs a QP remembers having carried out */

/* One WR as posted (and, once carried out, as the history keeps it). */
struct fake_wr {
	uint64_t wr_id;
	int opcode;   /* IBV_WR_RDMA_WRITE, _WITH_IMM, IBV_WR_RDMA_READ, _ATOMIC_FETCH_AND_ADD */
	uint64_t add; /* an atomic's */
	bool signaled;
	uint64_t laddr; /* 0: no bytes */
	uint32_t len;
	uint64_t raddr;
	uint32_t rkey;
	uint32_t imm;	/* host order */
	uint8_t *inl;	/* the bytes, copied when posted inline */
	uint64_t order; /* when it was posted, over the whole NIC */
	bool delivered; /* history: it reached the peer (its QP was not in error) */
};

struct fake_end;

struct fake_qp {
	struct ibv_qp qp; /* first: the plugin holds a pointer to it */
	struct fake_end *end;
	struct fake_qp *peer;
	int rail, q;
	bool error;
	bool reset; /* reset and not yet at RTR: what arrives is dropped, unanswered */
	int drop;   /* data WRITEs still to carry out without placing their bytes */
	uint32_t depth, max_inline; /* the plugin's rail's: it posts within them */
	uint32_t outstanding;	    /* posted since the last completion covered them */
	struct fake_wr sq[FAKE_SQ];
	unsigned sq_head, sq_tail;
	uint64_t rq[FAKE_RQ]; /* posted receives' wr_ids */
	unsigned rq_head, rq_tail;
	struct fake_wr *log; /* FAKE_LOG entries, carried out in this order */
	unsigned nlog;
};

struct fake_cq {
	struct ibv_wc wc[FAKE_CQ];
	unsigned head, tail;
};

/* One end: the plugin's comm and its made-up verbs objects. */
struct fake_end {
	struct gdx_comm *c;
	struct gdx_send_comm *sc; /* one of these two */
	struct gdx_recv_comm *rc;
	struct ibv_cq icq[FAKE_MAX_RAILS];
	struct fake_cq cq[FAKE_MAX_RAILS];
	struct fake_qp qp[FAKE_MAX_RAILS * FAKE_MAX_QPS];
	struct gdx_qp gqp[FAKE_MAX_RAILS * FAKE_MAX_QPS];
	struct ibv_mr ctrl_mr, stage_mr;
	int sock[2];
};

struct fake_opts {
	int nrails;   /* 1..FAKE_MAX_RAILS */
	int nqps;     /* per rail, 1..FAKE_MAX_QPS */
	bool ar;      /* adaptive routing on the sender's rails */
	bool split;   /* each piece of a rail over all its QPs */
	bool no_copy; /* WRITEs into data buffers move no bytes: buffers that
		       * are only address ranges (a 2 GiB message) */
	bool no_peer; /* the ends are not connected: the test plays the peer of
		       * each (fake_peer_write, fake_peer_imm, a fuzzer's input),
		       * and what either posts is carried out into nowhere */
};

/* A send comm and a receive comm connected rail to rail, QP to QP. */
struct fake_pair {
	struct fake_end s, r;
	struct fake_opts o;
};

/* Once per process, after the environment the plugin reads is set: the
 * parameters (NCCL_GDX_*) and the test logger (gdx_test_warnings()). */
void fake_init(void);
void fake_pair_make(struct fake_pair *p, const struct fake_opts *o);
void fake_pair_free(struct fake_pair *p);

/* A registration of [addr, addr + len) on every NIC of the pair's device,
 * for either end: host memory. */
void fake_mr(struct fake_pair *p, void *addr, uint64_t len, struct gdx_mr *mr);

/* Carries out up to n of the QP's WRs, oldest first; returns how many. */
int fake_run(struct fake_qp *q, int n);
/* Carries out everything both ends hold, a WR per QP in turn, until
 * nothing is left; returns how many. */
int fake_run_all(struct fake_pair *p);
/* The QP's next n WRITEs into a data buffer complete as if their bytes had
 * landed, and place none: a piece whose bytes went astray. */
void fake_drop_bytes(struct fake_qp *q, int n);
/* An RDMA WRITE the peer of `to` makes on its own, with the key it was
 * given for to's control region, as a NIC carries it out: the bytes land
 * only where that registration covers them. false: a remote access error,
 * nothing written. */
bool fake_peer_write(struct fake_end *to, uint64_t raddr, const void *src, uint32_t len);
/* A WRITE_WITH_IMM the peer of q makes on its own, as q's NIC takes it:
 * it consumes q's oldest posted receive, whose completion carries imm and
 * len. false: q holds no receive (or is in error or reset), nothing
 * arrives. */
bool fake_peer_imm(struct fake_qp *q, uint32_t imm, uint32_t len);
/* WRs the QP holds not yet carried out. */
unsigned fake_pending(const struct fake_qp *q);

/* The QP's path fails: its oldest WR completes with status (retry
 * exceeded, say), and the QP goes to error, flushing the rest. */
void fake_fail(struct fake_qp *q, enum ibv_wc_status status);

/* The next async event the plugin reads (ibv_get_async_event), for port. */
void fake_async_event(enum ibv_event_type type, int port);
/* What ibv_query_port_speed says from now on, in 100 Mb/s units; 0: the
 * library has no such call (EOPNOTSUPP). Ports report active_speed 0
 * (ibv_query_port), so without it a port's speed is unknown. */
void fake_port_speed(uint64_t units_of_100mbps);

/* The machine discovery sees (fake_mlx5_devices()): ndevs devices
 * "mlx5_0".., one active InfiniBand port each, guid 0x1000 + index. */
struct fake_mlx5 {
	int ndevs;	     /* 1..4 */
	bool no_lib;	     /* libmlx5.so.1 absent: the seam finds no symbol */
	bool not_mlx5;	     /* mlx5dv_is_supported says no (rxe, say) */
	bool no_dmabuf;	     /* DMA-BUF registration unsupported (EOPNOTSUPP) */
	const char *dd_path; /* mlx5dv_get_data_direct_sysfs_path's (below /sys);
			      * NULL: ENODEV, a device without Data Direct */
};
void fake_mlx5_devices(const struct fake_mlx5 *m);

/* DMA-BUF registrations the made-up devices took (fd >= 0; the fd -1
 * probes are not counted), by call, and the mlx5_access of the last
 * mlx5dv_reg_dmabuf_mr. */
struct fake_dmabuf_seen {
	int ibv_calls, mlx5dv_calls;
	int mlx5_access;
	int probes; /* fd -1 registrations, either call */
};
extern struct fake_dmabuf_seen fake_dmabuf_seen;

/* Whether a restore's thread (gdx_failover.c) works on a QP of either end:
 * a test carries out no WR meanwhile, as the thread owns the QPs. */
bool fake_restoring(const struct fake_pair *p);

/* QP q of rail r of an end. */
struct fake_qp *fake_qp_of(struct fake_end *e, int rail, int q);

/* The plugin's calls, failing the test on an error. */
struct gdx_request *fake_isend(struct fake_pair *p, void *data, uint64_t size, int tag,
			       struct gdx_mr *mr);
struct gdx_request *fake_irecv(struct fake_pair *p, void *data, uint64_t size, int tag,
			       struct gdx_mr *mr);
/* test once: 1 done (size in *size), 0 not yet. */
int fake_test(struct gdx_request *req, int *size);

/*
 * One-sided RMA over the made-up NIC: two ranks, each with one block of one
 * context whose connection to the other rank has the options' rails and
 * QPs, rank 0's QP (rail r, q) the peer of rank 1's; no connection to
 * itself. The plugin's RMA engine (gdx_rma_post.h, gdx_rma_progress.h)
 * drives them as it drives real ones.
 */
struct fake_rma_rank {
	struct fake_end e; /* the CQ of each rail's NIC, and the QPs */
	struct gdx_vdev v;
	struct gdx_rma_coll coll;
	struct gdx_rma_rank ranks[2];
	struct gdx_rma_ctx x;
	struct gdx_rma_cctx cctx;
	struct gdx_rma_conn *conns[2]; /* [peer]: the other rank's only */
	struct ibv_mr scratch_mr;
};

struct fake_rma {
	struct fake_rma_rank r[2];
	struct fake_opts o;
};

/* A window as regMrSym makes it: len bytes at mem[0] on rank 0 and mem[1]
 * on rank 1, each registered on its NICs (no_copy: address ranges only). */
struct fake_window {
	struct gdx_mr local[2];
	struct gdx_rma_mr_rank ranks[2][2];
	struct gdx_rma_mr mh[2]; /* rank i's handle */
};

void fake_rma_make(struct fake_rma *f, const struct fake_opts *o);
void fake_rma_free(struct fake_rma *f);
void fake_rma_window(struct fake_rma *f, void *mem0, void *mem1, uint64_t len,
		     struct fake_window *w);
/* Carries out everything both ranks' QPs hold, a WR per QP in turn, until
 * nothing is left; returns how many. */
int fake_rma_run_all(struct fake_rma *f);
/* QP q of rail r of rank's connection to the other. */
struct fake_qp *fake_rma_qp(struct fake_rma *f, int rank, int rail, int q);

#endif
