/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the control data a peer writes into a comm by RDMA,
 * which no socket or handshake check stands in front of: the clear-to-send
 * entries in a sender's FIFO, the size records and immediates a receiver
 * takes, the failover notes either end reads, and the completions the NIC
 * reports. A made-up send comm and receive comm of 1 or 2 rails (failover
 * and adaptive routing on or off) are driven through isend, irecv, test and
 * iflush while the input plays the peer and the NIC.
 *
 * The verbs objects are made up here too: ibv_post_send, ibv_post_recv and
 * ibv_poll_cq go through the context's ops, which this file provides, and
 * the exported calls the failover makes (modify and query, a QP's state)
 * are defined here, taking precedence over libibverbs' in this program. The fake NIC
 * checks every work request against what the plugin registered: it reads
 * only from the send buffer, the comm's control region or the flush byte,
 * and never has more outstanding on a QP than its depth.
 *
 *   make fuzz && build/tests/fuzz/ctrl -max_total_time=60 NEW_DIR tests/fuzz/corpus/ctrl
 *
 * Input: byte 0 the set-up (FUZZ_*), then operations of one byte each with
 * their arguments (see fuzz_run).
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "comm/gdx_comm.h"
#include "dev/gdx_dev.h"
#include "data/gdx_failover.h"
#include "data/gdx_flush.h"
#include "sys/gdx_log.h"
#include "data/gdx_p2p.h"
#include "sys/gdx_param.h"
#include "data/gdx_post.h"
#include "check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_TWO_RAILS 0x01 /* two rails (NICs) per comm */
#define FUZZ_FAILOVER  0x02 /* a failed rail is taken out (two rails only) */
#define FUZZ_AR	       0x04 /* adaptive routing on the sender */
#define FUZZ_QPS       0x08 /* two QPs per rail */
#define FUZZ_SPLIT     0x10 /* each message split over a rail's QPs */

#define FUZZ_OPS     64
#define FUZZ_BUF     (1u << 20) /* the send buffer, and each receive's */
#define FUZZ_CQ	     512
#define FUZZ_MAX_QPS 4

/* ---- the made-up NIC ---- */

struct fuzz_cq {
	struct ibv_wc wc[FUZZ_CQ];
	unsigned head, tail;
};

struct fuzz_qp {
	struct ibv_qp qp; /* first: the plugin holds a pointer to it */
	struct gdx_comm *c;
	int rail, q;
	uint32_t outstanding; /* posted and not yet completed */
	uint64_t posted;
	bool fail_next; /* the next signaled completion fails */
};

static struct ibv_context fuzz_ctx;
static struct gdx_ibctx fuzz_ib;
static struct gdx_dev fuzz_devs[2];
static struct ibv_pd fuzz_pd;
static struct ibv_mr fuzz_mr = {.lkey = 0x11, .rkey = 0x22};
static struct ibv_mr fuzz_stage_mr = {.lkey = 0x12};
static char *fuzz_sbuf, *fuzz_rbuf;

/* One comm under test with its made-up objects. */
struct fuzz_comm {
	struct gdx_comm *c;
	struct gdx_send_comm *sc;
	struct gdx_recv_comm *rc;
	struct fuzz_cq cq[GDX_MAX_RAILS];
	struct ibv_cq icq[GDX_MAX_RAILS];
	struct fuzz_qp qp[GDX_MAX_RAILS * FUZZ_MAX_QPS];
	struct gdx_qp gqp[GDX_MAX_RAILS * FUZZ_MAX_QPS];
	struct gdx_mr mr;
	int sock[2];
};

static struct fuzz_comm fuzz_s, fuzz_r;

static struct fuzz_cq *fuzz_cq_of(struct ibv_cq *cq)
{
	struct fuzz_comm *f = cq->cq_context;

	return &f->cq[cq - f->icq];
}

static void fuzz_cq_push(struct fuzz_cq *cq, const struct ibv_wc *wc)
{
	if (cq->tail - cq->head < FUZZ_CQ)
		cq->wc[cq->tail++ % FUZZ_CQ] = *wc;
}

/* Whether [addr, addr + len) lies inside what the plugin may read from. */
static bool fuzz_readable(const struct fuzz_qp *fq, uint64_t addr, uint32_t len)
{
	const struct gdx_comm *c = fq->c;
	uint64_t stage = (uintptr_t)c->stage, sbuf = (uintptr_t)fuzz_sbuf;

	/* every control write goes from the staging, never from what the
	 * peer writes */
	if (addr >= stage && addr + len <= stage + sizeof(*c->stage))
		return true;
	if (addr >= sbuf && addr + len <= sbuf + FUZZ_BUF)
		return true;
	/* a receive comm's flush reads land in its flush byte */
	return c->kind == GDX_KIND_RECV && gdx_recv_comm_of((struct gdx_comm *)c)->flush_byte &&
	       addr == (uintptr_t)gdx_recv_comm_of((struct gdx_comm *)c)->flush_byte && len == 1;
}

static int fuzz_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fuzz_qp *fq = (struct fuzz_qp *)qp;
	const struct gdx_rail *r = fq->c ? &fq->c->rails[fq->rail] : NULL;

	for (; wr; wr = wr->next) {
		FUZZ_CHECK(wr->num_sge >= 0 && wr->num_sge <= 1);
		if (wr->num_sge) {
			FUZZ_CHECK(wr->sg_list != NULL);
			/* inline bytes are copied now; the rest the NIC reads later:
			 * both from memory the plugin owns */
			FUZZ_CHECK(fuzz_readable(fq, wr->sg_list->addr, wr->sg_list->length));
			if (wr->send_flags & IBV_SEND_INLINE)
				FUZZ_CHECK(r && wr->sg_list->length <= r->max_inline);
		}
		FUZZ_CHECK(wr->opcode == IBV_WR_RDMA_WRITE ||
			   wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM ||
			   wr->opcode == IBV_WR_RDMA_READ);
		/* the queue never overflows its depth */
		FUZZ_CHECK(!r || fq->outstanding < r->sq_depth);
		fq->outstanding++;
		fq->posted++;
		if (wr->send_flags & IBV_SEND_SIGNALED) {
			struct ibv_wc wc = {.wr_id = wr->wr_id,
					    .status = fq->fail_next ? IBV_WC_RETRY_EXC_ERR
								    : IBV_WC_SUCCESS,
					    .opcode = IBV_WC_RDMA_WRITE,
					    .qp_num = qp->qp_num};

			fq->fail_next = false;
			fuzz_cq_push(fuzz_cq_of(qp->send_cq), &wc);
			fq->outstanding = 0; /* a signaled completion covers what came before */
		}
	}
	*bad = NULL;
	return 0;
}

static int fuzz_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	for (; wr; wr = wr->next)
		FUZZ_CHECK(wr->num_sge == 0);
	(void)qp;
	*bad = NULL;
	return 0;
}

static int fuzz_poll_cq(struct ibv_cq *icq, int n, struct ibv_wc *wc)
{
	struct fuzz_cq *cq = fuzz_cq_of(icq);
	int got = 0;

	while (got < n && cq->head != cq->tail)
		wc[got++] = cq->wc[cq->head++ % FUZZ_CQ];
	return got;
}

/* The exported calls the failover and the event poll make. */
int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	(void)qp;
	(void)attr;
	(void)mask;
	return 0;
}

/* A failure's line about each QP asks its state (gdx_qpstat_dump). */
int ibv_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init)
{
	(void)qp;
	(void)mask;
	(void)init;
	attr->qp_state = IBV_QPS_ERR;
	return 0;
}

/* in parentheses: verbs.h makes the name a macro */
int(ibv_query_port)(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *attr)
{
	(void)ctx;
	(void)port;
	memset(attr, 0, sizeof(struct ibv_port_attr));
	((struct ibv_port_attr *)attr)->state = IBV_PORT_ACTIVE;
	return 0;
}

int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	(void)ctx;
	(void)port;
	memset(gid, 0, sizeof(*gid));
	gid->raw[15] = (uint8_t)(index + 1);
	return 0;
}

int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
	(void)ctx;
	(void)ev;
	errno = EAGAIN;
	return -1;
}

void ibv_ack_async_event(struct ibv_async_event *ev)
{
	(void)ev;
}

int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
	(void)qp;
	(void)ece;
	return EOPNOTSUPP;
}

/* ---- the made-up comms ---- */

__attribute__((format(printf, 5, 6))) static void fuzz_logger(ncclDebugLogLevel level,
							      unsigned long flags, const char *file,
							      int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	(void)flags;
	va_start(ap, fmt);
	fuzz_log_format(msg, sizeof(msg), "FUZZ_CTRL_VERBOSE", level == NCCL_LOG_WARN, file, line,
			fmt, ap);
	va_end(ap);
}

static void fuzz_comm_make(struct fuzz_comm *f, bool send, uint8_t setup)
{
	int nrails = setup & FUZZ_TWO_RAILS ? 2 : 1, nqps = setup & FUZZ_QPS ? 2 : 1;
	struct gdx_comm *c;

	memset(f, 0, sizeof(*f));
	if (send) {
		f->sc = calloc(1, sizeof(*f->sc));
		c = &f->sc->base;
	} else {
		f->rc = calloc(1, sizeof(*f->rc));
		c = &f->rc->base;
	}
	FUZZ_CHECK(c != NULL);
	f->c = c;
	c->kind = send ? GDX_KIND_SEND : GDX_KIND_RECV;
	snprintf(c->dev_name, sizeof(c->dev_name), "fuzz%s", nrails == 2 ? "0+fuzz1" : "0");
	snprintf(c->peer, sizeof(c->peer), "198.51.100.1:1");
	c->nmembers = c->nrails = nrails;
	c->qps_per_rail = nqps;
	c->qps = f->gqp;
	c->max_inline = 64;
	c->ar = send && (setup & FUZZ_AR);
	c->split = send && (setup & FUZZ_SPLIT);
	c->tc = -1;
	c->live = &c->live_own;
	c->max_reqs = send ? GDX_MAX_SEND_REQUESTS : 2 * GDX_MAX_REQUESTS;
	c->reqs = calloc((size_t)c->max_reqs, sizeof(*c->reqs));
	FUZZ_CHECK(c->reqs != NULL);
	for (int i = 0; i < c->max_reqs; i++)
		c->reqs[i].comm = c;
	FUZZ_CHECK(posix_memalign((void **)&c->ctrl, 4096, sizeof(*c->ctrl)) == 0);
	memset(c->ctrl, 0, sizeof(*c->ctrl));
	FUZZ_CHECK(posix_memalign((void **)&c->stage, 4096, sizeof(*c->stage)) == 0);
	memset(c->stage, 0, sizeof(*c->stage));
	c->remote_ctrl = 0x100000;
	FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f->sock) == 0);
	c->sock = f->sock[0]; /* the peer's end stays open: it is alive */
	for (int r = 0; r < nrails; r++) {
		struct gdx_rail *rail = &c->rails[r];

		f->icq[r].context = &fuzz_ctx;
		f->icq[r].cq_context = f;
		rail->dev = &fuzz_devs[r];
		rail->member = r;
		rail->pd = &fuzz_pd;
		rail->cq = &f->icq[r];
		rail->nqps = nqps;
		rail->qps = &f->gqp[r * nqps];
		rail->max_inline = 64;
		rail->sq_depth = send ? GDX_SEND_SQ : GDX_RECV_SQ;
		rail->rq_depth = send ? 0 : gdx_recvs_ahead(nrails);
		c->ctrl_mr[r] = &fuzz_mr;
		c->stage_mr[r] = &fuzz_stage_mr;
		c->remote_ctrl_rkey[r] = 0x33;
		for (int q = 0; q < nqps; q++) {
			struct fuzz_qp *fq = &f->qp[r * nqps + q];

			fq->qp.context = &fuzz_ctx;
			fq->qp.qp_num = (uint32_t)(0x100 * (send ? 1 : 2) + r * nqps + q);
			fq->qp.send_cq = fq->qp.recv_cq = &f->icq[r];
			fq->qp.qp_context = c;
			fq->c = c;
			fq->rail = r;
			fq->q = q;
			rail->qps[q].qp = &fq->qp;
		}
	}
	gdx_failover_init(c);
	if (send)
		for (int i = 0; i < nrails * nqps; i++)
			FUZZ_CHECK(gdx_seglog_create(&c->qps[i]) == 0);
	else
		FUZZ_CHECK(gdx_recv_comm_start(f->rc) == 0);
	/* the buffers NCCL registered, on every NIC */
	f->mr = (struct gdx_mr){.kind = GDX_KIND_MR,
				.nmembers = nrails,
				.addr = (uintptr_t)(send ? fuzz_sbuf : fuzz_rbuf),
				.size = send ? FUZZ_BUF : (uint64_t)FUZZ_BUF * GDX_MAX_RECVS,
				.type = NCCL_PTR_HOST};
	for (int r = 0; r < nrails; r++)
		f->mr.lkey[r] = f->mr.rkey[r] = 0x44 + (uint32_t)r;
}

static void fuzz_comm_free(struct fuzz_comm *f)
{
	struct gdx_comm *c = f->c;

	gdx_failover_fini(c);
	if (f->rc)
		gdx_flush_destroy(f->rc);
	for (int i = 0; i < c->nrails * c->qps_per_rail; i++)
		gdx_seglog_destroy(&c->qps[i]);
	close(f->sock[0]);
	close(f->sock[1]);
	free(c->ctrl);
	free(c->stage);
	free(c->reqs);
	free(f->sc);
	free(f->rc);
}

/* ---- the operations ---- */

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static uint32_t fuzz_take(struct fuzz_in *in, int bytes)
{
	uint32_t v = 0;

	for (int i = 0; i < bytes; i++) {
		v = v << 8 | (in->n ? *in->p : 0);
		if (in->n) {
			in->p++;
			in->n--;
		}
	}
	return v;
}

static void fuzz_take_bytes(struct fuzz_in *in, void *out, size_t len)
{
	size_t k = len < in->n ? len : in->n;

	memset(out, 0, len);
	memcpy(out, in->p, k);
	in->p += k;
	in->n -= k;
}

/* Requests in flight on each side, oldest first. */
static struct gdx_request *fuzz_sreq[64], *fuzz_rreq[64];
static int fuzz_ns, fuzz_nr;
static uint64_t fuzz_rposted[64][GDX_MAX_RECVS];
static int fuzz_rn[64];

static void fuzz_test(struct gdx_request **reqs, int *n, bool recv)
{
	int done = 0, sizes[GDX_MAX_RECVS], ret;
	struct gdx_request *req;

	if (!*n)
		return;
	req = reqs[0];
	memset(sizes, 0xff, sizeof(sizes));
	ret = gdx_test(req, &done, sizes);
	if (!ret && !done)
		return;
	if (!ret && recv)
		/* a receive completes with what fits what was posted */
		for (int i = 0; i < fuzz_rn[0]; i++) {
			if (getenv("FUZZ_CTRL_VERBOSE"))
				fprintf(stderr, "receive done: buffer %d of %d: %d bytes of %llu\n",
					i, fuzz_rn[0], sizes[i],
					(unsigned long long)fuzz_rposted[0][i]);
			FUZZ_CHECK(sizes[i] >= 0 && (uint64_t)sizes[i] <= fuzz_rposted[0][i]);
		}
	/* done or failed: the request is the plugin's again */
	memmove(reqs, reqs + 1, (size_t)(*n - 1) * sizeof(*reqs));
	if (recv) {
		memmove(fuzz_rposted, fuzz_rposted + 1, (size_t)(*n - 1) * sizeof(fuzz_rposted[0]));
		memmove(fuzz_rn, fuzz_rn + 1, (size_t)(*n - 1) * sizeof(fuzz_rn[0]));
	}
	(*n)--;
}

static void fuzz_run(struct fuzz_in *in)
{
	for (int op = 0; op < FUZZ_OPS && in->n; op++) {
		switch (fuzz_take(in, 1) % 10) {
		case 0: { /* the peer writes a clear-to-send entry into the FIFO */
			uint32_t at = fuzz_take(in, 2) % GDX_FIFO_ENTRIES;

			fuzz_take_bytes(in, &fuzz_s.c->ctrl->fifo[at], sizeof(struct gdx_cts));
			break;
		}
		case 1: { /* NCCL sends */
			uint32_t size = fuzz_take(in, 3) % (FUZZ_BUF + 1), off = fuzz_take(in, 2);
			int tag = (int)fuzz_take(in, 1);
			struct gdx_request *req = NULL;

			off %= FUZZ_BUF - size + 1;
			if (fuzz_ns < 64 &&
			    gdx_isend(fuzz_s.sc, fuzz_sbuf + off, size, tag, &fuzz_s.mr, NULL,
				      &req) == 0 &&
			    req)
				fuzz_sreq[fuzz_ns++] = req;
			break;
		}
		case 2: fuzz_test(fuzz_sreq, &fuzz_ns, false); break;
		case 3: { /* NCCL receives into n buffers */
			int n = 1 + (int)(fuzz_take(in, 1) % GDX_MAX_RECVS);
			void *data[GDX_MAX_RECVS];
			uint64_t sizes[GDX_MAX_RECVS];
			int tags[GDX_MAX_RECVS];
			struct gdx_mr *mrs[GDX_MAX_RECVS];
			struct gdx_request *req = NULL;

			for (int i = 0; i < n; i++) {
				data[i] = fuzz_rbuf + (size_t)i * FUZZ_BUF;
				sizes[i] = fuzz_take(in, 3) % (FUZZ_BUF + 1);
				tags[i] = (int)fuzz_take(in, 1);
				mrs[i] = &fuzz_r.mr;
			}
			if (fuzz_nr < 64 &&
			    gdx_irecv(fuzz_r.rc, n, data, sizes, tags, mrs, NULL, &req) == 0 &&
			    req) {
				memcpy(fuzz_rposted[fuzz_nr], sizes, sizeof(sizes));
				fuzz_rn[fuzz_nr] = n;
				fuzz_rreq[fuzz_nr++] = req;
			}
			break;
		}
		case 4: fuzz_test(fuzz_rreq, &fuzz_nr, true); break;
		case 5: { /* an immediate (or a failed receive) arrives on the receiver */
			uint32_t imm = fuzz_take(in, 4), where = fuzz_take(in, 1);
			int rail = (int)(where % (uint32_t)fuzz_r.c->nrails);
			int q = (int)((where >> 4) % (uint32_t)fuzz_r.c->qps_per_rail);
			struct ibv_wc wc = {
				.wr_id = GDX_WRID(GDX_WRID_RECV,
						  gdx_rail_gen(&fuzz_r.c->rails[rail]), q, 0),
				.status = (where & 0x08) ? IBV_WC_WR_FLUSH_ERR : IBV_WC_SUCCESS,
				.opcode = IBV_WC_RECV_RDMA_WITH_IMM,
				.imm_data = htobe32(imm),
				.wc_flags = IBV_WC_WITH_IMM};

			fuzz_cq_push(&fuzz_r.cq[rail], &wc);
			break;
		}
		case 6: { /* the receiver's peer writes anywhere it may (gdx_ctrl_span):
			   * a slot's size record most often, else any bytes of it */
			uint32_t s = fuzz_take(in, 1) % GDX_MAX_REQUESTS, at = fuzz_take(in, 3);
			size_t off, len;

			gdx_ctrl_span(GDX_KIND_RECV, &off, &len);
			if (s & 1) {
				fuzz_take_bytes(in, fuzz_r.c->ctrl->sizes[s],
						sizeof(fuzz_r.c->ctrl->sizes[s]));
				break;
			}
			at %= (uint32_t)len;
			fuzz_take_bytes(in, (char *)fuzz_r.c->ctrl + off + at,
					len - at < 64 ? len - at : 64);
			break;
		}
		case 7: { /* the peer writes a failover note, whole or not */
			struct fuzz_comm *f = fuzz_take(in, 1) & 1 ? &fuzz_s : &fuzz_r;
			uint32_t r = fuzz_take(in, 1);
			struct gdx_note *n = &f->c->ctrl->notes_in[r % GDX_MAX_RAILS];

			fuzz_take_bytes(in, n, sizeof(*n));
			if (r & 0x80)
				n->stamp = n->epoch; /* whole, as a real write leaves it */
			break;
		}
		case 8: { /* the NIC fails the next signaled completion of a QP */
			struct fuzz_comm *f = fuzz_take(in, 1) & 1 ? &fuzz_s : &fuzz_r;
			uint32_t k =
				fuzz_take(in, 1) % (uint32_t)(f->c->nrails * f->c->qps_per_rail);

			f->qp[k].fail_next = true;
			break;
		}
		default: { /* NCCL flushes the oldest receive */
			void *data[1] = {fuzz_rbuf};
			int sizes[1] = {(int)(fuzz_take(in, 2) + 1)};
			struct gdx_mr *mrs[1] = {&fuzz_r.mr};
			struct gdx_request *req = NULL;
			int done = 0;

			if (gdx_iflush(fuzz_r.rc, 1, data, sizes, mrs, &req) == 0 && req)
				for (int i = 0; i < 4 && !done; i++)
					if (gdx_test(req, &done, NULL))
						break;
			break;
		}
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t setup = (uint8_t)fuzz_take(&in, 1);

	if (!(setup & FUZZ_TWO_RAILS))
		setup &= (uint8_t)~FUZZ_FAILOVER;
	gdx_params.failover = !!(setup & FUZZ_FAILOVER);
	fuzz_devs[0].ar = fuzz_devs[1].ar = setup & FUZZ_AR;
	fuzz_comm_make(&fuzz_s, true, setup);
	fuzz_comm_make(&fuzz_r, false, setup);
	fuzz_ns = fuzz_nr = 0;
	fuzz_run(&in);
	/* closing with requests in flight, as a job that aborts does */
	fuzz_comm_free(&fuzz_s);
	fuzz_comm_free(&fuzz_r);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	gdx_log_set(fuzz_logger);
	/* failover's restores would wait for the peer forever: none here */
	setenv("NCCL_GDX_RECOVERY_MAX_MS", "0", 1);
	FUZZ_CHECK(gdx_params_load() == 0);
	fuzz_ctx.ops.post_send = fuzz_post_send;
	fuzz_ctx.ops.post_recv = fuzz_post_recv;
	fuzz_ctx.ops.poll_cq = fuzz_poll_cq;
	fuzz_ib.ctx = &fuzz_ctx;
	fuzz_ib.pd = &fuzz_pd;
	pthread_mutex_init(&fuzz_ib.lock, NULL);
	for (int i = 0; i < 2; i++) {
		struct gdx_dev *d = &fuzz_devs[i];

		snprintf(d->name, sizeof(d->name), "fuzz%d", i);
		snprintf(d->ibdev, sizeof(d->ibdev), "fuzz%d", i);
		d->ib_port = d->port = 1;
		d->link_layer = IBV_LINK_LAYER_INFINIBAND;
		d->active_mtu = IBV_MTU_4096;
		d->max_msg_sz = 1u << 31;
		d->speed_mbps = 100000;
		d->ptr_support = NCCL_PTR_HOST;
		d->rail_id = d->plane_id = -1;
		d->gid_auto_index = -1;
		d->ib = &fuzz_ib;
	}
	fuzz_pd.context = &fuzz_ctx;
	fuzz_sbuf = calloc(1, FUZZ_BUF);
	fuzz_rbuf = calloc(GDX_MAX_RECVS, FUZZ_BUF);
	FUZZ_CHECK(fuzz_sbuf && fuzz_rbuf);
	return 0;
}
