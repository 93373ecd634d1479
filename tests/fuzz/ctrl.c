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
 * The verbs are the unit tests' made-up NIC (tests/lib/gdx_fake_nic.h),
 * its two ends not connected (no_peer): the input writes what the peer
 * would, through the registration the peer was given, and what the comms
 * post is carried out into nowhere after each operation. The NIC checks
 * every work request against what the plugin registered (its bytes come
 * from the send buffer or the comm's staging, never from what the peer
 * writes) and that no QP is given more than its depth.
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
#include "data/gdx_flush.h"
#include "data/gdx_p2p.h"
#include "sys/gdx_param.h"
#include "check.h"
#include "gdx_fake_nic.h"
#include "gdx_plugin_loader.h"
#include "gdx_test.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_TWO_RAILS 0x01 /* two rails (NICs) per comm */
#define FUZZ_FAILOVER  0x02 /* a failed rail is taken out (two rails only) */
#define FUZZ_AR	       0x04 /* adaptive routing on the sender */
#define FUZZ_QPS       0x08 /* two QPs per rail */
#define FUZZ_SPLIT     0x10 /* each message split over a rail's QPs */

#define FUZZ_OPS 64
#define FUZZ_BUF (1u << 20) /* the send buffer, and each receive's */

static struct fake_pair fuzz_p;
static struct gdx_mr fuzz_smr, fuzz_rmr;
static char *fuzz_sbuf, *fuzz_rbuf;

/* What the made-up NIC (tests/lib/gdx_fake_nic.c) calls of the unit tests'
 * harness, as a fuzzer needs it: a failed check aborts, so that libFuzzer
 * keeps the input, and the plugin's lines are formatted (every logged value
 * goes through vsnprintf) and printed under FUZZ_CTRL_VERBOSE. */
void gdx_test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

__attribute__((format(printf, 5, 6))) void gdx_test_logger(ncclDebugLogLevel level,
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

/* The peer writes len bytes of the input at `at` in e's control region, as
 * its NIC would: only where e's registration for it lets it (every place
 * the operations below name is one). */
static void fuzz_peer_write(struct fuzz_in *in, struct fake_end *e, void *at, size_t len)
{
	uint8_t bytes[1024];

	FUZZ_CHECK(len <= sizeof(bytes));
	fuzz_take_bytes(in, bytes, len);
	FUZZ_CHECK(fake_peer_write(e, (uintptr_t)at, bytes, (uint32_t)len));
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

			fuzz_peer_write(in, &fuzz_p.s, &fuzz_p.s.c->ctrl->fifo[at],
					sizeof(struct gdx_cts));
			break;
		}
		case 1: { /* NCCL sends */
			uint32_t size = fuzz_take(in, 3) % (FUZZ_BUF + 1), off = fuzz_take(in, 2);
			int tag = (int)fuzz_take(in, 1);
			struct gdx_request *req = NULL;

			off %= FUZZ_BUF - size + 1;
			if (fuzz_ns < 64 &&
			    gdx_isend(fuzz_p.s.sc, fuzz_sbuf + off, size, tag, &fuzz_smr, NULL,
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
				mrs[i] = &fuzz_rmr;
			}
			if (fuzz_nr < 64 &&
			    gdx_irecv(fuzz_p.r.rc, n, data, sizes, tags, mrs, NULL, &req) == 0 &&
			    req) {
				memcpy(fuzz_rposted[fuzz_nr], sizes, sizeof(sizes));
				fuzz_rn[fuzz_nr] = n;
				fuzz_rreq[fuzz_nr++] = req;
			}
			break;
		}
		case 4: fuzz_test(fuzz_rreq, &fuzz_nr, true); break;
		case 5: { /* an immediate arrives on the receiver, or its QP fails */
			uint32_t imm = fuzz_take(in, 4), where = fuzz_take(in, 1);
			int rail = (int)(where % (uint32_t)fuzz_p.r.c->ch.nrails);
			int q = (int)((where >> 4) % (uint32_t)fuzz_p.r.c->ch.qps_per_rail);
			struct fake_qp *fq = fake_qp_of(&fuzz_p.r, rail, q);

			if (where & 0x08)
				fake_fail(fq, IBV_WC_RETRY_EXC_ERR);
			else
				fake_peer_imm(fq, imm, 0);
			break;
		}
		case 6: { /* the receiver's peer writes anywhere it may (gdx_ctrl_span):
			   * a slot's size record most often, else any bytes of it */
			uint32_t s = fuzz_take(in, 1) % GDX_MAX_REQUESTS, at = fuzz_take(in, 3);
			size_t off, len;

			gdx_ctrl_span(GDX_KIND_RECV, &off, &len);
			if (s & 1) {
				fuzz_peer_write(in, &fuzz_p.r, fuzz_p.r.c->ctrl->sizes[s],
						sizeof(fuzz_p.r.c->ctrl->sizes[s]));
				break;
			}
			at %= (uint32_t)len;
			fuzz_peer_write(in, &fuzz_p.r, (char *)fuzz_p.r.c->ctrl + off + at,
					len - at < 64 ? len - at : 64);
			break;
		}
		case 7: { /* the peer writes a failover note, whole or not */
			struct fake_end *e = fuzz_take(in, 1) & 1 ? &fuzz_p.s : &fuzz_p.r;
			uint32_t r = fuzz_take(in, 1);
			struct gdx_note *n = &e->c->ctrl->notes_in[r % GDX_MAX_RAILS];

			fuzz_peer_write(in, e, n, sizeof(*n));
			if (r & 0x80) { /* whole, as a real write leaves it */
				struct gdx_note whole = *n;

				whole.stamp = whole.epoch;
				FUZZ_CHECK(fake_peer_write(e, (uintptr_t)n, &whole, sizeof(whole)));
			}
			break;
		}
		case 8: { /* a QP's path fails: its retries run out */
			struct fake_end *e = fuzz_take(in, 1) & 1 ? &fuzz_p.s : &fuzz_p.r;
			uint32_t k = fuzz_take(in, 1) %
				     (uint32_t)(e->c->ch.nrails * e->c->ch.qps_per_rail);

			fake_fail(&e->qp[k], IBV_WC_RETRY_EXC_ERR);
			break;
		}
		default: { /* NCCL flushes the oldest receive */
			void *data[1] = {fuzz_rbuf};
			int sizes[1] = {(int)(fuzz_take(in, 2) + 1)};
			struct gdx_mr *mrs[1] = {&fuzz_rmr};
			struct gdx_request *req = NULL;
			int done = 0;

			if (gdx_iflush(fuzz_p.r.rc, 1, data, sizes, mrs, &req) == 0 && req)
				for (int i = 0; i < 4 && !done; i++)
					if (gdx_test(req, &done, NULL))
						break;
			break;
		}
		}
		/* the NIC carries out what was posted, into nowhere: a
		 * signaled WR completes (unless the restore's thread owns the
		 * QPs) */
		if (!fake_restoring(&fuzz_p))
			fake_run_all(&fuzz_p);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t setup = (uint8_t)fuzz_take(&in, 1);
	struct fake_opts o = {.nrails = setup & FUZZ_TWO_RAILS ? 2 : 1,
			      .nqps = setup & FUZZ_QPS ? 2 : 1,
			      .ar = setup & FUZZ_AR,
			      .split = setup & FUZZ_SPLIT,
			      .no_peer = true};

	if (!(setup & FUZZ_TWO_RAILS))
		setup &= (uint8_t)~FUZZ_FAILOVER;
	gdx_params.failover = !!(setup & FUZZ_FAILOVER);
	fake_pair_make(&fuzz_p, &o);
	/* the buffers NCCL registered, on every NIC */
	fake_mr(&fuzz_p, fuzz_sbuf, FUZZ_BUF, &fuzz_smr);
	fake_mr(&fuzz_p, fuzz_rbuf, (uint64_t)FUZZ_BUF * GDX_MAX_RECVS, &fuzz_rmr);
	fuzz_ns = fuzz_nr = 0;
	fuzz_run(&in);
	/* closing with requests in flight, as a job that aborts does */
	fake_pair_free(&fuzz_p);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* failover's restores would wait for the peer forever: none here */
	setenv("NCCL_GDX_RECOVERY_MAX_MS", "0", 1);
	fake_init();
	fuzz_sbuf = calloc(1, FUZZ_BUF);
	fuzz_rbuf = calloc(GDX_MAX_RECVS, FUZZ_BUF);
	FUZZ_CHECK(fuzz_sbuf && fuzz_rbuf);
	return 0;
}
